/**
 * The repository and its trees: where the git directory of a clone is, the names git would refuse
 * (checked as git does), and the listing of a tree with its blobs (every object checked).
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { failure } from '../../failures/failure.js'
import { errnoOf } from '../fs-util.js'
import { FailureError } from '../../failures/error.js'
import { ObjectStoreError, type ObjectType } from './object-reader.js'
import type { Objects } from './object-source.js'
import type { EntryKind, TreeEntry } from './snapshot-index.js'
import type { StoredObject } from './index-format.js'

export const unavailable = (message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure('SOURCE_UNAVAILABLE', message, data))

/** The git directory of a clone: `repo/.git` for a working clone, `repo` itself when bare. */
export const resolveGitdir = (repository: string): string => {
  let st: fs.Stats
  try {
    st = fs.statSync(repository)
  } catch (e) {
    throw unavailable(`the configured repository ${repository} does not exist (${errnoOf(e) ?? 'error'})`, {
      repository
    })
  }
  if (!st.isDirectory()) throw unavailable(`the configured repository ${repository} is not a directory`, { repository })
  const dotgit = path.join(repository, '.git')
  if (fs.existsSync(dotgit)) {
    if (!fs.statSync(dotgit).isDirectory())
      throw unavailable(
        `the repository ${repository} is a linked worktree (.git is a file); configure the main clone`,
        {
          repository
        }
      )
    return dotgit
  }
  if (fs.existsSync(path.join(repository, 'objects')) && fs.existsSync(path.join(repository, 'HEAD'))) return repository
  throw unavailable(`the configured directory ${repository} is not a git repository`, { repository })
}

// Mirrors git's verify_path() as isomorphic-git applies it: separators, `.`/`..` and names that
// alias them on Windows, `.git` in every spelling (NTFS, HFS+, 8.3 short names). A plain name
// (letters, digits, `_`, `-` and dots, not first) is none of these: most names take that test only.
const PLAIN_NAME = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/
const assertSafeName = (name: string): boolean => {
  if (PLAIN_NAME.test(name)) return true
  const hfs = name.replace(/[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g, '')
  const ntfs = hfs.split(':')[0] ?? ''
  let lower = ntfs.toLowerCase()
  let end = lower.length
  while (end > 0 && (lower.charCodeAt(end - 1) === 46 || lower.charCodeAt(end - 1) === 32)) end--
  lower = lower.slice(0, end)
  return !(
    name === '' ||
    name.includes('\\') ||
    name.includes('/') ||
    name.includes('\0') ||
    (lower === '' && ntfs !== '') ||
    lower === '.git' ||
    /^\.?git~[1-9]$/.test(lower)
  )
}

class UnsafeTree extends Error {}

const parseTree = (content: Buffer): Array<{ mode: string; name: string; oid: string }> => {
  const out: Array<{ mode: string; name: string; oid: string }> = []
  let at = 0
  while (at < content.length) {
    const sp = content.indexOf(32, at)
    const nul = content.indexOf(0, sp + 1)
    if (sp < 0 || nul < 0 || nul + 21 > content.length)
      throw new ObjectStoreError('OBJECT_CORRUPT', 'a tree object is malformed')
    let mode = content.toString('latin1', at, sp)
    if (mode === '40000') mode = '040000'
    const name = content.toString('utf8', sp + 1, nul)
    if (!assertSafeName(name)) throw new UnsafeTree(name)
    out.push({ mode, name, oid: content.toString('hex', nul + 1, nul + 21) })
    at = nul + 21
  }
  return out
}

/** What a listing entry of this (non-tree) mode is. */
export const kindOf = (mode: string): EntryKind =>
  mode === '160000' ? 'submodule' : mode === '120000' ? 'symlink' : 'blob'

const byPath = (a: { path: string }, b: { path: string }): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)

/**
 * The flattened listing of a commit's tree, sorted by path. `record` receives the commit and every
 * tree object read (what the snapshot index stores to walk the listing again, checked, later).
 */
export const listTree = async (
  objects: Objects,
  commit: string,
  record?: Map<string, StoredObject>
): Promise<TreeEntry[]> => {
  let c: { type: ObjectType; content: Buffer } | null
  try {
    c = await objects.read(commit)
  } catch (e) {
    throw unavailable(`commit ${commit} cannot be read (${(e as { code?: string }).code ?? 'read error'})`, { commit })
  }
  const m = c?.type === 'commit' ? /^tree ([0-9a-f]{40})\n/.exec(c.content.toString('latin1', 0, 46)) : null
  if (c === null || m?.[1] === undefined)
    throw unavailable(`commit ${commit} is not in the repository (NotFoundError)`, { commit })
  record?.set(commit, { type: 'commit', content: c.content })
  const tree = m[1]
  const out: TreeEntry[] = []
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const t = await objects.read(oid)
    if (t === null || t.type !== 'tree') throw new ObjectStoreError('OBJECT_CORRUPT', `tree ${oid} is missing`)
    record?.set(oid, { type: 'tree', content: t.content })
    for (const e of parseTree(t.content)) {
      const p = prefix + e.name
      if (e.mode === '040000') await walk(e.oid, `${p}/`)
      else out.push({ path: p, oid: e.oid, mode: e.mode, kind: kindOf(e.mode) })
    }
  }
  try {
    await walk(tree, '')
  } catch (e) {
    // A tree naming `..`, `.git` or an absolute path is a property of the commit, not an outage.
    if (e instanceof UnsafeTree || (e as { code?: string }).code === 'UnsafeFilepathError')
      throw new FailureError(
        failure(
          'SOURCE_TREE_UNSAFE',
          `the tree of commit ${commit} holds an unsafe path (such as .. or .git); research refuses this commit`,
          { commit }
        )
      )
    throw unavailable(`the tree of ${commit} cannot be read (${(e as { code?: string }).code ?? 'read error'})`, {
      commit
    })
  }
  return out.sort(byPath)
}
