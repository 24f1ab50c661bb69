/**
 * The persisted snapshot index of one commit, kept outside any case in the user's cache directory
 * (`<root>/snapshots/v1/<commit>/`), so that every later process searches the commit without
 * touching git's packs. Three files, published together by one atomic rename of their directory:
 *
 * - `index.json`: a first line with the SHA-256 of the rest, then JSON: per blob id its size,
 *   whether it is binary or missing, and where its bytes and filter are; where the commit and tree
 *   objects are in `trees.dat`.
 * - `trees.dat`: the commit object and every tree object of the commit, raw. The listing is walked
 *   from them on every open, each checked against its git id, starting from the commit id itself,
 *   so a listing can only ever be the commit's own.
 * - `blobs.dat`: the bytes of every text blob up to STORE_LIMIT, one after another. Every read is
 *   checked against the blob's git id before it is served.
 * - `filters.dat`: per text blob a bit set of its hashed byte trigrams (one hash, sized to the blob),
 *   checked against the SHA-256 in index.json when the index is opened (streamed), then read
 *   through a small window. A needle whose trigrams are
 *   not all set cannot occur in the blob, so the search skips it without reading it; a set bit only
 *   means "maybe", and the blob is then read and searched as before. Results are therefore exactly
 *   those of a full scan.
 *
 * A damaged, truncated or foreign index is reported and rebuilt, never served. Builders write into
 * a private directory and rename it into place; a builder that loses the race discards its copy.
 * This module opens and reads an index; index-format.ts holds the layout, index-build.ts builds it.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { objectId } from './object-reader.js'
import { indexDirOf, markUsed } from './index-cache.js'
import {
  BINARY,
  MISSING,
  STORE_LIMIT,
  STORED,
  VERSION,
  filterLog,
  isBinaryBytes,
  sha256,
  trigramFilter,
  type BlobRow,
  type IndexFile,
  type StoredObject,
  BlobRowCodec,
  IndexHeaderCodec,
  ObjectRowCodec
} from './index-format.js'

export type EntryKind = 'blob' | 'symlink' | 'submodule'

export interface TreeEntry {
  readonly path: string
  readonly oid: string
  readonly mode: string
  readonly kind: EntryKind
}

/** What a search needs to know of a blob without reading it. */
export interface BlobInfo {
  readonly size: number
  readonly binary: boolean
}

export type IndexProblem = { readonly reason: string }

export interface SnapshotIndex {
  readonly dir: string
  /** The commit or a tree object, checked against its id; null when not stored or damaged. */
  readonly object: (oid: string) => StoredObject | null
  /** Size and kind of a blob; null when the blob was missing from the repository at build time. */
  readonly info: (oid: string) => BlobInfo | null | undefined
  /**
   * The stored bytes of a text blob, checked against its id; undefined when not stored. With
   * `into` (large enough) the bytes are read into it and a view of it is returned.
   */
  readonly read: (oid: string, into?: Buffer) => Buffer | undefined
  /**
   * True when blobs.dat has not been written since it was opened (ctime, mtime, size and inode as
   * then; any write changes its ctime). When false, every blob is checked again on its next read,
   * and whatever was read before the call must be read again.
   */
  readonly unchanged: () => boolean
  /** False once filters.dat was found written after it was opened: no file is skipped any more. */
  readonly filtersTrusted: () => boolean
  /** False only when the blob certainly does not contain the needle. */
  readonly mayContain: (oid: string, hashes: Uint32Array | null) => boolean
  /**
   * Checks everything the index says of one blob against the blob as git has it (null: missing):
   * flags, size, stored bytes and the trigram filter, re-derived. Returns what differs, or null.
   */
  readonly audit: (oid: string, bytes: Buffer | null) => string | null
  /** How many blobs the index describes. */
  readonly blobCount: number
  readonly close: () => void
}

/** Thrown when stored bytes do not match their git id: the index is damaged. */
export class IndexCorrupt extends Error {}

export { indexDirOf }
/** Bytes of filters.dat read at a time (scans read the filters nearly in file order). */
const FILTER_WINDOW = 1 << 20

/**
 * Opens the published index of `commit`: null when there is none, a problem when it is there but
 * damaged (the caller reports it and rebuilds).
 */
export const openIndex = (root: string, commit: string): SnapshotIndex | IndexProblem | null => {
  const dir = indexDirOf(root, commit)
  const f = readIndexFile(dir, commit)
  if (f === null || 'reason' in f) return f
  const files = openDataFiles(dir)
  if ('reason' in files) return files
  // The filters are checked against their digest here, streamed (never held whole), and read
  // later through a small window; a write to the file afterwards shows in `unchanged()`.
  const filters = filterWindow(files.filters)
  const problem = dataProblem(f, files, filters)
  if (problem !== null) {
    fs.closeSync(files.blobs)
    fs.closeSync(files.filters)
    return { reason: problem }
  }
  markUsed(path.join(dir, 'index.json'))
  return indexOver(dir, f, files, filters)
}

