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
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { Worker } from 'node:worker_threads'
import { objectId, type ObjectReader } from './object-reader.js'
import { INDEX_VERSION, indexDirOf, markUsed, sweepLeftovers } from './index-cache.js'
import type { WriterMessage, WriterReply } from './index-writer-worker.js'

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

/** Text blobs larger than this are not copied into the index; they are read from git. */
export const STORE_LIMIT = 16 << 20
const FORMAT = 'vba-snapshot-index'
const VERSION = INDEX_VERSION
const BINARY = 1
const STORED = 2
const MISSING = 4

/** Git's heuristic: a NUL byte in the first 8000 bytes makes a blob binary. */
export const isBinaryBytes = (bytes: Uint8Array): boolean => bytes.subarray(0, 8000).indexOf(0) >= 0

/** log2 of a blob's filter size in bits: about half a bit per byte, 512 bits to 4 Mbit. */
const filterLog = (size: number): number => Math.min(22, Math.max(9, Math.ceil(Math.log2(Math.max(size, 1))) - 1))
const HASH = 0x9e3779b1
/** Bytes of filters.dat read at a time (scans read the filters nearly in file order). */
const FILTER_WINDOW = 1 << 20

export const trigramFilter = (bytes: Uint8Array, log: number): Uint8Array => {
  const f = new Uint8Array(1 << (log - 3))
  const shift = 32 - log
  const n = bytes.length
  if (n < 3) return f
  let t = ((bytes[0] ?? 0) << 8) | (bytes[1] ?? 0)
  for (let i = 2; i < n; i++) {
    t = ((t << 8) | (bytes[i] ?? 0)) & 0xffffff
    const h = Math.imul(t, HASH) >>> shift
    f[h >>> 3] = (f[h >>> 3] ?? 0) | (1 << (h & 7))
  }
  return f
}

/** The needle's trigram hashes (before the per-blob shift), or null when it has fewer than 3 bytes. */
export const needleHashes = (needle: Uint8Array): Uint32Array | null => {
  if (needle.length < 3) return null
  const out = new Uint32Array(needle.length - 2)
  for (let i = 0; i + 2 < needle.length; i++) out[i] = Math.imul(((needle[i] ?? 0) << 16) | ((needle[i + 1] ?? 0) << 8) | (needle[i + 2] ?? 0), HASH) >>> 0
  return out
}

export type IndexProblem = { readonly reason: string }

/** A raw git object as stored in trees.dat. */
export interface StoredObject {
  readonly type: 'commit' | 'tree'
  readonly content: Buffer
}

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

type BlobRow = [size: number, flags: number, offset: number, filterOffset: number, filterLog: number]

interface IndexFile {
  format: string
  version: number
  commit: string
  blobs_bytes: number
  filters_bytes: number
  filters_sha256: string
  trees_bytes: number
  /** Commit and tree objects in trees.dat: [type, offset, length]. */
  objects: Record<string, [StoredObject['type'], number, number]>
  blobs: Record<string, BlobRow>
}

export { indexDirOf }

const sha256 = (b: Uint8Array | string): string => createHash('sha256').update(b).digest('hex')

/**
 * Opens the published index of `commit`: null when there is none, a problem when it is there but
 * damaged (the caller reports it and rebuilds).
 */
