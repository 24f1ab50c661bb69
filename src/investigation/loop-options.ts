/** Checks of the loop's options that every entry (the client, the worker, the CLI) shares. */
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'

/** Most model turns one call may run. */
export const MAX_TURNS_LIMIT = 10_000

/** Model turns one call runs when it does not say (`advance`, a worker's claim, `vba investigate`). */
export const DEFAULT_MAX_TURNS = 20

/** `maxTurns` is a whole number from 1 to 10 000 (0, negatives, fractions and NaN are refused). */
export const checkMaxTurns = (n: number): number => {
  if (!Number.isSafeInteger(n) || n < 1 || n > MAX_TURNS_LIMIT) {
    throw new FailureError(
      failure('INVALID_ARGUMENT', `maxTurns takes a whole number from 1 to ${MAX_TURNS_LIMIT} (got ${String(n)})`, {
        max_turns: String(n)
      })
    )
  }
  return n
}
