/**
 * The format of a persisted snapshot index (`<root>/snapshots/v3/<commit>/`), shared by the
 * reader (snapshot-index.ts), the builder (index-build.ts) and its writer thread: the layout of
 * `index.json` and its per-blob rows, and the trigram filters of `filters.dat` (one hash per byte
 * trigram, set in a bit set sized to the blob, in the manner of a Bloom filter) and of `folded.dat`
 * (the same of the blob's bytes with ASCII capitals lowered, for searches in any case; same
 * layout as filters.dat).
 *
 * The filters are stored bit-sliced: blobs whose filters have the same size (2 ** log bits) form
 * a class, and a class stores, for each bit position p, one row of a bit per blob of the class
 * (`ceil(count / 8)` bytes; bit `slot` of row p is bit p of the filter of the class's blob
 * `slot`). A needle's trigrams name one row per class each, so a search reads a few kilobytes of
 * rows, not every filter. Version 2 added folded.dat, version 3 sliced both, version 4 stored the
 * listing in index.json (an open no longer walks the trees); an index of an older version is
 * rebuilt.
 */
import { createHash } from 'node:crypto'
import * as t from 'io-ts'
import { INDEX_VERSION } from './index-cache.js'
import { HASH, filterKernel, type FilterKernel } from './trigram-kernel.js'

/** Thrown when stored bytes do not match their git id, or a data file its digest: the index is damaged. */
export class IndexCorrupt extends Error {}

/** filters.dat and folded.dat are checked in chunks of this many bytes, each against its own SHA-256. */
export const FILTER_CHUNK = 1 << 12

/** Text blobs larger than this are not copied into the index; they are read from git. */
export const STORE_LIMIT = 16 << 20
export const FORMAT = 'vba-snapshot-index'
export const VERSION = INDEX_VERSION

/** Flags of a blob row: binary, its bytes stored in blobs.dat, missing from the repository. */
export const BINARY = 1
export const STORED = 2
export const MISSING = 4

/**
 * A blob's row in index.json: where its bytes are in blobs.dat, and its filters in filters.dat and
 * folded.dat (its slot in the class of filters of `2 ** filterLog` bits).
 */
export type BlobRow = [size: number, flags: number, offset: number, filterSlot: number, filterLog: number]

/** A class of filters of one size: `[log, count, offset]`, its rows from `offset` in both filter files. */
export type FilterClass = [log: number, count: number, offset: number]

/** A raw git object as stored in trees.dat. */
export interface StoredObject {
  readonly type: 'commit' | 'tree'
  readonly content: Buffer
}

/** A blob row's codec: index.json is checked with its `is` guard row by row as it loads. */
export const BlobRowCodec: t.Type<BlobRow, BlobRow, unknown> = t.tuple([
  t.number,
  t.number,
  t.number,
  t.number,
  t.number
])

/** A listing row: path, object id and mode of one entry of the commit's tree (directories flattened). */
export type ListingRow = [path: string, oid: string, mode: string]
export const ListingRowCodec: t.Type<ListingRow, ListingRow, unknown> = t.tuple([t.string, t.string, t.string])

/** An object row's codec ([type, offset, length] in trees.dat). */
export const ObjectRowCodec = t.tuple([t.keyof({ commit: null, tree: null }), t.number, t.number])

/**
 * index.json after its digest line, decoded with io-ts: the header fields by `decode`, the rows by
 * the row codecs' guards (a decode of 100,000 rows would build error contexts no one reads, on
 * every open).
 */
export const IndexHeaderCodec = t.type({
  format: t.literal(FORMAT),
  version: t.number,
  commit: t.string,
  blobs_bytes: t.number,
  filters_bytes: t.number,
  filter_classes: t.array(t.tuple([t.number, t.number, t.number])),
  filters_sha256: t.string,
  folded_sha256: t.string,
  trees_bytes: t.number,
  trees_sha256: t.string,
  objects: t.UnknownRecord,
  listing: t.UnknownArray,
  blobs: t.UnknownRecord
})

