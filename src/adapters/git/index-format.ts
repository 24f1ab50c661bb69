/**
 * The format of a persisted snapshot index (`<root>/snapshots/v2/<commit>/`), shared by the
 * reader (snapshot-index.ts), the builder (index-build.ts) and its writer thread: the layout of
 * `index.json` and its per-blob rows, and the trigram filters of `filters.dat` (one hash per byte
 * trigram, set in a bit set sized to the blob, in the manner of a Bloom filter) and of `folded.dat`
 * (the same of the blob's bytes with ASCII capitals lowered, for searches in any case; same sizes
 * and offsets as filters.dat). Version 2 added folded.dat; a version 1 index is rebuilt.
 */
import { createHash } from 'node:crypto'
import * as t from 'io-ts'
import { INDEX_VERSION } from './index-cache.js'

/** Thrown when stored bytes do not match their git id, or a data file its digest: the index is damaged. */
export class IndexCorrupt extends Error {}

/** filters.dat and folded.dat are checked in chunks of this many bytes, each against its own SHA-256. */
export const FILTER_CHUNK = 1 << 20

/** Text blobs larger than this are not copied into the index; they are read from git. */
export const STORE_LIMIT = 16 << 20
export const FORMAT = 'vba-snapshot-index'
export const VERSION = INDEX_VERSION

/** Flags of a blob row: binary, its bytes stored in blobs.dat, missing from the repository. */
export const BINARY = 1
export const STORED = 2
export const MISSING = 4

/** A blob's row in index.json: where its bytes and its filters are in blobs.dat and filters.dat (folded.dat alike). */
export type BlobRow = [size: number, flags: number, offset: number, filterOffset: number, filterLog: number]

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
  filters_sha256: t.array(t.string),
  folded_sha256: t.array(t.string),
  trees_bytes: t.number,
  objects: t.UnknownRecord,
  blobs: t.UnknownRecord
})

/** index.json after its digest line. */
export interface IndexFile {
  format: string
  version: number
  commit: string
  blobs_bytes: number
  filters_bytes: number
  /** The SHA-256 of each FILTER_CHUNK bytes of filters.dat (the last chunk may be shorter). */
  filters_sha256: string[]
  /** The same of folded.dat, which has filters_bytes bytes too, its filters at the same offsets. */
  folded_sha256: string[]
  trees_bytes: number
  /** Commit and tree objects in trees.dat: [type, offset, length]. */
  objects: Record<string, [StoredObject['type'], number, number]>
  blobs: Record<string, BlobRow>
}

export const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

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

const HASH = 0x9e3779b1

/** Each byte with ASCII capitals lowered: the folding of folded.dat, as ignore_case matches. */
const FOLD = Uint8Array.from({ length: 256 }, (_, b) => (b >= 65 && b <= 90 ? b + 32 : b))

/**
 * The two trigram filters of a blob's bytes, `2 ** log` bits each, from one pass: of the bytes as
 * they are, and of the bytes case-folded (FOLD). A needle lowered the same way whose trigrams are
 * not all set in the folded filter cannot occur in the blob in any case.
 */
export const trigramFilters = (
  bytes: Uint8Array,
  log: number
): { readonly exact: Uint8Array<ArrayBuffer>; readonly folded: Uint8Array<ArrayBuffer> } => {
  const exact = new Uint8Array(1 << (log - 3))
  const folded = new Uint8Array(1 << (log - 3))
  const shift = 32 - log
  const n = bytes.length
  if (n < 3) return { exact, folded }
  const b0 = bytes[0] ?? 0
  const b1 = bytes[1] ?? 0
  let t = (b0 << 8) | b1
  let u = ((FOLD[b0] ?? 0) << 8) | (FOLD[b1] ?? 0)
  for (let i = 2; i < n; i++) {
    const b = bytes[i] ?? 0
    t = ((t << 8) | b) & 0xffffff
    u = ((u << 8) | (FOLD[b] ?? 0)) & 0xffffff
    const h = Math.imul(t, HASH) >>> shift
    exact[h >>> 3] = (exact[h >>> 3] ?? 0) | (1 << (h & 7))
    const g = Math.imul(u, HASH) >>> shift
    folded[g >>> 3] = (folded[g >>> 3] ?? 0) | (1 << (g & 7))
  }
  return { exact, folded }
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
