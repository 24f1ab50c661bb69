/**
 * A least-recently-used cache within a budget of bytes, for the pack reader's resolved objects
 * and the snapshot's blobs: `get` makes an entry the most recently used, `remember` keeps a value
 * (one over a quarter of the budget is not kept) and drops the least recently used until the rest
 * fit the budget.
 */
export interface ByteCache<V> {
  /** The value, now the most recently used; undefined when not kept. */
  readonly get: (key: string) => V | undefined
  readonly remember: (key: string, value: V) => void
  readonly clear: () => void
}

export const byteCache = <V>(budget: number, sizeOf: (value: V) => number): ByteCache<V> => {
  const kept = new Map<string, V>()
  let cached = 0
  const drop = (key: string, value: V): void => {
    kept.delete(key)
    cached -= sizeOf(value)
  }
  return {
    get: (key) => {
      const hit = kept.get(key)
      if (hit !== undefined) {
        kept.delete(key)
        kept.set(key, hit)
      }
      return hit
    },
    remember: (key, value) => {
      const size = sizeOf(value)
      if (size > budget / 4) return
      const old = kept.get(key)
      if (old !== undefined) drop(key, old)
      kept.set(key, value)
      cached += size
      while (cached > budget) {
        const [first, v] = kept.entries().next().value as [string, V]
        drop(first, v)
      }
    },
    clear: () => {
      kept.clear()
      cached = 0
    }
  }
}