/** index.json, checked against its digest and its commit; null when there is no index at all. */
const readIndexFile = (dir: string, commit: string): IndexFile | IndexProblem | null => {
  let text: string
  try {
    text = fs.readFileSync(path.join(dir, 'index.json'), 'utf8')
  } catch (e) {
    const code = (e as { code?: string }).code
    // Nothing there (or the cache path is not a directory at all: building will say so).
    if ((code === 'ENOENT' && !fs.existsSync(dir)) || code === 'ENOTDIR') return null
    return { reason: `index.json cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  const nl = text.indexOf('\n')
  if (nl !== 64 || sha256(text.slice(nl + 1)) !== text.slice(0, 64))
    return { reason: 'index.json does not match its digest (truncated or altered)' }
  let parsed: unknown
  try {
    parsed = JSON.parse(text.slice(nl + 1))
  } catch {
    return { reason: 'index.json is not JSON' }
  }
  const header = IndexHeaderCodec.decode(parsed)
  if (header._tag === 'Left' || header.right.version !== VERSION || header.right.commit !== commit)
    return { reason: 'index.json is not an index of this commit' }
  const { objects, blobs } = header.right
  for (const oid in objects)
    if (!ObjectRowCodec.is(objects[oid]))
      return { reason: `index.json: object ${JSON.stringify(oid.slice(0, 64))} is malformed` }
  for (const oid in blobs)
    if (!BlobRowCodec.is(blobs[oid]))
      return { reason: `index.json: blob ${JSON.stringify(oid.slice(0, 64))} is malformed` }
  // Every row passed its codec's guard above.
  return header.right as IndexFile
}

/** The data files of an open index: blobs.dat and filters.dat open, trees.dat read whole. */
interface DataFiles {
  readonly blobs: number
  readonly filters: number
  readonly trees: Buffer
}

const openDataFiles = (dir: string): DataFiles | IndexProblem => {
  let blobs: number
  let filters: number
  let trees: Buffer
  try {
    trees = fs.readFileSync(path.join(dir, 'trees.dat'))
    filters = fs.openSync(path.join(dir, 'filters.dat'), 'r')
  } catch (e) {
    return { reason: `a data file cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  try {
    blobs = fs.openSync(path.join(dir, 'blobs.dat'), 'r')
  } catch (e) {
    fs.closeSync(filters)
    return { reason: `a data file cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  return { blobs, filters, trees }
}

/** What in the data files differs from what index.json says of them, or null. */
const dataProblem = (f: IndexFile, files: DataFiles, filters: FilterWindow): string | null => {
  const streamed = filters.digest()
  if (streamed.size !== f.filters_bytes || streamed.sha256 !== f.filters_sha256)
    return 'filters.dat does not match its digest'
  const size = fs.fstatSync(files.blobs).size
  if (size !== f.blobs_bytes) return `blobs.dat has ${size} bytes, the index says ${f.blobs_bytes}`
  if (files.trees.length !== f.trees_bytes)
    return `trees.dat has ${files.trees.length} bytes, the index says ${f.trees_bytes}`
  return null
}

/** filters.dat read through a window of FILTER_WINDOW bytes (or one filter, when larger). */
interface FilterWindow {
  /** The file's size and SHA-256, streamed through the window. */
  readonly digest: () => { readonly size: number; readonly sha256: string }
  /** `length` bytes at `offset`: a view of the window, valid until the next call. */
  readonly bytes: (offset: number, length: number) => Buffer
}

const filterWindow = (fd: number): FilterWindow => {
  let win = Buffer.allocUnsafe(FILTER_WINDOW)
  let winStart = 0
  let winEnd = 0
  return {
    digest: () => {
      const digest = createHash('sha256')
      let size = 0
      for (let n = fs.readSync(fd, win, 0, win.length, 0); n > 0; n = fs.readSync(fd, win, 0, win.length, size)) {
        digest.update(win.subarray(0, n))
        size += n
      }
      return { size, sha256: digest.digest('hex') }
    },
    bytes: (offset, length) => {
      if (offset < winStart || offset + length > winEnd) {
        if (win.length < length) win = Buffer.allocUnsafe(length)
        let n = 0
        for (let got = 1; got > 0 && n < win.length; n += got) got = fs.readSync(fd, win, n, win.length - n, offset + n)
        winStart = offset
        winEnd = offset + n
        if (n < length) throw new IndexCorrupt('filters.dat ends early')
      }
      return win.subarray(offset - winStart, offset - winStart + length)
    }
  }
}

/** The index over its checked files; reads check what they serve (see SnapshotIndex). */
const indexOver = (
  dir: string,
  f: IndexFile,
  { blobs: fd, filters: ffd, trees }: DataFiles,
  filters: FilterWindow
): SnapshotIndex => {
  const rows = new Map<string, BlobRow>(Object.entries(f.blobs))
  // Blobs whose bytes in blobs.dat matched their id in this process, and the files' state then.
  const verified = new Set<string>()
  const opened = fs.fstatSync(fd, { bigint: true })
  const filtersOpened = fs.fstatSync(ffd, { bigint: true })
  let filtersTrusted = true
  return {
    dir,
    object: (oid) => storedObject(f, trees, oid),
    info: (oid) => {
      const r = rows.get(oid)
      if (r === undefined) return undefined
      return r[1] & MISSING ? null : { size: r[0], binary: (r[1] & BINARY) !== 0 }
    },
    read: (oid, into) => readStored(fd, oid, rows.get(oid), into, verified),
    unchanged: () => {
      const blobsSame = same(fs.fstatSync(fd, { bigint: true }), opened)
      const filtersSame = same(fs.fstatSync(ffd, { bigint: true }), filtersOpened)
      if (blobsSame && filtersSame) return true
      verified.clear()
      // Filters written after their digest was checked are not used again: every file is read.
      if (!filtersSame) filtersTrusted = false
      return false
    },
    filtersTrusted: () => filtersTrusted,
    mayContain: (oid, hashes) => hashes === null || !filtersTrusted || filterMayContain(rows.get(oid), hashes, filters),
    audit: (oid, bytes) => auditRow(fd, rows.get(oid), bytes, filters),
    blobCount: rows.size,
    close: () => {
      fs.closeSync(fd)
      fs.closeSync(ffd)
    }
  }
}

const same = (a: fs.BigIntStats, b: fs.BigIntStats): boolean =>
  a.ctimeNs === b.ctimeNs && a.mtimeNs === b.mtimeNs && a.size === b.size && a.ino === b.ino

/** The commit or a tree object of trees.dat, checked against its id; null when not stored or damaged. */
const storedObject = (f: IndexFile, trees: Buffer, oid: string): StoredObject | null => {
  const at = f.objects[oid]
  if (at === undefined) return null
  const [type, offset, length] = at
  const content = trees.subarray(offset, offset + length)
  if ((type !== 'commit' && type !== 'tree') || content.length !== length) return null
  return objectId(type, content) === oid ? { type, content } : null
}

/** A stored blob's bytes from blobs.dat (into `into` when large enough); undefined when not stored. */
const readStored = (
  fd: number,
  oid: string,
  r: BlobRow | undefined,
  into: Buffer | undefined,
  verified: Set<string>
): Buffer | undefined => {
  if (r === undefined || !(r[1] & STORED)) return undefined
  const b = into === undefined || into.length < r[0] ? Buffer.allocUnsafe(r[0]) : into.subarray(0, r[0])
  let done = 0
  while (done < r[0]) {
    const n = fs.readSync(fd, b, done, r[0] - done, r[2] + done)
    if (n === 0) throw new IndexCorrupt(`blobs.dat ends inside blob ${oid}`)
    done += n
  }
  // Checked against its git id on its first read in this process; later reads of the same
  // blob are vouched for by `unchanged()` (the file has not been written since).
  if (!verified.has(oid)) {
    if (objectId('blob', b) !== oid) throw new IndexCorrupt(`the stored bytes of blob ${oid} do not match its id`)
    verified.add(oid)
  }
  return b
}

/** False only when a stored text blob's filter lacks a trigram of the needle. */
const filterMayContain = (r: BlobRow | undefined, hashes: Uint32Array, filters: FilterWindow): boolean => {
  if (r === undefined || !(r[1] & STORED) || r[1] & BINARY) return true
  const log = r[4]
  const shift = 32 - log
  const filter = filters.bytes(r[3], 1 << (log - 3))
  for (let i = 0; i < hashes.length; i++) {
    const h = (hashes[i] ?? 0) >>> shift
    if (((filter[h >>> 3] ?? 0) & (1 << (h & 7))) === 0) return false
  }
  return true
}

/** What a blob's row says that differs from the blob as git has it (null: missing), or null. */
const auditRow = (fd: number, r: BlobRow | undefined, bytes: Buffer | null, filters: FilterWindow): string | null => {
  if (r === undefined) return 'not in the index'
  if (bytes === null) return r[1] & MISSING ? null : 'listed as present, but git does not have it'
  if (r[1] & MISSING) return 'listed as missing, but git has it'
  if (r[0] !== bytes.length) return `listed with ${r[0]} bytes, git has ${bytes.length}`
  const binary = isBinaryBytes(bytes)
  if (((r[1] & BINARY) !== 0) !== binary)
    return binary ? 'listed as text, but it is binary' : 'listed as binary, but it is text'
  const store = !binary && bytes.length <= STORE_LIMIT
  if (((r[1] & STORED) !== 0) !== store) return store ? 'not stored, but it should be' : 'stored, but it should not be'
  if (!store) return null
  if (r[4] !== filterLog(bytes.length)) return 'its trigram filter has the wrong size'
  const stored = Buffer.allocUnsafe(r[0])
  if (fs.readSync(fd, stored, 0, r[0], r[2]) !== r[0] || !stored.equals(bytes))
    return "its stored bytes differ from git's"
  const derived = trigramFilter(bytes, r[4])
  if (!filters.bytes(r[3], derived.length).equals(derived))
    return 'its trigram filter differs from the one its bytes give'
  return null
}
