import { createHash } from 'node:crypto'
import { failure } from '../../failures/failure.js'
import { errnoOf } from '../fs-util.js'
import { FailureError } from '../../failures/error.js'
import { ObjectStoreError, type ObjectReader } from './object-reader.js'
import { isoObjects, packObjects, type Objects } from './object-source.js'
import { IndexCorrupt, openIndex, type BlobInfo, type SnapshotIndex, type TreeEntry } from './snapshot-index.js'
import { isBinaryBytes, type StoredObject } from './index-format.js'
import type { BuildProgress, IndexBuild } from './index-build.js'
import { discardIndex, indexDistrust } from './index-cache.js'
import { listTree, resolveGitdir, unavailable } from './tree.js'
import { byteCache } from './byte-cache.js'

export type { BlobInfo, EntryKind, TreeEntry } from './snapshot-index.js'
export type { BuildProgress } from './index-build.js'
export { needleHashes, isBinaryBytes } from './index-format.js'
export { discardIndex, indexBytes, indexDirOf, pruneIndexes, type PrunedIndex } from './index-cache.js'

export interface GitSnapshot {
  readonly commit: string
  /** Every entry of the commit's tree, sorted by path (directories flattened). */
  readonly entries: () => Promise<readonly TreeEntry[]>
  readonly entry: (p: string) => Promise<TreeEntry | undefined>
  /** Blob bytes, or null when the object is missing from the repository. */
  readonly blob: (oid: string) => Promise<Buffer | null>
  /**
   * Blob bytes for a scan: possibly a view of a buffer that the next call reuses (copy what must
   * be kept). Not added to the blob cache.
   */
  readonly scanBlob: (oid: string) => Promise<Buffer | null>
  /**
   * After a scan: false when the index's data file was written while blobs were being read (the
   * scan must then be run again; every blob is checked against its id again).
   */
  readonly settled: () => boolean
  /** SHA-256 of a blob's bytes (remembered per blob id for the session). */
  readonly sha256: (oid: string, bytes: Buffer) => string
  /** Size and kind of a blob without necessarily reading it; null when it is missing. */
  readonly info: (oid: string) => Promise<BlobInfo | null>
  /** Size and kind from the snapshot index without waiting; undefined when the index does not know. */
  readonly known: (oid: string) => BlobInfo | null | undefined
  /**
   * False only when the blob certainly does not contain the needle (see needleHashes); `folded`:
   * in any case (the hashes of the needle with its ASCII capitals lowered).
   */
  readonly mayContain: (oid: string, hashes: Uint32Array | null, folded?: boolean) => boolean
  /** Closes open files; the snapshot must not be used afterwards. */
  readonly close: () => void
}

/** @category research */
export interface SnapshotNotice {
  readonly code: 'SOURCE_INDEX_CORRUPT' | 'SOURCE_INDEX_UNAVAILABLE' | 'SOURCE_INDEX_UNTRUSTED' | 'SOURCE_INDEX_BUILT'
  readonly message: string
  readonly commit: string
}

export interface SnapshotOptions {
  /** Bytes of blob contents kept in memory (default 32 MiB). */
  readonly blobCacheBytes?: number
  /** Bytes of resolved pack objects (delta bases) kept in memory (default 16 MiB). */
  readonly objectCacheBytes?: number
  /** Root of the persisted snapshot indexes; absent: none (objects are read from git). */
  readonly index?: string
  /** How git objects are read: the pack reader (default) or isomorphic-git (the reference). */
  readonly reader?: 'pack' | 'isomorphic-git'
  /** Index events worth telling a person about: built, found damaged (and rebuilt), unusable. */
  readonly onNotice?: (n: SnapshotNotice) => void
  /** Progress of an index build. */
  readonly onProgress?: (p: BuildProgress) => void
}

