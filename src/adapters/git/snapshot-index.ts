/**
 * The persisted snapshot index of one commit, kept outside any case in the user's cache directory
 * (`<root>/snapshots/v4/<commit>/`), so that every later process searches the commit without
 * touching git's packs. Five files, published together by one atomic rename of their directory:
 *
 * - `index.json`: a first line with the SHA-256 of the rest, then JSON: the listing of the
 *   commit's tree (walked from git's objects when the index was built, sorted by path), per blob
 *   id its size, whether it is binary or missing, and where its bytes and filter are; where the
 *   commit and tree objects are in `trees.dat`, and its SHA-256. An open takes the listing from
 *   here (sealed by the digest line) instead of walking and hashing every tree again.
 * - `trees.dat`: the commit object and every tree object of the commit, raw, checked against its
 *   digest on every open; `vba index verify` walks the listing from them again, each checked
 *   against its git id, and compares it with git's and with the stored listing.
 * - `blobs.dat`: the bytes of every text blob up to STORE_LIMIT, one after another. Every read is
 *   checked against the blob's git id before it is served.
 * - `filters.dat`: per text blob a bit set of its hashed byte trigrams (one hash, sized to the blob),
 *   stored bit-sliced by filter size (index-format.ts), read through a small window of 4 KiB
 *   chunks, each checked against its SHA-256 in index.json when it is first loaded
 *   (index-filters.ts): an open reads none of it, a query only the rows its trigrams name. A
 *   needle whose trigrams are not all set cannot occur in the blob, so the search skips it
 *   without reading it; a set bit only means "maybe", and the blob is then read and searched as
 *   before. Results are therefore exactly those of a full scan.
 * - `folded.dat`: the same filters of each blob's bytes with ASCII capitals lowered, at the same
 *   offsets, read and checked the same way, for searches in any case (ignore_case, the
 *   missed-match hint).
 *
 * A damaged, truncated or foreign index is reported and rebuilt, never served. Builders write into
 * a private directory and rename it into place; a builder that loses the race discards its copy.
 * This module opens and reads an index; index-format.ts holds the layout, index-build.ts builds it.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { objectId } from './object-reader.js'
import { kindOf } from './tree.js'
import { indexDirOf, markUsed } from './index-cache.js'
import {
  candidatesOf,
  filterMayContain,
  filterWindow,
  same,
  type Candidates,
  type FilterWindow
} from './index-filters.js'
import {
  BINARY,
  FILTER_CHUNK,
  rowBytes,
  unsliceFilter,
  IndexCorrupt,
  MISSING,
  STORED,
  VERSION,
  blobFiling,
  sha256,
  trigramFilters,
  type BlobRow,
  type FilterClass,
  type IndexFile,
  type StoredObject,
  BlobRowCodec,
  IndexHeaderCodec,
  ListingRowCodec,
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
  /** The listing of the commit's tree as the index stores it, sorted by path (directories flattened). */
  readonly listing: () => TreeEntry[]
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
  /** False once filters.dat or folded.dat was found written after it was opened: no file is skipped any more. */
  readonly filtersTrusted: () => boolean
  /**
   * False only when the blob certainly does not contain the needle; `folded`: in any case (the
   * hashes are then of the needle with its ASCII capitals lowered). Throws IndexCorrupt when a
   * chunk of the filters, checked when first loaded, does not match its digest.
   */
  readonly mayContain: (oid: string, hashes: Uint32Array | null, folded?: boolean) => boolean
  /** Loads and checks every chunk of filters.dat and folded.dat: why they cannot be used, or null. */
  readonly filtersProblem: () => string | null
  /**
   * Checks everything the index says of one blob against the blob as git has it (null: missing):
   * flags, size, stored bytes and both trigram filters, re-derived. Returns what differs, or null.
   */
  readonly audit: (oid: string, bytes: Buffer | null) => string | null
  /** How many blobs the index describes. */
  readonly blobCount: number
  readonly close: () => void
}

export { IndexCorrupt, indexDirOf }

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
  const problem = dataProblem(f, files)
  if (problem !== null) {
    for (const fd of [files.blobs, files.filters, files.folded]) fs.closeSync(fd)
    return { reason: problem }
  }
  markUsed(path.join(dir, 'index.json'))
  return indexOver(dir, f, files)
}

