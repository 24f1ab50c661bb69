/**
 * Reading the trigram filters of an open snapshot index (format: index-format.ts): filters.dat and
 * folded.dat, each through a window of whole chunks of FILTER_CHUNK bytes, every chunk checked
 * against its SHA-256 in index.json when it is first loaded (so an open reads no filter byte, and a
 * query reads and checks only the chunks holding its rows, once), and the blobs a needle's
 * trigrams leave: per class of filters, the AND of the rows its trigrams name.
 */
import * as fs from 'node:fs'
import { createHash } from 'node:crypto'
import { BINARY, FILTER_CHUNK, IndexCorrupt, STORED, rowBytes, type BlobRow, type FilterClass } from './index-format.js'

/** One filter file read through a window of whole chunks (one chunk, or as many as one read spans). */
export interface FilterWindow {
  /** `length` bytes at `offset`: a view of the window, valid until the next call. Throws IndexCorrupt. */
  readonly bytes: (offset: number, length: number) => Buffer
  /** Loads and checks every chunk not checked yet: why the file cannot be used, or null. */
  readonly check: () => string | null
}

/**
 * The window over `fd` (`size` bytes, chunk digests `digests`: 32 bytes each, base64). A chunk that
 * matched its digest is not hashed again on later loads in this process: the owner's `unchanged()`
 * check (fstat after every scan) vouches for it, as for blobs, and stops all use of the filters
 * when the file changed.
 */
export const filterWindow = (fd: number, name: string, size: number, digests: string): FilterWindow => {
  const sums = Buffer.from(digests, 'base64')
  let win = Buffer.allocUnsafe(FILTER_CHUNK)
  let winStart = 0
  let winEnd = 0
  const checked = new Set<number>()
  const load = (first: number, end: number): void => {
    const length = end - first
    winStart = 0
    winEnd = 0
    if (win.length < length) win = Buffer.allocUnsafe(length)
    let n = 0
    for (let got = 1; got > 0 && n < length; n += got) got = fs.readSync(fd, win, n, length - n, first + n)
    if (n < length) throw new IndexCorrupt(`${name} ends early`)
    for (let at = first; at < end; at += FILTER_CHUNK) {
      const k = at / FILTER_CHUNK
      if (checked.has(k)) continue
      const chunk = win.subarray(at - first, Math.min(end, at + FILTER_CHUNK) - first)
      if (
        !createHash('sha256')
          .update(chunk)
          .digest()
          .equals(sums.subarray(k * 32, k * 32 + 32))
      )
        throw new IndexCorrupt(`${name} does not match its digest`)
      checked.add(k)
    }
    winStart = first
    winEnd = end
  }
  return {
    bytes: (offset, length) => {
      if (offset < winStart || offset + length > winEnd) {
        if (offset + length > size) throw new IndexCorrupt(`${name} ends early`)
        const first = offset - (offset % FILTER_CHUNK)
        load(first, Math.min(size, Math.ceil((offset + length) / FILTER_CHUNK) * FILTER_CHUNK))
      }
      return win.subarray(offset - winStart, offset - winStart + length)
    },
    check: () => {
      try {
        for (let at = 0; at < size; at += 256 * FILTER_CHUNK) load(at, Math.min(size, at + 256 * FILTER_CHUNK))
        return null
      } catch (e) {
        if (e instanceof IndexCorrupt) return e.message
        throw e
      }
    }
  }
}

/** Whether two stats of one open file show it unwritten in between (any write changes its ctime). */
export const same = (a: fs.BigIntStats, b: fs.BigIntStats): boolean =>
  a.ctimeNs === b.ctimeNs && a.mtimeNs === b.mtimeNs && a.size === b.size && a.ino === b.ino

/** Per class of filters (by log), the bits of the blobs a needle's trigrams leave: one bit per slot. */
export type Candidates = ReadonlyMap<number, Uint8Array>

/**
 * The blobs whose filters hold every trigram of the needle (`hashes`, see needleHashes): for each
 * class, the AND of the rows the hashes name. Reads one row per hash and class. Throws IndexCorrupt.
 */
export const candidatesOf = (
  classes: readonly FilterClass[],
  hashes: Uint32Array,
  filters: FilterWindow
): Candidates => {
  const out = new Map<number, Uint8Array>()
  for (const [log, count, offset] of classes) {
    const row = rowBytes(count)
    const acc = new Uint8Array(row).fill(255)
    const shift = 32 - log
    for (let i = 0; i < hashes.length; i++) {
      const bits = filters.bytes(offset + ((hashes[i] ?? 0) >>> shift) * row, row)
      let any = 0
      for (let k = 0; k < row; k++) {
        const v = (acc[k] ?? 0) & (bits[k] ?? 0)
        acc[k] = v
        any |= v
      }
      if (any === 0) break
    }
    out.set(log, acc)
  }
  return out
}

/** False only when a stored text blob's filter lacks a trigram of the needle (its bit in `candidates` is clear). */
export const filterMayContain = (r: BlobRow | undefined, candidates: Candidates): boolean => {
  if (r === undefined || !(r[1] & STORED) || r[1] & BINARY) return true
  const bits = candidates.get(r[4])
  return bits === undefined || ((bits[r[3] >>> 3] ?? 0) & (1 << (r[3] & 7))) !== 0
}