/** index.json after its digest line. */
export interface IndexFile {
  format: string
  version: number
  commit: string
  blobs_bytes: number
  filters_bytes: number
  /** The classes of filters by size, in both filter files (see filterClasses). */
  filter_classes: FilterClass[]
  /** The SHA-256 of each FILTER_CHUNK bytes of filters.dat (the last chunk may be shorter), 32 bytes each, base64. */
  filters_sha256: string
  /** The same of folded.dat, which has filters_bytes bytes too, laid out as filters.dat. */
  folded_sha256: string
  trees_bytes: number
  /** The SHA-256 of trees.dat, checked on every open. */
  trees_sha256: string
  /** Commit and tree objects in trees.dat: [type, offset, length]. */
  objects: Record<string, [StoredObject['type'], number, number]>
  /** The listing walked from those objects when the index was built, sorted by path: [path, oid, mode]. */
  listing: ListingRow[]
  blobs: Record<string, BlobRow>
}

export const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

/** The SHA-256 of each FILTER_CHUNK bytes of a filter file, 32 bytes each, base64 (index.json's filters_sha256). */
export const chunkDigests = (b: Uint8Array): string => {
  const out = Buffer.allocUnsafe(Math.ceil(b.length / FILTER_CHUNK) * 32)
  for (let k = 0; k * FILTER_CHUNK < b.length; k++)
    createHash('sha256')
      .update(b.subarray(k * FILTER_CHUNK, (k + 1) * FILTER_CHUNK))
      .digest()
      .copy(out, k * 32)
  return out.toString('base64')
}

/** Bytes of one row of a class of `count` filters. */
export const rowBytes = (count: number): number => Math.ceil(count / 8)

/** The classes of the filters whose sizes are `logs` (in slot order), by size, and the bytes of a filter file. */
export const filterClasses = (logs: readonly number[]): { readonly classes: FilterClass[]; readonly bytes: number } => {
  const counts = new Map<number, number>()
  for (const log of logs) counts.set(log, (counts.get(log) ?? 0) + 1)
  const classes: FilterClass[] = []
  let bytes = 0
  for (const [log, count] of [...counts].sort((a, b) => a[0] - b[0])) {
    classes.push([log, count, bytes])
    bytes += 2 ** log * rowBytes(count)
  }
  return { classes, bytes }
}

/**
 * One filter file, bit-sliced (see the module comment), from the blobs' filters in slot order (a
 * blob's slot in its class is its rank among the filters of its size).
 */
export const sliceFilters = (filters: readonly Uint8Array[]): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(filterClasses(filters.map(logOfFilter)).bytes)
  let at = 0
  for (const region of slicedClasses(filters.length, (i) => filters[i] as Uint8Array)) {
    out.set(region, at)
    at += region.length
  }
  return out
}

/**
 * The rows of each class of filters in turn (classes by size, as filterClasses orders them), from
 * `count` filters in slot order, each read by `filterOf` when its class is sliced (so only one
 * class's filters and rows are needed at a time).
 */
export function* slicedClasses(
  count: number,
  filterOf: (i: number) => Uint8Array,
  logs: readonly number[] = Array.from({ length: count }, (_, i) => logOfFilter(filterOf(i)))
): Generator<Uint8Array<ArrayBuffer>> {
  for (const [log, n] of filterClasses(logs).classes) {
    const row = rowBytes(n)
    const region = new Uint8Array(2 ** log * row)
    // The filters of 8 slots at a time: their bytes at one offset are one byte of 8 rows each.
    const group: Uint8Array[] = []
    let column = 0
    for (let i = 0; i < count && column * 8 + group.length < n; i++)
      if (logs[i] === log) {
        group.push(filterOf(i))
        if (group.length === 8) {
          sliceGroup(region, group, column++, row)
          group.length = 0
        }
      }
    if (group.length > 0) sliceGroup(region, group, column, row)
    yield region
  }
}

/** log2 of a filter's size in bits. */
export const logOfFilter = (f: Uint8Array): number => 31 - Math.clz32(f.length) + 3

/**
 * Writes byte `column` of every row from the filters of its slots (up to 8, one size; slot
 * 8 * column + s is `group[s]`): for each filter byte q, the 8 bytes the slots hold there, as an
 * 8x8 bit matrix (bit t of byte s), transposed, are byte `column` of rows 8q to 8q + 7.
 */