/** index.json, checked against its digest and its commit; null when there is no index at all. */
const readIndexFile = (dir: string, commit: string): IndexFile | IndexProblem | null => {
  let bytes: Buffer
  try {
    bytes = fs.readFileSync(path.join(dir, 'index.json'))
  } catch (e) {
    const code = (e as { code?: string }).code
    // Nothing there (or the cache path is not a directory at all: building will say so).
    if ((code === 'ENOENT' && !fs.existsSync(dir)) || code === 'ENOTDIR') return null
    return { reason: `index.json cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  // The digest line is the SHA-256 of the rest's bytes (hashed as read, not re-encoded from a string).
  const nl = bytes.indexOf(10)
  if (nl !== 64 || sha256(bytes.subarray(nl + 1)) !== bytes.toString('latin1', 0, 64))
    return { reason: 'index.json does not match its digest (truncated or altered)' }
  let parsed: unknown
  try {
    parsed = JSON.parse(bytes.toString('utf8', nl + 1))
  } catch {
    return { reason: 'index.json is not JSON' }
  }
  const header = IndexHeaderCodec.decode(parsed)
  if (header._tag === 'Left' || header.right.version !== VERSION || header.right.commit !== commit)
    return { reason: 'index.json is not an index of this commit' }
  const { objects, blobs, listing } = header.right
  if (!listing.every((row) => ListingRowCodec.is(row))) return { reason: 'index.json: its listing is malformed' }
  for (const oid in objects)
    if (!ObjectRowCodec.is(objects[oid]))
      return { reason: `index.json: object ${JSON.stringify(oid.slice(0, 64))} is malformed` }
  const counts = new Map(header.right.filter_classes.map(([log, count]) => [log, count]))
  for (const oid in blobs) {
    const r = blobs[oid]
    if (!BlobRowCodec.is(r) || (r[1] & STORED && !(r[3] < (counts.get(r[4]) ?? 0))))
      return { reason: `index.json: blob ${JSON.stringify(oid.slice(0, 64))} is malformed` }
  }
  // Every row passed its codec's guard above.
  return header.right as IndexFile
}

/** The data files of an open index: blobs.dat and both filter files open, trees.dat read whole. */
interface DataFiles {
  readonly blobs: number
  readonly filters: number
  readonly folded: number
  readonly trees: Buffer
}

const openDataFiles = (dir: string): DataFiles | IndexProblem => {
  const fds: number[] = []
  try {
    const trees = fs.readFileSync(path.join(dir, 'trees.dat'))
    for (const name of ['blobs.dat', 'filters.dat', 'folded.dat']) fds.push(fs.openSync(path.join(dir, name), 'r'))
    const [blobs = -1, filters = -1, folded = -1] = fds
    return { blobs, filters, folded, trees }
  } catch (e) {
    for (const fd of fds) fs.closeSync(fd)
    return { reason: `a data file cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
}

/**
 * What in the data files differs from what index.json says of them, or null. The filters' bytes
 * are checked against their chunk digests as they are loaded, not here: an open reads none of them.
 */
const dataProblem = (f: IndexFile, files: DataFiles): string | null => {
  const chunks = Math.ceil(f.filters_bytes / FILTER_CHUNK)
  for (const [name, fd, digests] of [
    ['filters.dat', files.filters, f.filters_sha256],
    ['folded.dat', files.folded, f.folded_sha256]
  ] as const)
    if (fs.fstatSync(fd).size !== f.filters_bytes || Buffer.from(digests, 'base64').length !== 32 * chunks)
      return `${name} does not match its digest`
  const size = fs.fstatSync(files.blobs).size
  if (size !== f.blobs_bytes) return `blobs.dat has ${size} bytes, the index says ${f.blobs_bytes}`
  if (files.trees.length !== f.trees_bytes)
    return `trees.dat has ${files.trees.length} bytes, the index says ${f.trees_bytes}`
  if (sha256(files.trees) !== f.trees_sha256) return 'trees.dat does not match its digest'
  return null
}

/** The index over its checked files; reads check what they serve (see SnapshotIndex). */
const indexOver = (
  dir: string,
  f: IndexFile,
  { blobs: fd, filters: ffd, folded: gfd, trees }: DataFiles
): SnapshotIndex => {
  // The rows as parsed (no map built on every open): blob ids are 40 hex digits, no prototype's names.
  const blobRows = f.blobs
  const rows = { get: (oid: string): BlobRow | undefined => (Object.hasOwn(blobRows, oid) ? blobRows[oid] : undefined) }
  const blobCount = Object.keys(blobRows).length
  // Blobs whose bytes in blobs.dat matched their id in this process, and the files' state then.
  const verified = new Set<string>()
  const opened = fs.fstatSync(fd, { bigint: true })
  const filtersOpened = [ffd, gfd].map((x) => ({ fd: x, at: fs.fstatSync(x, { bigint: true }) }))
  const filters = filterWindow(ffd, 'filters.dat', f.filters_bytes, f.filters_sha256)
  const folded = filterWindow(gfd, 'folded.dat', f.filters_bytes, f.folded_sha256)
  let filtersTrusted = true
  // The candidates of the last needle asked (a scan asks the same hashes for every file).
  let last: { hashes: Uint32Array; folded: boolean; candidates: Candidates } | null = null
  const candidates = (hashes: Uint32Array, inAnyCase: boolean): Candidates => {
    if (last?.hashes !== hashes || last.folded !== inAnyCase)
      last = {
        hashes,
        folded: inAnyCase,
        candidates: candidatesOf(f.filter_classes, hashes, inAnyCase ? folded : filters)
      }
    return last.candidates
  }
  const classes = new Map(f.filter_classes.map((c) => [c[0], c]))
  // The rows of each class, kept once an audit read them (an audit visits the classes in turn).
  const regions = new Map<FilterWindow, Map<number, Uint8Array>>()
  const region = (w: FilterWindow, [log, count, offset]: FilterClass): Uint8Array => {
    const kept = regions.get(w) ?? regions.set(w, new Map()).get(w) ?? new Map<number, Uint8Array>()
    const b = kept.get(log) ?? Buffer.from(w.bytes(offset, 2 ** log * rowBytes(count)))
    kept.set(log, b)
    return b
  }
  return {
    dir,
    listing: () => f.listing.map(([p, oid, mode]) => ({ path: p, oid, mode, kind: kindOf(mode) })),
    object: (oid) => storedObject(f, trees, oid),
    info: (oid) => {
      const r = rows.get(oid)
      if (r === undefined) return undefined
      return r[1] & MISSING ? null : { size: r[0], binary: (r[1] & BINARY) !== 0 }
    },
    read: (oid, into) => readStored(fd, oid, rows.get(oid), into, verified),
    unchanged: () => {
      const blobsSame = same(fs.fstatSync(fd, { bigint: true }), opened)
      const filtersSame = filtersOpened.every((o) => same(fs.fstatSync(o.fd, { bigint: true }), o.at))
      if (blobsSame && filtersSame) return true
      verified.clear()
      // Filters written after their chunks were checked are not used again: every file is read.
      if (!filtersSame) filtersTrusted = false
      return false
    },
    filtersTrusted: () => filtersTrusted,
    mayContain: (oid, hashes, inAnyCase) =>
      hashes === null || !filtersTrusted || filterMayContain(rows.get(oid), candidates(hashes, inAnyCase === true)),
    filtersProblem: () => filters.check() ?? folded.check(),
    audit: (oid, bytes) => auditRow(fd, rows.get(oid), bytes, classes, filters, folded, region),
    blobCount,
    close: () => {
      for (const x of [fd, ffd, gfd]) fs.closeSync(x)
    }
  }
}

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

/** What a blob's row says that differs from the blob as git has it (null: missing), or null. */
const auditRow = (
  fd: number,
  r: BlobRow | undefined,
  bytes: Buffer | null,
  classes: ReadonlyMap<number, FilterClass>,
  filters: FilterWindow,
  folded: FilterWindow,
  regions: (w: FilterWindow, c: FilterClass) => Uint8Array
): string | null => {
  if (r === undefined) return 'not in the index'
  if (bytes === null) return r[1] & MISSING ? null : 'listed as present, but git does not have it'
  if (r[1] & MISSING) return 'listed as missing, but git has it'
  if (r[0] !== bytes.length) return `listed with ${r[0]} bytes, git has ${bytes.length}`
  const filing = blobFiling(bytes)
  const binary = filing.flags === BINARY
  if (((r[1] & BINARY) !== 0) !== binary)
    return binary ? 'listed as text, but it is binary' : 'listed as binary, but it is text'
  const store = filing.flags === STORED
  if (((r[1] & STORED) !== 0) !== store) return store ? 'not stored, but it should be' : 'stored, but it should not be'
  if (!store) return null
  if (r[4] !== filing.log) return 'its trigram filter has the wrong size'
  const stored = Buffer.allocUnsafe(r[0])
  if (fs.readSync(fd, stored, 0, r[0], r[2]) !== r[0] || !stored.equals(bytes))
    return "its stored bytes differ from git's"
  const derived = trigramFilters(bytes, r[4])
  const c = classes.get(r[4])
  if (c === undefined) return 'its trigram filter is in no class'
  const sliced = (w: FilterWindow): Buffer => Buffer.from(unsliceFilter(regions(w, c), rowBytes(c[1]), r[3], r[4]))
  try {
    if (!sliced(filters).equals(derived.exact)) return 'its trigram filter differs from the one its bytes give'
    if (!sliced(folded).equals(derived.folded))
      return 'its case-folded trigram filter differs from the one its bytes give'
  } catch (e) {
    // A chunk that fails its digest is one problem of the whole index (filtersProblem, asked first).
    if (!(e instanceof IndexCorrupt)) throw e
  }
  return null
}