export const openIndex = (root: string, commit: string): SnapshotIndex | IndexProblem | null => {
  const dir = indexDirOf(root, commit)
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
  if (nl !== 64 || sha256(text.slice(nl + 1)) !== text.slice(0, 64)) return { reason: 'index.json does not match its digest (truncated or altered)' }
  let f: IndexFile
  try {
    f = JSON.parse(text.slice(nl + 1)) as IndexFile
  } catch {
    return { reason: 'index.json is not JSON' }
  }
  if (f.format !== FORMAT || f.version !== VERSION || f.commit !== commit || typeof f.objects !== 'object' || typeof f.blobs !== 'object') return { reason: 'index.json is not an index of this commit' }
  let fd: number
  let ffd: number
  let trees: Buffer
  try {
    trees = fs.readFileSync(path.join(dir, 'trees.dat'))
    ffd = fs.openSync(path.join(dir, 'filters.dat'), 'r')
  } catch (e) {
    return { reason: `a data file cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  try {
    fd = fs.openSync(path.join(dir, 'blobs.dat'), 'r')
  } catch (e) {
    fs.closeSync(ffd)
    return { reason: `a data file cannot be read (${(e as { code?: string }).code ?? 'error'})` }
  }
  const refuse = (reason: string): IndexProblem => {
    fs.closeSync(fd)
    fs.closeSync(ffd)
    return { reason }
  }
  // The filters are checked against their digest here, streamed (never held whole), and read
  // later through a small window; a write to the file afterwards shows in `unchanged()`.
  const digest = createHash('sha256')
  let win = Buffer.allocUnsafe(FILTER_WINDOW)
  let filtersSize = 0
  for (let n = fs.readSync(ffd, win, 0, win.length, 0); n > 0; n = fs.readSync(ffd, win, 0, win.length, filtersSize)) {
    digest.update(win.subarray(0, n))
    filtersSize += n
  }
  if (filtersSize !== f.filters_bytes || digest.digest('hex') !== f.filters_sha256) return refuse('filters.dat does not match its digest')
  const size = fs.fstatSync(fd).size
  if (size !== f.blobs_bytes) return refuse(`blobs.dat has ${size} bytes, the index says ${f.blobs_bytes}`)
  if (trees.length !== f.trees_bytes) return refuse(`trees.dat has ${trees.length} bytes, the index says ${f.trees_bytes}`)
  markUsed(path.join(dir, 'index.json'))
  const rows = new Map<string, BlobRow>(Object.entries(f.blobs))
  // Blobs whose bytes in blobs.dat matched their id in this process, and the files' state then.
  const verified = new Set<string>()
  const opened = fs.fstatSync(fd, { bigint: true })
  const filtersOpened = fs.fstatSync(ffd, { bigint: true })
  let filtersTrusted = true
  let winStart = 0
  let winEnd = 0
  const filterBytes = (offset: number, length: number): Buffer => {
    if (offset < winStart || offset + length > winEnd) {
      if (win.length < length) win = Buffer.allocUnsafe(length)
      let n = 0
      for (let got = 1; got > 0 && n < win.length; n += got) got = fs.readSync(ffd, win, n, win.length - n, offset + n)
      winStart = offset
      winEnd = offset + n
      if (n < length) throw new IndexCorrupt('filters.dat ends early')
    }
    return win.subarray(offset - winStart, offset - winStart + length)
  }
  const same = (a: fs.BigIntStats, b: fs.BigIntStats): boolean => a.ctimeNs === b.ctimeNs && a.mtimeNs === b.mtimeNs && a.size === b.size && a.ino === b.ino
  return {
    dir,
    object: (oid) => {
      const at = f.objects[oid]
      if (at === undefined) return null
      const [type, offset, length] = at
      const content = trees.subarray(offset, offset + length)
      if ((type !== 'commit' && type !== 'tree') || content.length !== length) return null
      return objectId(type, content) === oid ? { type, content } : null
    },
    info: (oid) => {
      const r = rows.get(oid)
      if (r === undefined) return undefined
      return r[1] & MISSING ? null : { size: r[0], binary: (r[1] & BINARY) !== 0 }
    },
    read: (oid, into) => {
      const r = rows.get(oid)
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
    },
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
    mayContain: (oid, hashes) => {
      if (hashes === null || !filtersTrusted) return true
      const r = rows.get(oid)
      if (r === undefined || !(r[1] & STORED) || r[1] & BINARY) return true
      const log = r[4]
      const shift = 32 - log
      const filter = filterBytes(r[3], 1 << (log - 3))
      for (let i = 0; i < hashes.length; i++) {
        const h = (hashes[i] ?? 0) >>> shift
        if (((filter[h >>> 3] ?? 0) & (1 << (h & 7))) === 0) return false
      }
      return true
    },
    audit: (oid, bytes) => {
      const r = rows.get(oid)
      if (r === undefined) return 'not in the index'
      if (bytes === null) return r[1] & MISSING ? null : 'listed as present, but git does not have it'
      if (r[1] & MISSING) return 'listed as missing, but git has it'
      if (r[0] !== bytes.length) return `listed with ${r[0]} bytes, git has ${bytes.length}`
      const binary = isBinaryBytes(bytes)
      if (((r[1] & BINARY) !== 0) !== binary) return binary ? 'listed as text, but it is binary' : 'listed as binary, but it is text'
      const store = !binary && bytes.length <= STORE_LIMIT
      if (((r[1] & STORED) !== 0) !== store) return store ? 'not stored, but it should be' : 'stored, but it should not be'
      if (!store) return null
      if (r[4] !== filterLog(bytes.length)) return 'its trigram filter has the wrong size'
      const stored = Buffer.allocUnsafe(r[0])
      if (fs.readSync(fd, stored, 0, r[0], r[2]) !== r[0] || !stored.equals(bytes)) return 'its stored bytes differ from git\'s'
      const f = trigramFilter(bytes, r[4])
      if (!filterBytes(r[3], f.length).equals(f)) return 'its trigram filter differs from the one its bytes give'
      return null
    },
    blobCount: rows.size,
    close: () => {
      fs.closeSync(fd)
      fs.closeSync(ffd)
    }
  }
}

export interface BuildProgress {
  readonly done: number
  readonly total: number
  readonly bytes: number
}

const IN_FLIGHT = 8 << 20
const BATCH = 1 << 20
const yieldNow = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Builds the index of a commit whose listing is known and publishes it. Blobs are read one at a
 * time through `reader` (so memory stays bounded) and written straight to disk.
 */
export const buildIndex = async (root: string, commit: string, treeObjects: ReadonlyMap<string, StoredObject>, entries: readonly TreeEntry[], reader: ObjectReader, onProgress?: (p: BuildProgress) => void): Promise<void> => {
  const base = path.join(root, 'snapshots', `v${VERSION}`)
  fs.mkdirSync(base, { recursive: true })
  sweepLeftovers(root)
  const tmp = path.join(root, 'snapshots', `.build-${commit}-${process.pid}-${randomBytes(4).toString('hex')}`)
  fs.mkdirSync(tmp)
  // Bytes and filters are written by a second thread while this one reads and checks objects;
  // at most IN_FLIGHT bytes wait between the two.
  const writer = new Worker(new URL('./index-writer-worker.js', import.meta.url), { workerData: { dir: tmp } })
  let inFlight = 0
  let drained: (() => void) | null = null
  let failed: unknown = null
  let done: ((r: { filtersSha256: string; filtersBytes: number }) => void) | null = null
  const finished = new Promise<{ filtersSha256: string; filtersBytes: number }>((resolve, reject) => {
    done = resolve
    writer.on('error', (e) => {
      failed = e
      drained?.()
      reject(e)
    })
    writer.on('exit', (code) => {
      if (code !== 0) {
        failed ??= new Error(`the index writer stopped (${code})`)
        drained?.()
        reject(failed)
      }
    })
  })
  finished.catch(() => undefined)
  writer.on('message', (m: WriterReply) => {
    if (m.type === 'ack') {
      inFlight -= m.bytes
      if (inFlight <= IN_FLIGHT / 2) drained?.()
    } else done?.({ filtersSha256: m.filtersSha256, filtersBytes: m.filtersBytes })
  })
  try {
    const rows: Record<string, BlobRow> = {}
    let blobsBytes = 0
    let filtersBytes = 0
    const oids = [...new Set(entries.filter((e) => e.kind === 'blob').map((e) => e.oid))]
    let last = Date.now()
    let batch = new Uint8Array(BATCH)
    let batchUsed = 0
    let batchLogs: number[] = []
    let batchSizes: number[] = []
    const flush = (): void => {
      if (batchUsed === 0) return
      writer.postMessage({ type: 'blobs', bytes: batch, used: batchUsed, sizes: batchSizes, logs: batchLogs } satisfies WriterMessage, [batch.buffer])
      inFlight += batchUsed
      batch = new Uint8Array(BATCH)
      batchUsed = 0
      batchLogs = []
      batchSizes = []
    }
    for (let i = 0; i < oids.length; i++) {
      if (failed !== null) throw failed
      const oid = oids[i] as string
      const o = reader.read(oid)
      if (o === null || o.type !== 'blob') {
        rows[oid] = [0, MISSING, 0, 0, 0]
        continue
      }
      const bytes = o.content
      const binary = isBinaryBytes(bytes)
      if (binary || bytes.length > STORE_LIMIT) {
        rows[oid] = [bytes.length, binary ? BINARY : 0, 0, 0, 0]
        continue
      }
      const log = filterLog(bytes.length)
      rows[oid] = [bytes.length, STORED, blobsBytes, filtersBytes, log]
      // Copied into a batch of its own (the reader's cache keeps the original) that moves to the writer.
      if (batchUsed + bytes.length > batch.length) flush()
      if (bytes.length > batch.length) batch = new Uint8Array(bytes.length)
      batch.set(bytes, batchUsed)
      batchUsed += bytes.length
      batchLogs.push(log)
      batchSizes.push(bytes.length)
      blobsBytes += bytes.length
      filtersBytes += 1 << (log - 3)
      if (inFlight > IN_FLIGHT) await new Promise<void>((resolve) => { drained = resolve })
      drained = null
      if (Date.now() - last > 50) {
        // Keep the event loop responsive (lease renewals, servers) while a large index builds.
        onProgress?.({ done: i + 1, total: oids.length, bytes: blobsBytes })
        await yieldNow()
        last = Date.now()
      }
    }
    flush()
    writer.postMessage({ type: 'end' } satisfies WriterMessage)
    const written = await finished
    if (written.filtersBytes !== filtersBytes) throw new Error('the index writer wrote an unexpected number of filter bytes')
    onProgress?.({ done: oids.length, total: oids.length, bytes: blobsBytes })
    const filterDigest = written.filtersSha256
    const objects: IndexFile['objects'] = {}
    const parts: Buffer[] = []
    let treesBytes = 0
    for (const [oid, o] of treeObjects) {
      objects[oid] = [o.type, treesBytes, o.content.length]
      parts.push(o.content)
      treesBytes += o.content.length
    }
    fs.writeFileSync(path.join(tmp, 'trees.dat'), Buffer.concat(parts))
    const body = JSON.stringify({
      format: FORMAT,
      version: VERSION,
      commit,
      blobs_bytes: blobsBytes,
      filters_bytes: filtersBytes,
      filters_sha256: filterDigest,
      trees_bytes: treesBytes,
      objects,
      blobs: rows
    } satisfies IndexFile)
    fs.writeFileSync(path.join(tmp, 'index.json'), `${sha256(body)}\n${body}`)
    try {
      fs.renameSync(tmp, indexDirOf(root, commit))
    } catch (e) {
      const code = (e as { code?: string }).code
      // Another process published the same commit first: its index is as good as ours.
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw e
    }
  } finally {
    await writer.terminate()
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}
