/**
 * Buffers of the pack reader's objects, reused. A snapshot index build of the AzerothCore core
 * inflates ~126 MB of objects and builds ~273 MB of delta results, and V8 starts a garbage
 * collection for about every 64 MB of new buffers it is told of ("external memory pressure"): a
 * dozen full collections in one build. Here a buffer whose object nobody holds any more (it left
 * the reader's cache, or it was a delta or a base used once) goes back to a free list of its size
 * class and holds a later object of that class.
 *
 * Holds: `alloc` returns a buffer held once (by whoever asked for it); `hold` and `release` count
 * the holders (the reader's cache, the object handed out last by readUnchecked, a delta's base
 * while it is applied). A buffer handed out for keeping (ObjectReader.read) `escape`s: the pool
 * forgets it and never reuses it. The counts live in a WeakMap, so a buffer an error path forgot
 * to release is collected as any other.
 */

/** Buffers under this size come from Buffer.allocUnsafe (Node's shared slabs) and are not pooled. */
const MIN = 1024
/** Free buffers kept at most, in bytes of capacity. */
const FREE_BUDGET = 24 << 20

export interface BufferPool {
  /** `n` bytes, a view of a pooled buffer of at least that capacity, held once. */
  readonly alloc: (n: number) => Buffer
  /** One more holder of the buffer of `b` (none for a buffer the pool does not track). */
  readonly hold: (b: Uint8Array) => void
  /** One holder less; with none left the buffer goes back to its free list. */
  readonly release: (b: Uint8Array) => void
  /** The buffer of `b` leaves the pool for good: it was handed out to be kept. */
  readonly escape: (b: Uint8Array) => void
  /** The bytes that `b` keeps in memory: its pooled buffer's capacity, else its length. */
  readonly sizeOf: (b: Uint8Array) => number
  /** Drops the free lists. */
  readonly clear: () => void
}

/** Size classes of four steps per power of two (at most a quarter of a buffer unused): [index, capacity]. */
const classOf = (n: number): readonly [number, number] => {
  const k = 31 - Math.clz32(n - 1)
  // 2 ** k without V8's pow (a call for a variable exponent): n - 1 < 2 ** 32, so k <= 31.
  const power = (1 << k) >>> 0
  const step = power / 4
  const j = Math.ceil((n - power) / step)
  return [k * 4 + j, power + j * step]
}

export const bufferPool = (): BufferPool => {
  const holds = new WeakMap<ArrayBuffer, number>()
  const free = new Map<number, ArrayBuffer[]>()
  let freeBytes = 0
  const tracked = (b: Uint8Array): ArrayBuffer | undefined => {
    const ab = b.buffer as ArrayBuffer
    return holds.has(ab) ? ab : undefined
  }
  return {
    alloc: (n) => {
      if (n < MIN) return Buffer.allocUnsafe(n)
      const [index, capacity] = classOf(n)
      // A free buffer of its class or of the next three (at most about twice the bytes asked for).
      let ab: ArrayBuffer | undefined
      for (let c = index; c < index + 4 && ab === undefined; c++) ab = free.get(c)?.pop()
      if (ab === undefined) ab = Buffer.allocUnsafeSlow(capacity).buffer as ArrayBuffer
      else freeBytes -= ab.byteLength
      holds.set(ab, 1)
      return Buffer.from(ab, 0, n)
    },
    hold: (b) => {
      const ab = tracked(b)
      if (ab !== undefined) holds.set(ab, (holds.get(ab) ?? 0) + 1)
    },
    release: (b) => {
      const ab = tracked(b)
      if (ab === undefined) return
      const left = (holds.get(ab) ?? 0) - 1
      if (left > 0) {
        holds.set(ab, left)
        return
      }
      holds.delete(ab)
      if (freeBytes + ab.byteLength > FREE_BUDGET) return
      const index = classOf(ab.byteLength)[0]
      const list = free.get(index)
      if (list === undefined) free.set(index, [ab])
      else list.push(ab)
      freeBytes += ab.byteLength
    },
    escape: (b) => {
      const ab = tracked(b)
      if (ab !== undefined) holds.delete(ab)
    },
    sizeOf: (b) => {
      const ab = tracked(b)
      return ab === undefined ? b.length : ab.byteLength
    },
    clear: () => {
      free.clear()
      freeBytes = 0
    }
  }
}
