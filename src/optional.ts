/**
 * Optional members under `exactOptionalPropertyTypes`: an option that is not given is absent from
 * an object, never present as `undefined` (which a codec, a strict reader or the canonical encoding
 * would see). Each helper is `...optional('x', x)` in one call.
 */

/**
 * `{ [key]: value }`, or `{}` when `value` is undefined.
 *
 * @example
 * advance(at, { model, ...optional('maxTurns', o.maxTurns) })
 */
export const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/**
 * The members of `from` named in `keys` whose value is not undefined.
 *
 * @example
 * work({ store, model, ...definedMembers(o, 'concurrency', 'leaseMs', 'signal') })
 */
export const definedMembers = <T extends object, K extends keyof T & string>(
  from: T,
  ...keys: readonly K[]
): { [P in K]?: Exclude<T[P], undefined> } => {
  const out: Partial<Record<K, unknown>> = {}
  for (const k of keys) if (from[k] !== undefined) out[k] = from[k]
  return out as { [P in K]?: Exclude<T[P], undefined> }
}
