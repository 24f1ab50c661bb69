/**
 * The trigram filters of a snapshot index build, bit-sliced as they are derived (index-format.ts:
 * filters.dat and folded.dat). Each blob's filters are set in byte maps (trigram-kernel.ts), and each
 * map goes straight into its slot of a column of its class: column c of a class holds, for each of
 * its 2 ** log rows, the byte of slots 8c to 8c + 7 (16 rows a step). Once every blob is in, each
 * class's rows are its columns transposed (a byte of each column per row). So no blob's filter is
 * ever written out, read back or sliced bit by bit; the columns take as much memory as the two
 * files (about 1/8 of a bit per byte of the stored blobs each).
 */
import { FREE, MAPS, MAX_LOG, kernelInstance } from './trigram-kernel.js'

export interface FilterSlicer {
  /** Derives both filters of `bytes` (2 ** `log` bits each) into the next slot of their class. */
  readonly add: (bytes: Uint8Array, log: number) => void
  /**
   * The rows of both files, class by class (classes by size, as filterClasses orders them): the
   * class's rows in filters.dat and in folded.dat, views of memory the next class reuses.
   */
  readonly regions: () => Generator<readonly [Uint8Array, Uint8Array]>
}

/** Blobs of up to `largest` bytes. */
export const filterSlicer = (largest: number): FilterSlicer => {
  const k = kernelInstance()
  // The blob being filtered (the kernel reads up to 6 bytes past it), then the columns.
  const blob = FREE
  let top = blob + Math.ceil((largest + 16) / 65536) * 65536
  // Growing the memory detaches its buffer: done once now, before the code that uses it runs hot (V8
  // discards optimized code that assumed no buffer of the thread was ever detached).
  k.reserve(top)
  /** Per class (by log): slots taken, and each column's address (the exact one; the folded one follows it). */
  const classes = new Map<number, { count: number; readonly columns: number[] }>()
  return {
    add: (bytes, log) => {
      if (!(log >= 4 && log <= MAX_LOG)) throw new RangeError(`a filter of 2 ** ${log} bits`)
      if (bytes.length > largest) throw new RangeError(`a blob of ${bytes.length} bytes, over ${largest}`)
      const rows = 1 << log
      const c = classes.get(log) ?? { count: 0, columns: [] }
      classes.set(log, c)
      const slot = c.count++
      if ((slot & 7) === 0) {
        // New memory holds zeros.
        c.columns.push(top)
        top += 2 * rows
        k.reserve(top)
      }
      const column = c.columns[slot >>> 3] ?? 0
      if (bytes.length >= 3) {
        k.heap().set(bytes, blob)
        k.mark(blob, bytes.length, 32 - log)
      }
      k.gather(MAPS[0], column, 1 << (slot & 7), rows)
      k.gather(MAPS[1], column + rows, 1 << (slot & 7), rows)
    },
    regions: function* () {
      for (const log of [...classes.keys()].sort((a, b) => a - b)) {
        const { columns } = classes.get(log) as { readonly columns: number[] }
        const rows = 1 << log
        const count = columns.length
        const bytes = rows * count
        const table = top
        const out = table + 8 * count
        k.reserve(out + 2 * bytes)
        const heap = k.heap()
        const addresses = new Int32Array(heap.buffer, table, 2 * count)
        columns.forEach((a, i) => {
          addresses[i] = a
          addresses[count + i] = a + rows
        })
        k.transpose(table, count, rows, out)
        k.transpose(table + 4 * count, count, rows, out + bytes)
        yield [heap.subarray(out, out + bytes), heap.subarray(out + bytes, out + 2 * bytes)] as const
      }
    }
  }
}