/** Opens the snapshot of `commit`; reading fails with SOURCE_UNAVAILABLE when the commit is not there. */
export const openSnapshot = async (
  repository: string,
  commit: string,
  options: SnapshotOptions = {}
): Promise<GitSnapshot> => {
  if (!/^[0-9a-f]{40}$/.test(commit))
    throw new FailureError(failure('CONFIG_INVALID', 'the bound commit must be a full 40-hex commit id'))
  const gitdir = resolveGitdir(repository)
  const objects =
    options.reader === 'isomorphic-git' ? isoObjects(gitdir) : packObjects(gitdir, options.objectCacheBytes ?? 16 << 20)
  const s = openSession(commit, objects, options)
  const listing = treeListing(s, options.onProgress)
  const blobs = blobReader(s, listing.entries, options.blobCacheBytes ?? 32 << 20)
  const digests = new Map<string, string>()
  let filtersReported = false
  return {
    commit,
    entries: listing.entries,
    entry: listing.entry,
    blob: blobs.blob,
    scanBlob: blobs.scanBlob,
    settled: () => {
      if (s.index === null || s.index.unchanged()) return true
      digests.clear()
      if (!s.index.filtersTrusted() && s.root !== undefined && !filtersReported) {
        // A published index is never written: this one is damaged. The next process rebuilds it.
        filtersReported = true
        s.notice(
          'SOURCE_INDEX_CORRUPT',
          `the snapshot index of ${commit} is damaged (a filter file was written while in use); it is discarded and rebuilt by the next process`
        )
        discardIndex(s.root, commit)
      }
      return false
    },
    sha256: (oid, bytes) => {
      let d = digests.get(oid)
      if (d === undefined) {
        d = createHash('sha256').update(bytes).digest('hex')
        digests.set(oid, d)
      }
      return d
    },
    info: async (oid) => {
      await listing.entries()
      const i = s.index?.info(oid)
      if (i !== undefined) return i
      const b = await blobs.blob(oid)
      return b === null ? null : { size: b.length, binary: isBinaryBytes(b) }
    },
    known: (oid) => s.index?.info(oid),
    mayContain: (oid, hashes, folded) => {
      if (s.index === null) return true
      try {
        return s.index.mayContain(oid, hashes, folded)
      } catch (e) {
        if (!(e instanceof IndexCorrupt) || s.root === undefined) throw e
        // folded.dat failed its check on first use: nothing is skipped, and the index goes.
        s.notice(
          'SOURCE_INDEX_CORRUPT',
          `the snapshot index of ${commit} is damaged (${e.message}); it is discarded and rebuilt by the next process`
        )
        dropIndex(s, s.root)
        return true
      }
    },
    close: () => {
      s.index?.close()
      objects.close()
      blobs.clear()
    }
  }
}

/** What the parts of one open snapshot share: the commit, git's objects and the index in use. */
interface Session {
  readonly commit: string
  readonly objects: Objects
  /** Where the index lives; undefined when there is none or it is not trusted (git is read). */
  readonly root: string | undefined
  readonly notice: (code: SnapshotNotice['code'], message: string) => void
  /** The index in use; null while there is none (not built yet, or found damaged and dropped). */
  index: SnapshotIndex | null
}

/** The session of a snapshot, with the stored index when it is trusted and sound (a damaged one is discarded). */
const openSession = (commit: string, objects: Objects, options: SnapshotOptions): Session => {
  const notice = (code: SnapshotNotice['code'], message: string): void => options.onNotice?.({ code, message, commit })
  // An index another user could have written is neither read nor built: research reads git.
  const distrust = options.index === undefined ? null : indexDistrust(options.index, commit)
  if (distrust !== null)
    notice('SOURCE_INDEX_UNTRUSTED', `the snapshot index of ${commit} is not used: ${distrust}; reading from git`)
  const s: Session = { commit, objects, root: distrust === null ? options.index : undefined, notice, index: null }
  if (s.root !== undefined) {
    const found = openIndex(s.root, commit)
    if (found !== null && 'reason' in found) {
      notice('SOURCE_INDEX_CORRUPT', `the snapshot index of ${commit} is damaged (${found.reason}); it is rebuilt`)
      discardIndex(s.root, commit)
    } else s.index = found
  }
  return s
}

/** Stops using a damaged index: this snapshot reads git from now on, and the index is discarded. */
const dropIndex = (s: Session, root: string): void => {
  s.index?.close()
  s.index = null
  discardIndex(root, s.commit)
}

/** The listing, loaded on first use and kept (a load that failed is tried again on the next call). */
const treeListing = (s: Session, onProgress: SnapshotOptions['onProgress']): Pick<GitSnapshot, 'entries' | 'entry'> => {
  let listing: Promise<readonly TreeEntry[]> | undefined
  const paths = new Map<string, TreeEntry>()
  const entries = async (): Promise<readonly TreeEntry[]> => {
    listing ??= loadListing(s, onProgress).then(
      (l) => {
        for (const e of l) paths.set(e.path, e)
        return l
      },
      (e: unknown) => {
        listing = undefined
        throw e
      }
    )
    return listing
  }
  return {
    entries,
    entry: async (p) => {
      await entries()
      return paths.get(p)
    }
  }
}

/** The listing from the index, or walked from git (and the index built from that walk). */
const loadListing = async (s: Session, onProgress: SnapshotOptions['onProgress']): Promise<readonly TreeEntry[]> => {
  // The listing the index stores, sealed by index.json's digest (checked when it was opened).
  if (s.index !== null && s.root !== undefined) return s.index.listing()
  const trees = new Map<string, StoredObject>()
  const reader = s.objects.sync
  // The build starts first: its writer thread loads while the listing is walked.
  const build = s.root !== undefined && reader !== undefined ? await startBuild(s.root, s.commit) : undefined
  let listed: readonly TreeEntry[]
  try {
    listed = await listTree(s.objects, s.commit, trees)
  } catch (e) {
    if (build !== undefined && !('failed' in build)) await build.abandon()
    throw e
  }
  if (build !== undefined && s.root !== undefined && reader !== undefined)
    await publishIndex(s, s.root, build, reader, trees, listed, onProgress)
  return listed
}

