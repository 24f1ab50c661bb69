/**
 * The one error class of the public API. Every call of the client either resolves or rejects with
 * a {@link VbaError}: its `code` is a literal union of every failure code, `data` is plain JSON,
 * and `retryable` / `unavailable` / `permanent` / `corrupt` say what to do about it.
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
