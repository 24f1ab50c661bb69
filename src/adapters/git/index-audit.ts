/**
 * `vba index verify`: re-derives the whole snapshot index of a commit from git and compares, so a
 * consistent forgery of the derived data (which its digests cannot show) is found too.
 */
import { failure } from '../../failures/failure.js'
import { FailureError } from '../../failures/error.js'
import { ObjectStoreError, type ObjectType } from './object-reader.js'
import { indexDirOf } from './index-cache.js'
import { openIndex, type TreeEntry } from './snapshot-index.js'
import type { BuildProgress } from './index-build.js'
import { packObjects } from './object-source.js'
import { listTree, resolveGitdir, unavailable } from './tree.js'

export interface IndexAudit {
  readonly commit: string
  readonly dir: string
  /** False when there is no index of the commit (nothing to check). */
  readonly present: boolean
  readonly blobs: number
  /** What differs from git (the first 100), and how many problems there are in all. */
  readonly problems: readonly string[]
  readonly problemCount: number
}

/**
 * Re-derives the whole snapshot index of `commit` from git and compares: the listing (walked from
 * the stored tree objects and from git's), and for every blob its flags, size, stored bytes and
 * trigram filters. This also catches what the digests cannot: a consistent forgery of the derived
 * data. Costs about as much as building the index.
 */
export const auditSnapshotIndex = async (
  repository: string,
  commit: string,
  root: string,
  onProgress?: (p: BuildProgress) => void
): Promise<IndexAudit> => {
  if (!/^[0-9a-f]{40}$/.test(commit))
    throw new FailureError(failure('CONFIG_INVALID', 'the bound commit must be a full 40-hex commit id'))
  const gitdir = resolveGitdir(repository)
  const dir = indexDirOf(root, commit)
  const found = openIndex(root, commit)
  if (found === null) return { commit, dir, present: false, blobs: 0, problems: [], problemCount: 0 }
  if ('reason' in found) return { commit, dir, present: true, blobs: 0, problems: [found.reason], problemCount: 1 }
  const problems: string[] = []
  let count = 0
  const problem = (p: string): void => {
    count++
    if (problems.length < 100) problems.push(p)
  }
  const objects = packObjects(gitdir, 16 << 20)
  try {
    const fromGit = await listTree(objects, commit)
    let stored: TreeEntry[] | null = null
    try {
      stored = await listTree({ read: async (oid) => found.object(oid), close: () => undefined }, commit)
    } catch {
      problem('its commit or tree objects do not match their ids')
    }
    if (stored !== null && JSON.stringify(stored) !== JSON.stringify(fromGit))
      problem("its commit and tree objects give a listing that differs from git's")
    if (JSON.stringify(found.listing()) !== JSON.stringify(fromGit)) problem("its listing differs from git's")
    const seen = new Map<string, string>()
    for (const e of fromGit) if (e.kind === 'blob' && !seen.has(e.oid)) seen.set(e.oid, e.path)
    if (found.blobCount !== seen.size) problem(`it describes ${found.blobCount} blobs, the commit has ${seen.size}`)
    const filters = found.filtersProblem()
    if (filters !== null) problem(filters)
    let done = 0
    let last = Date.now()
    for (const [oid, p] of seen) {
      let o: { type: ObjectType; content: Buffer } | null
      try {
        o = await objects.read(oid)
      } catch (e) {
        throw unavailable(`blob ${oid} cannot be read (${e instanceof ObjectStoreError ? e.message : 'read error'})`, {
          oid
        })
      }
      const why = found.audit(oid, o === null || o.type !== 'blob' ? null : o.content)
      if (why !== null) problem(`${p} (blob ${oid}): ${why}`)
      done++
      if (Date.now() - last > 50) {
        onProgress?.({ done, total: seen.size, bytes: 0 })
        await new Promise((resolve) => setImmediate(resolve))
        last = Date.now()
      }
    }
    onProgress?.({ done, total: seen.size, bytes: 0 })
    return { commit, dir, present: true, blobs: seen.size, problems, problemCount: count }
  } finally {
    found.close()
    objects.close()
  }
}
