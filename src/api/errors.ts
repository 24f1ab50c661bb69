/**
 * The one error class of the public API. Every call of the client either resolves or rejects with
 * a {@link VbaError} (or with the caller's own error, unchanged, when one of its callbacks threw
 * it): its `code` is a literal union of every failure code, `data` is plain JSON, and `retryable`
 * / `unavailable` / `permanent` / `corrupt` say what to do about it.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failureKind, type Failure, type FailureCode, type FailureKind } from '../failures/failure.js'
import { thrownFailure } from '../failures/error.js'

export type { FailureCode, FailureKind } from '../failures/failure.js'

/**
 * A failure of a library call.
 *
 * @example
 * try {
 *   await vba.investigations.advance(dir, { model })
 * } catch (e) {
 *   if (e instanceof VbaError && e.retryable) await later()
 *   else throw e
 * }
 * @category Errors
 */
export class VbaError extends Error {
  override readonly name = 'VbaError'
  /** What went wrong, as a stable code (see {@link FailureCode}). */
  readonly code: FailureCode
  /** Structured details (plain JSON; never a credential). */
  readonly data: Readonly<Record<string, unknown>>
  /** What kind of failure this is (see {@link FailureKind}). */
  readonly kind: FailureKind

  constructor(failure: Failure) {
    super(failure.message)
    this.code = failure.code
    this.data = failure.data
    this.kind = failureKind(failure.code)
  }

  /** The same call may succeed soon (another writer, a moved case, a retry time not passed). */
  get retryable(): boolean {
    return this.kind === 'retryable'
  }

  /** A provider or the environment cannot be used now (database, repository, model, disk). */
  get unavailable(): boolean {
    return this.kind === 'unavailable'
  }

  /** Retrying the same call gives the same answer (bad input, or the case's state forbids it). */
  get permanent(): boolean {
    return this.kind === 'permanent'
  }

  /** The case does not verify: do not write to it. */
  get corrupt(): boolean {
    return this.kind === 'corrupt'
  }

  /** The failure as plain JSON (`{code, message, kind, data}`). */
  toJSON(): { code: FailureCode; message: string; kind: FailureKind; data: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, kind: this.kind, data: this.data }
  }
}

/** True for errors thrown by the client. @category Errors */
export const isVbaError = (e: unknown): e is VbaError => e instanceof VbaError

/** Resolves with the Right, rejects with a VbaError for the Left. */
export const orThrow = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) throw new VbaError(r.left)
  return r.right
}

/** Wraps one of the caller's callbacks so that what it throws is noticed (undefined stays undefined). */
export type Own = <F extends (...args: never[]) => unknown>(callback: F | undefined) => F | undefined

/**
 * Runs library code that calls the caller's own callbacks (`onStep`, `onProgress`), each wrapped
 * with `own`: when a callback throws, the call rejects with that very error, unchanged (it is the
 * caller's, not the library's: no VbaError, its own stack and class), whatever the library made of
 * it on the way out, even had it carried on. Otherwise as {@link settle}.
 */
export const settleOwn = async <A>(work: (own: Own) => Promise<A>): Promise<A> => {
  // What the first callback threw (a list: the compiler does not follow assignments in closures).
  const threw: Array<{ readonly error: unknown }> = []
  const own: Own = (callback) =>
    callback === undefined
      ? undefined
      : (((...args: Parameters<typeof callback>) => {
          try {
            return callback(...args)
          } catch (e) {
            if (threw.length === 0) threw.push({ error: e })
            throw e
          }
        }) as typeof callback)
  let result: A
  try {
    result = await work(own)
  } catch (e) {
    const first = threw[0]
    if (first !== undefined) throw first.error
    throw e instanceof VbaError ? e : new VbaError(thrownFailure(e))
  }
  const first = threw[0]
  if (first !== undefined) throw first.error
  return result
}

/**
 * Runs library code (which throws coded failures, see docs/architecture.md "Errors"): a coded failure
 * rejects as a VbaError with its code; anything else is a bug and rejects as INTERNAL_ERROR.
 */
export const settle = async <A>(work: () => Promise<A>): Promise<A> => {
  try {
    return await work()
  } catch (e) {
    throw e instanceof VbaError ? e : new VbaError(thrownFailure(e))
  }
}
