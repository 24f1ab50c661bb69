/**
 * Errors are values. Every failure a user can cause is a plain, JSON-serialisable record with a
 * stable `code` (one of {@link FailureCode}) a CLI or a controller can act on, a one-line
 * `message` for people, and structured `data`. Nothing here carries a stack trace, a credential
 * or a host path the user did not give.
 */
import type { FailureCode } from './codes.js'

export type { FailureCode, FailureKind } from './codes.js'
export { FAILURE_CODES, failureKind, isFailureCode } from './codes.js'

/** A coded failure. `_tag` is always `'Failure'`; switch on `code`. @category Errors */
export interface Failure<C extends FailureCode = FailureCode> {
  readonly _tag: 'Failure'
  readonly code: C
  readonly message: string
  readonly data: Readonly<Record<string, unknown>>
}

/** Builds a failure. `data` must be plain JSON; never put secrets into it. @category Errors */
export const failure = <C extends FailureCode>(
  code: C,
  message: string,
  data: Readonly<Record<string, unknown>> = {}
): Failure<C> => ({ _tag: 'Failure', code, message, data })

/** True for values built by {@link failure}. @category Errors */
export const isFailure = (u: unknown): u is Failure =>
  typeof u === 'object' &&
  u !== null &&
  (u as { _tag?: unknown })._tag === 'Failure' &&
  typeof (u as { code?: unknown }).code === 'string'