const sliceGroup = (out: Uint8Array, group: readonly Uint8Array[], column: number, row: number): void => {
  const f0 = group[0] as Uint8Array
  // An empty slot reads as zeros of the same length: reads past the end of a shorter array made V8
  // deoptimise sliceGroup at the last group of every class.
  const none = group.length < 8 ? new Uint8Array(f0.length) : f0
  const [, f1 = none, f2 = none, f3 = none, f4 = none, f5 = none, f6 = none, f7 = none] = group
  for (let q = 0; q < f0.length; q++) {
    let lo = (f0[q] ?? 0) | ((f1[q] ?? 0) << 8) | ((f2[q] ?? 0) << 16) | ((f3[q] ?? 0) << 24)
    let hi = (f4[q] ?? 0) | ((f5[q] ?? 0) << 8) | ((f6[q] ?? 0) << 16) | ((f7[q] ?? 0) << 24)
    if ((lo | hi) === 0) continue
    // The 64-bit transpose of bit 8s+t to bit 8t+s, on the two 32-bit halves.
    let t = 0x0f0f0f0f & (hi ^ (lo >>> 4))
    hi ^= t
    lo ^= t << 4
    t = 0x33330000 & (lo ^ (lo << 14))
    lo ^= t ^ (t >>> 14)
    t = 0x33330000 & (hi ^ (hi << 14))
    hi ^= t ^ (t >>> 14)
    t = 0x55005500 & (lo ^ (lo << 7))
    lo ^= t ^ (t >>> 7)
    t = 0x55005500 & (hi ^ (hi << 7))
    hi ^= t ^ (t >>> 7)
    let k = 8 * q * row + column
    for (let b = 0; b < 32; b += 8, k += row) out[k] = (lo >>> b) & 255
    for (let b = 0; b < 32; b += 8, k += row) out[k] = (hi >>> b) & 255
  }
}

/** The filter of the blob in `slot` of a class, from the class's rows (`region`, rows of `row` bytes). */
export const unsliceFilter = (region: Uint8Array, row: number, slot: number, log: number): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(1 << (log - 3))
  const column = slot >>> 3
  const bit = 1 << (slot & 7)
  for (let p = 0; p < 1 << log; p++)
    if (((region[p * row + column] ?? 0) & bit) !== 0) out[p >>> 3] = (out[p >>> 3] ?? 0) | (1 << (p & 7))
  return out
}

/** Git's heuristic: a NUL byte in the first 8000 bytes makes a blob binary. */
export const isBinaryBytes = (bytes: Uint8Array): boolean => bytes.subarray(0, 8000).indexOf(0) >= 0

/** log2 of a blob's filter size in bits: about half a bit per byte, 512 bits to 4 Mbit. */
export const filterLog = (size: number): number =>
  Math.min(22, Math.max(9, Math.ceil(Math.log2(Math.max(size, 1))) - 1))

/**
 * How the index files a blob (null: git does not have it): its flags (MISSING, BINARY, or STORED
 * for a text blob up to STORE_LIMIT) and, when stored, the log2 of its filter size (else 0). The
 * builder writes it and the audit checks a row against it.
 */
export const blobFiling = (bytes: Uint8Array | null): { readonly flags: number; readonly log: number } =>
  bytes === null
    ? { flags: MISSING, log: 0 }
    : isBinaryBytes(bytes)
      ? { flags: BINARY, log: 0 }
      : bytes.length > STORE_LIMIT
        ? { flags: 0, log: 0 }
        : { flags: STORED, log: filterLog(bytes.length) }

let kernel: FilterKernel | undefined

/**
 * The two trigram filters of a blob's bytes, `2 ** log` bits each, from one pass: of the bytes as
 * they are (bit `imul(trigram, HASH) >>> (32 - log)` of each byte trigram, first byte highest), and
 * of the bytes with ASCII capitals lowered, as ignore_case matches. A needle lowered the same way
 * whose trigrams are not all set in the folded filter cannot occur in the blob in any case. The
 * loop runs in WebAssembly (trigram-kernel.ts), on one kernel per thread.
 */
export const trigramFilters: FilterKernel = (bytes, log, views) => {
  kernel ??= filterKernel()
  return kernel(bytes, log, views)
}

/**
 * The needle's trigram hashes (before the per-blob shift), or null when it has fewer than 3 bytes.
 * For the folded filter, pass the needle with its ASCII capitals lowered.
 */
export const needleHashes = (needle: Uint8Array): Uint32Array | null => {
  if (needle.length < 3) return null
  const out = new Uint32Array(needle.length - 2)
  for (let i = 0; i + 2 < needle.length; i++)
    out[i] = Math.imul(((needle[i] ?? 0) << 16) | ((needle[i + 1] ?? 0) << 8) | (needle[i + 2] ?? 0), HASH) >>> 0
  return out
}
