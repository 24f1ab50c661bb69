/**
 * The cache directory of snapshot indexes (`<root>/snapshots/v4/<commit>/`): where an index lives,
 * whether this process may trust what is there, and its upkeep (pruning, discarding, sweeping what
 * dead builders left).
 *
 * Trust: the index only makes a search skip files, and its digests protect against damage, not
 * against a person who can write the directory. So an index is used only when every directory
 * from `snapshots/` down and every file of it is owned by this user and writable by nobody else
 * (group-writable only for the user's own group) and none of them is a symbolic link; otherwise
 * it is reported (SOURCE_INDEX_UNTRUSTED) and research reads git.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import { errnoOf, processAlive } from '../fs-util.js'

/** The layout's version, in the directory's name: an index of another version is not read (built anew). */
export const INDEX_VERSION = 4
/** The files of a published index. */
const INDEX_FILES = ['index.json', 'trees.dat', 'blobs.dat', 'filters.dat', 'folded.dat'] as const

export const indexDirOf = (root: string, commit: string): string =>
  path.join(root, 'snapshots', `v${INDEX_VERSION}`, commit)

/**
 * Why the index of `commit` under `root` must not be trusted, or null when it may be (or when
 * nothing of it exists yet: a build creates it as this user). Checks the directories
 * `snapshots/`, `snapshots/v4/`, the commit's directory and its files as they exist.
 */
export const indexDistrust = (root: string, commit: string): string | null => {
  const uid = typeof process.getuid === 'function' ? process.getuid() : null
  const gid = typeof process.getgid === 'function' ? process.getgid() : null
  const dir = indexDirOf(root, commit)
  const parts = [path.join(root, 'snapshots'), path.dirname(dir), dir, ...INDEX_FILES.map((f) => path.join(dir, f))]
  for (const p of parts) {
    let st: fs.Stats
    try {
      st = fs.lstatSync(p)
    } catch (e) {
      // Not there (or the cache path is not a directory: building will say so).
      if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') continue
      return `${p} cannot be examined (${errnoOf(e) ?? 'error'})`
    }
    if (st.isSymbolicLink()) return `${p} is a symbolic link`
    if (uid !== null && st.uid !== uid) return `${p} belongs to user ${st.uid}, not to this user (${uid})`
    if ((st.mode & 0o002) !== 0) return `${p} is writable by every user`
    if ((st.mode & 0o020) !== 0 && gid !== null && st.gid !== gid) return `${p} is writable by group ${st.gid}`
  }
  return null
}

const HOUR = 3_600_000

/** The mtime of index.json is the index's last use (kept to the hour): what `pruneIndexes` reads. */
export const markUsed = (file: string): void => {
  try {
    const now = Date.now()
    if (now - fs.statSync(file).mtimeMs > HOUR) fs.utimesSync(file, now / 1000, now / 1000)
  } catch {
    // a read-only cache is still usable
  }
}

/** Bytes on disk of one published index directory. */
export const indexBytes = (dir: string): number =>
  fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0)

export interface PrunedIndex {
  readonly commit: string
  readonly bytes: number
  readonly last_used: string
}

/**
 * Removes the indexes of commits not used for `olderThanMs` (by the mtime of their index.json),
 * except those in `keep`. Returns what was removed.
 */
export const pruneIndexes = (
  root: string,
  olderThanMs: number,
  keep: ReadonlySet<string>,
  now: number = Date.now()
): PrunedIndex[] => {
  const base = path.join(root, 'snapshots', `v${INDEX_VERSION}`)
  let names: string[]
  try {
    names = fs.readdirSync(base)
  } catch {
    return []
  }
  const removed: PrunedIndex[] = []
  for (const commit of names.sort()) {
    if (!/^[0-9a-f]{40}$/.test(commit) || keep.has(commit)) continue
    const dir = path.join(base, commit)
    let used: number
    try {
      used = fs.statSync(path.join(dir, 'index.json')).mtimeMs
    } catch {
      used = fs.statSync(dir).mtimeMs
    }
    if (now - used < olderThanMs) continue
    const bytes = indexBytes(dir)
    if (!discardIndex(root, commit).removed) continue
    removed.push({ commit, bytes, last_used: new Date(used).toISOString() })
  }
  return removed
}

/**
 * Moves a damaged index out of the way (readers holding its files keep them) and deletes it. Says
 * whether it is gone: false, with the reason, when this user may not remove it.
 */
export const discardIndex = (root: string, commit: string): { readonly removed: boolean; readonly reason?: string } => {
  const dir = indexDirOf(root, commit)
  const trash = path.join(root, 'snapshots', `.trash-${commit}-${process.pid}-${randomBytes(4).toString('hex')}`)
  try {
    fs.renameSync(dir, trash)
  } catch (e) {
    // Already gone (another process discarded or replaced it), or not ours to move.
    const code = errnoOf(e)
    return code === 'ENOENT' ? { removed: true } : { removed: false, reason: code ?? 'error' }
  }
  try {
    fs.rmSync(trash, { recursive: true, force: true })
  } catch (e) {
    return { removed: false, reason: `moved to ${path.basename(trash)} but not deleted (${errnoOf(e) ?? 'error'})` }
  }
  return { removed: true }
}

/**
 * Removes what builders and discarders that died left behind (`.build-*`, `.trash-*` of processes
 * that no longer run on this machine). Returns the names removed.
 */
export const sweepLeftovers = (root: string): string[] => {
  const dir = path.join(root, 'snapshots')
  const removed: string[] = []
  let names: string[]
  try {
    names = fs.readdirSync(dir)
  } catch {
    return removed
  }
  for (const name of names) {
    const m = /^\.(?:build|trash)-[0-9a-f]{40}-(\d+)-[0-9a-f]+$/.exec(name)
    if (m?.[1] === undefined || processAlive(Number(m[1]))) continue
    fs.rmSync(path.join(dir, name), { recursive: true, force: true })
    removed.push(name)
  }
  return removed
}
