/**
 * A git snapshot: the tree of one full commit of a local clone (bare or not), read through
 * isomorphic-git with one shared object cache, never through the working tree. Branch switches,
 * pulls and edits in a working tree change nothing that is bound.
 *
 * The per-commit index (the flattened tree listing) is built once; blob contents are cached in
 * memory keyed by blob id (they are immutable) up to a byte budget. isomorphic-git keeps its
 * own pack data in the shared `cache` object, so packs are read and checked once per snapshot.
 */
import * as fs from 'node:fs'
import { createHash } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { objectStoreFs } from './object-fs.js'
import * as path from 'node:path'
import git from 'isomorphic-git'
import { failure } from '../../domain/failure.js'
import { FailureError, errnoOf } from '../fs-util.js'

export type EntryKind = 'blob' | 'symlink' | 'submodule'

export interface TreeEntry {
  readonly path: string
  readonly oid: string
  readonly mode: string
  readonly kind: EntryKind
}

export interface GitSnapshot {
  readonly commit: string
  /** Every entry of the commit's tree, sorted by path (directories flattened). */
  readonly entries: () => Promise<readonly TreeEntry[]>
  readonly entry: (p: string) => Promise<TreeEntry | undefined>
  /** Blob bytes, or null when the object is missing from the repository. */
  readonly blob: (oid: string) => Promise<Buffer | null>
}

const unavailable = (message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure('SOURCE_UNAVAILABLE', message, data))

/** The git directory of a clone: `repo/.git` for a working clone, `repo` itself when bare. */
export const resolveGitdir = (repository: string): string => {
  let st: fs.Stats
  try {
    st = fs.statSync(repository)
  } catch (e) {
    throw unavailable(`the configured repository does not exist (${errnoOf(e) ?? 'error'})`, { repository })
  }
  if (!st.isDirectory()) throw unavailable('the configured repository is not a directory', { repository })
  const dotgit = path.join(repository, '.git')
  if (fs.existsSync(dotgit)) {
    if (!fs.statSync(dotgit).isDirectory()) throw unavailable('the repository is a linked worktree (.git is a file); configure the main clone', { repository })
    return dotgit
  }
  if (fs.existsSync(path.join(repository, 'objects')) && fs.existsSync(path.join(repository, 'HEAD'))) return repository
  throw unavailable('the configured directory is not a git repository', { repository })
}

export interface SnapshotOptions {
  /** Bytes of blob contents kept in memory (default 1 GiB). */
  readonly blobCacheBytes?: number
  /**
   * A directory outside any case where the tree listing of a commit and blob contents are kept
   * across processes. Blobs are stored by git blob id and checked against it (SHA-1 of
   * "blob <size>\0" + bytes) every time they are read back; a damaged entry is read from git again.
   */
  readonly diskCache?: string
}

const SnapshotIndex = t.type({ format: t.literal('vba-snapshot-index'), version: t.literal(1), commit: t.string, tree: t.string, entries: t.array(t.type({ path: t.string, oid: t.string, mode: t.string, kind: t.keyof({ blob: null, symlink: null, submodule: null }) })) })

/** The git id a blob with these bytes has. */
export const gitBlobId = (bytes: Uint8Array): string => createHash('sha1').update(`blob ${bytes.byteLength}\0`).update(bytes).digest('hex')

const writeCacheFile = (file: string, bytes: Uint8Array | string): void => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
    fs.writeFileSync(tmp, bytes)
    fs.renameSync(tmp, file)
  } catch {
    // a cache that cannot be written only costs speed
  }
}

/**
 * isomorphic-git caches resolved pack objects only once a pack index's `readDepth` exceeds 3, but
 * never initialises that counter (it stays NaN), so every delta chain is re-inflated for every
 * blob: deep chains make a cold read of a large repository ~10x slower. Setting the counter
 * turns its own cache on. The cached objects are dropped when the snapshot has read them all.
 */
const enablePackCache = async (cache: object): Promise<Array<{ offsetCache: object }>> => {
  const indexes: Array<{ offsetCache: object }> = []
  for (const sym of Object.getOwnPropertySymbols(cache)) {
    const map = (cache as Record<symbol, unknown>)[sym]
    if (!(map instanceof Map)) continue
    for (const pending of map.values()) {
      const index: unknown = await Promise.resolve(pending).catch(() => null)
      if (index !== null && typeof index === 'object' && 'offsetCache' in index) {
        const ix = index as { readDepth?: number; offsetCache: object }
        if (!(typeof ix.readDepth === 'number' && ix.readDepth > 3)) ix.readDepth = 4
        indexes.push(ix)
      }
    }
  }
  return indexes
}

const readIndex = (file: string, commit: string): { tree: string; entries: TreeEntry[] } | null => {
  try {
    const d = SnapshotIndex.decode(JSON.parse(fs.readFileSync(file, 'utf8')))
    return E.isRight(d) && d.right.commit === commit ? { tree: d.right.tree, entries: d.right.entries } : null
  } catch {
    return null
  }
}

