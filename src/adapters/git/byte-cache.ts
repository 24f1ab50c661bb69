/**
 * A least-recently-used cache within a budget of bytes, for the pack reader's resolved objects
 * and the snapshot's blobs: `get` makes an entry the most recently used, `remember` keeps a value
 * (one over a quarter of the budget is not kept) and drops the least recently used until the rest
 * fit the budget. A value is counted at the size it had when it was remembered.
 */
export interface ByteCache<V> {
  /** The value, now the most recently used; undefined when not kept. */
  readonly get: (key: string) => V | undefined
  /** Keeps the value (true), or does not because it is over a quarter of the budget (false). */
  readonly remember: (key: string, value: V) => boolean
  /** Drops the value of `key`, if kept. */
  readonly forget: (key: string) => void
  readonly clear: () => void
}

/** `dropped` is told of every value that leaves the cache (dropped for room, replaced, or cleared). */
export const byteCache = <V>(
  budget: number,
  sizeOf: (value: V) => number,
  dropped?: (value: V) => void
): ByteCache<V> => {
  // Each value with the size it was counted at (a pooled buffer's size may change while kept).
  const kept = new Map<string, readonly [V, number]>()
  let cached = 0
  const drop = (key: string, entry: readonly [V, number]): void => {
    kept.delete(key)
    cached -= entry[1]
    dropped?.(entry[0])
  }
  return {
    get: (key) => {
      const hit = kept.get(key)
      if (hit === undefined) return undefined
      kept.delete(key)
      kept.set(key, hit)
      return hit[0]
    },
    remember: (key, value) => {
      const size = sizeOf(value)
      if (size > budget / 4) return false
      const old = kept.get(key)
      if (old !== undefined) drop(key, old)
      kept.set(key, [value, size])
      cached += size
      while (cached > budget) {
        const [first, entry] = kept.entries().next().value as [string, readonly [V, number]]
        drop(first, entry)
      }
      return true
    },
    forget: (key) => {
      const entry = kept.get(key)
      if (entry !== undefined) drop(key, entry)
    },
    clear: () => {
      const entries = [...kept.values()]
      kept.clear()
      cached = 0
      if (dropped !== undefined) for (const [value] of entries) dropped(value)
    }
  }
}