/** A build started (index-build.ts), or why it could not start. */
type StartedBuild = IndexBuild | { readonly failed: unknown }

const startBuild = (root: string, commit: string): Promise<StartedBuild> =>
  // The builder (and its writer thread) loads only when an index is built, not when one is opened.
  import('./index-build.js').then((m) => m.startIndexBuild(root, commit)).catch((e: unknown) => ({ failed: e }))

/** Builds, publishes and opens the index; one that cannot be written is reported and git is read. */
const publishIndex = async (
  s: Session,
  root: string,
  build: StartedBuild,
  reader: ObjectReader,
  trees: ReadonlyMap<string, StoredObject>,
  listed: readonly TreeEntry[],
  onProgress: SnapshotOptions['onProgress']
): Promise<void> => {
  try {
    if ('failed' in build) throw build.failed
    await build.finish(trees, listed, reader, onProgress)
    const built = openIndex(root, s.commit)
    if (built === null || 'reason' in built)
      throw new Error(built === null ? 'it vanished after publishing' : built.reason)
    s.index = built
    s.notice('SOURCE_INDEX_BUILT', `built the snapshot index of ${s.commit} in ${root}`)
  } catch (e) {
    if (e instanceof ObjectStoreError)
      throw unavailable(`the objects of ${s.commit} cannot be read (${e.message})`, { commit: s.commit })
    s.notice(
      'SOURCE_INDEX_UNAVAILABLE',
      `the snapshot index of ${s.commit} cannot be written in ${root} (${errnoOf(e) ?? (e as Error).message}); reading from git`
    )
  }
}

/** Blob bytes from the index or from git, the most recently read kept within a byte budget. */
interface BlobReader {
  readonly blob: (oid: string) => Promise<Buffer | null>
  /** For a scan: possibly a view of a buffer the next call reuses; not kept. */
  readonly scanBlob: (oid: string) => Promise<Buffer | null>
  readonly clear: () => void
}

const blobReader = (s: Session, ready: () => Promise<unknown>, budget: number): BlobReader => {
  // Blobs by id, least recently used first; a blob over a quarter of the budget is not kept.
  const kept = byteCache(budget, (b: Buffer) => b.length)
  let scratch = Buffer.alloc(0)
  /** From the index: undefined when it has not got the blob or was found damaged (then dropped). */
  const fromIndex = (index: SnapshotIndex, oid: string, transient: boolean): Buffer | undefined => {
    let bytes: Buffer | undefined
    try {
      if (transient) {
        const size = index.info(oid)?.size ?? 0
        if (scratch.length < size) scratch = Buffer.allocUnsafe(Math.max(size, Math.min(2 * scratch.length, 16 << 20)))
        return index.read(oid, scratch)
      }
      bytes = index.read(oid)
      // A read outside a scan is vouched for at once: re-read (and hash) if the file was written.
      if (bytes !== undefined && !index.unchanged()) bytes = index.read(oid)
      return bytes
    } catch (e) {
      if (!(e instanceof IndexCorrupt) || s.root === undefined) throw e
      // Never served: the damaged index goes, this snapshot reads from git, the next process rebuilds.
      s.notice(
        'SOURCE_INDEX_CORRUPT',
        `the snapshot index of ${s.commit} is damaged (${e.message}); it is discarded and rebuilt by the next process`
      )
      dropIndex(s, s.root)
      return undefined
    }
  }
  const read = async (oid: string, transient: boolean): Promise<Buffer | null> => {
    await ready()
    const hit = kept.get(oid)
    if (hit !== undefined) return hit
    let bytes: Buffer | null | undefined = s.index === null ? undefined : fromIndex(s.index, oid, transient)
    if (bytes !== undefined && transient) return bytes
    if (bytes === undefined && s.index !== null && s.index.info(oid) === null) return null
    bytes ??= await fromGit(s.objects, oid)
    if (bytes !== null) kept.remember(oid, bytes)
    return bytes
  }
  return { blob: (oid) => read(oid, false), scanBlob: (oid) => read(oid, true), clear: kept.clear }
}

/** A blob from git's objects; null when it is missing or not a blob. */
const fromGit = async (objects: Objects, oid: string): Promise<Buffer | null> => {
  try {
    const o = await objects.read(oid)
    return o === null || o.type !== 'blob' ? null : o.content
  } catch (e) {
    throw unavailable(
      `blob ${oid} cannot be read (${(e as { code?: string }).code ?? (e instanceof ObjectStoreError ? e.message : 'read error')})`,
      { oid }
    )
  }
}
