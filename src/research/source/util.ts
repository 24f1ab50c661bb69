/** Small helpers of the source executors. */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../../failures/failure.js'
import { FailureError } from '../../failures/error.js'

export const orThrow = <A>(e: E.Either<Failure, A>): A => {
  if (E.isLeft(e)) throw new FailureError(e.left)
  return e.right
}
