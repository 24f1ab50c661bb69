/**
 * Errors are values. Every failure a user can cause is a plain, JSON-serialisable record with a
 * stable `code` a CLI or a controller can act on, a one-line `message` for people, and structured
 * `data`. Nothing here carries a stack trace, a credential or a host path the user did not give.
 */

/** A coded failure; `_tag` mirrors `code` in PascalCase so `switch` on either is exhaustive. */
export interface Failure<C extends string = string> {
  readonly _tag: 'Failure'
  readonly code: C
  readonly message: string
  readonly data: Readonly<Record<string, unknown>>
}

/** Builds a failure. `data` must be plain JSON; never put secrets into it. */
export const failure = <C extends string>(
  code: C,
  message: string,
  data: Readonly<Record<string, unknown>> = {}
): Failure<C> => ({ _tag: 'Failure', code, message, data })

/** True for values built by {@link failure}. */
export const isFailure = (u: unknown): u is Failure =>
  typeof u === 'object' && u !== null && (u as { _tag?: unknown })._tag === 'Failure' &&
  typeof (u as { code?: unknown }).code === 'string'