/** Opens the snapshot of `commit`; fails with SOURCE_UNAVAILABLE when the commit is not there. */
export const openSnapshot = async (repository: string, commit: string, options: SnapshotOptions = {}): Promise<GitSnapshot> => {
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new FailureError(failure('CONFIG_INVALID', 'the bound commit must be a full 40-hex commit id'))
  const gitdir = resolveGitdir(repository)
  const cache = {}
  const disk = options.diskCache
  const indexFile = disk === undefined ? null : path.join(disk, 'commits', `${commit}.json`)
  const cachedIndex = indexFile === null ? null : readIndex(indexFile, commit)
  // The object store is opened only when something is not in the disk cache.
  let ofsMemo: typeof fs | null = null
  const ofs = (): typeof fs => (ofsMemo ??= objectStoreFs(gitdir))
  let treeOid: string
  if (cachedIndex !== null) treeOid = cachedIndex.tree
  else {
    try {
      const { commit: c } = await git.readCommit({ fs: ofs(), gitdir, oid: commit, cache })
      treeOid = c.tree
    } catch (e) {
      throw unavailable(`commit ${commit} is not in the repository (${(e as { code?: string }).code ?? 'read error'})`, { commit })
    }
  }
  let listing: Promise<TreeEntry[]> | undefined
  let packIndexes: Array<{ offsetCache: object }> = []
  let blobCount = Number.POSITIVE_INFINITY
  const list = async (): Promise<TreeEntry[]> => {
    if (cachedIndex !== null) return cachedIndex.entries
    const out: TreeEntry[] = []
    const walk = async (oid: string, prefix: string): Promise<void> => {
      const { tree } = await git.readTree({ fs: ofs(), gitdir, oid, cache })
      for (const e of tree) {
        const p = prefix + e.path
        if (e.type === 'tree') await walk(e.oid, p + '/')
        else if (e.type === 'commit') out.push({ path: p, oid: e.oid, mode: e.mode, kind: 'submodule' })
        else out.push({ path: p, oid: e.oid, mode: e.mode, kind: e.mode === '120000' ? 'symlink' : 'blob' })
      }
    }
    try {
      await enablePackCache(cache)
      await walk(treeOid, '')
      packIndexes = await enablePackCache(cache)
    } catch (e) {
      const code = (e as { code?: string }).code
      // A tree naming `..`, `.git` or an absolute path is a property of the commit, not an outage.
      if (code === 'UnsafeFilepathError') throw new FailureError(failure('SOURCE_TREE_UNSAFE', `the tree of commit ${commit} holds an unsafe path (such as .. or .git); research refuses this commit`, { commit }))
      throw unavailable(`the tree of ${commit} cannot be read (${code ?? 'read error'})`, { commit })
    }
    const sorted = out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    if (indexFile !== null) writeCacheFile(indexFile, JSON.stringify({ format: 'vba-snapshot-index', version: 1, commit, tree: treeOid, entries: sorted }))
    return sorted
  }
  const byPath = new Map<string, TreeEntry>()
  const entries = async (): Promise<readonly TreeEntry[]> => {
    listing ??= list().then((l) => {
      for (const e of l) byPath.set(e.path, e)
      blobCount = new Set(l.filter((e) => e.kind === 'blob').map((e) => e.oid)).size
      return l
    })
    return listing
  }
  const budget = options.blobCacheBytes ?? 1 << 30
  const blobs = new Map<string, Buffer>()
  let cached = 0
  const blob = async (oid: string): Promise<Buffer | null> => {
    const hit = blobs.get(oid)
    if (hit !== undefined) return hit
    let bytes: Buffer | null = null
    const diskFile = disk === undefined ? null : path.join(disk, 'blobs', oid.slice(0, 2), oid.slice(2))
    if (diskFile !== null) {
      try {
        const b = fs.readFileSync(diskFile)
        if (gitBlobId(b) === oid) bytes = b
      } catch {
        // not cached yet
      }
    }
    if (bytes === null) {
      try {
        const r = await git.readBlob({ fs: ofs(), gitdir, oid, cache })
        bytes = Buffer.from(r.blob.buffer, r.blob.byteOffset, r.blob.byteLength)
        if (packIndexes.length === 0) packIndexes = await enablePackCache(cache)
      } catch (e) {
        const code = (e as { code?: string }).code
        if (code === 'NotFoundError') return null
        throw unavailable(`blob ${oid} cannot be read (${code ?? 'read error'})`, { oid })
      }
      if (diskFile !== null) writeCacheFile(diskFile, bytes)
    }
    if (bytes.length <= budget) {
      // First in, first out: blobs are immutable, any eviction order is correct.
      while (cached + bytes.length > budget && blobs.size > 0) {
        const [first, b] = blobs.entries().next().value as [string, Buffer]
        blobs.delete(first)
        cached -= b.length
      }
      blobs.set(oid, bytes)
      cached += bytes.length
      // Every blob of the commit is in our cache: isomorphic-git's copies are no longer needed.
      if (blobs.size >= blobCount) for (const ix of packIndexes) ix.offsetCache = {}
    }
    return bytes
  }
  return {
    commit,
    entries,
    entry: async (p) => {
      await entries()
      return byPath.get(p)
    },
    blob
  }
}
