/**
 * The one thrown form of a failure. Inside the library a failure travels as a thrown
 * {@link FailureError} (or as the Left of an Either where a caller branches on it); only the
 * public edges convert: src/api throws `VbaError`, src/fp.ts returns TaskEither, the CLI maps the
 * code to an exit status. {@link toFailure} turns anything caught back into a coded failure.
 */
import type { Either } from 'fp-ts/lib/Either.js'
import { failure, isFailure, type Failure, type FailureCode } from './failure.js'

/** A coded failure, thrown. */
export class FailureError extends Error {
  constructor(readonly failure: Failure) {
    super(failure.message)
  }
}

/**
 * Throws the failure `code` (a function, so it fits in an expression). Typed explicitly so that
 * the compiler knows nothing runs after a call (`if (bad) fail(…)` narrows like a `throw`).
 */
export const fail: (code: FailureCode, message: string, data?: Readonly<Record<string, unknown>>) => never = (
  code,
  message,
  data = {}
) => {
  throw new FailureError(failure(code, message, data))
}

/** Maps a thrown value to a failure: coded failures pass through, errno errors become IO_ERROR, anything else INTERNAL_ERROR. */
export const toFailure = (e: unknown, context: string): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = e as { code?: unknown; syscall?: unknown } | null
  if (err !== null && typeof err === 'object' && typeof err.code === 'string') {
    return failure('IO_ERROR', `${context}: ${err.code}`, {
      errno: err.code,
      syscall: typeof err.syscall === 'string' ? err.syscall : null
    })
  }
  return failure('INTERNAL_ERROR', `${context}: ${e instanceof Error ? e.message : String(e)}`)
}

/**
 * A value caught at an edge (the client, the CLI, an MCP answer, a served page): a coded failure
 * as it is, anything else as the bug it is (INTERNAL_ERROR with its message, no context added).
 */
export const thrownFailure = (e: unknown): Failure => {
  if (e instanceof FailureError) return e.failure
  if (isFailure(e)) return e
  return failure('INTERNAL_ERROR', e instanceof Error ? e.message : String(e))
}

/**
 * Runs `body`, rethrowing whatever it throws as a coded failure ({@link toFailure} with `context`):
 * the boundary of an operation that touches the world, so callers see IO_ERROR, not a raw errno.
 */
export const coded = async <A>(context: string, body: () => A | Promise<A>): Promise<A> => {
  try {
    return await body()
  } catch (e) {
    if (e instanceof FailureError) throw e
    throw new FailureError(toFailure(e, context))
  }
}

/** The Right of `r`, or its Left thrown as a {@link FailureError} (where an Either meets throwing code). */
export const must = <A>(r: Either<Failure, A>): A => {
  if (r._tag === 'Left') throw new FailureError(r.left)
  return r.right
}

/** Settles `work` as an Either of its coded failure (for a caller that branches on the failure). */
export const attempt = async <A>(work: Promise<A>, context = 'internal'): Promise<Either<Failure, A>> => {
  try {
    return { _tag: 'Right', right: await work }
  } catch (e) {
    return { _tag: 'Left', left: toFailure(e, context) }
  }
}
