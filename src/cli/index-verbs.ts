/**
 * `vba index build|verify --config FILE`: the persisted snapshot index of the profile's source
 * commit. build makes it ahead of time (a deploy step, so that no worker pays for it); verify
 * re-derives all of it from git and removes it when anything differs; prune removes the indexes of
 * other commits not used for a while.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { fail } from '../failures/error.js'
import { loadProfile, type Profile } from '../adapters/config/profile.js'
import { discardIndex, indexBytes, indexDirOf, openSnapshot, pruneIndexes } from '../adapters/git/snapshot.js'
import { auditSnapshotIndex } from '../adapters/git/index-audit.js'
import { snapshotIndexRoot } from '../research/source/open.js'
import type { Out } from './case-verbs.js'
import { CliExit, EXIT, progressBar, terminalText } from './io.js'
import { printNotice } from './source-open.js'

interface IndexOptions {
  readonly config: string
  readonly json?: boolean
}

const bound = (profile: Profile): { repository: string; commit: string; root: string } => {
  const source = profile.source
  if (source === undefined) fail('SOURCE_NOT_CONFIGURED', 'the profile has no [source] section')
  const root = snapshotIndexRoot(profile)
  if (root === undefined) fail('CONFIG_INVALID', 'the profile turns the snapshot index off ([source] cache = false)')
  return { repository: source.repository, commit: source.commit, root }
}

const mib = (n: number): string => `${(n / 2 ** 20).toFixed(1)} MiB`

export const indexBuild = async (io: Out, o: IndexOptions): Promise<void> => {
  const { repository, commit, root } = bound(await loadProfile(o.config))
  const dir = indexDirOf(root, commit)
  const existed = fs.existsSync(dir)
  const bar = progressBar('building the snapshot index')
  const snap = await openSnapshot(repository, commit, {
    index: root,
    onNotice: printNotice,
    onProgress: (p) => bar.update(p.done, p.total)
  })
  try {
    const entries = await snap.entries()
    bar.stop()
    if (!fs.existsSync(dir))
      fail('SOURCE_UNAVAILABLE', `the snapshot index of ${commit} could not be written in ${root}`, { root })
    const built = !existed || !fs.existsSync(path.join(dir, 'index.json'))
    const bytes = indexBytes(dir)
    if (o.json === true) io.out(JSON.stringify({ commit, dir, built, entries: entries.length, bytes }))
    else
      io.out(
        `${built ? 'built' : 'already there'}: the snapshot index of ${commit} in ${dir} (${entries.length} tree entries, ${mib(bytes)})`
      )
  } finally {
    bar.stop()
    snap.close()
  }
}

export const indexVerify = async (io: Out, o: IndexOptions): Promise<void> => {
  const { repository, commit, root } = bound(await loadProfile(o.config))
  const bar = progressBar('verifying the snapshot index against git')
  const audit = await auditSnapshotIndex(repository, commit, root, (p) => bar.update(p.done, p.total)).finally(() =>
    bar.stop()
  )
  if (!audit.present)
    fail('SOURCE_INDEX_MISSING', `there is no snapshot index of ${commit} in ${root} (vba index build makes one)`, {
      root
    })
  // Removed only if this user may: the outcome is reported as it is, never assumed.
  const removal = audit.problemCount > 0 ? discardIndex(root, commit) : null
  if (o.json === true)
    io.out(
      JSON.stringify({
        commit,
        dir: audit.dir,
        valid: audit.problemCount === 0,
        blobs: audit.blobs,
        problem_count: audit.problemCount,
        problems: audit.problems,
        removed: removal?.removed ?? false,
        ...(removal?.reason === undefined ? {} : { not_removed: removal.reason })
      })
    )
  if (audit.problemCount > 0) {
    for (const p of audit.problems) io.err(`vba: SOURCE_INDEX_CORRUPT: ${terminalText(p)}`)
    if (audit.problemCount > audit.problems.length)
      io.err(`vba: … and ${audit.problemCount - audit.problems.length} more`)
    if (removal?.removed === true)
      io.err(`the damaged snapshot index of ${commit} was removed; the next session (or vba index build) rebuilds it`)
    else
      io.err(
        `vba: the damaged snapshot index of ${commit} could NOT be removed (${removal?.reason ?? 'unknown'}); its owner must remove ${audit.dir}`
      )
    throw new CliExit(EXIT.FINDINGS)
  }
  if (o.json !== true)
    io.out(
      `valid: the snapshot index of ${commit} (${audit.blobs} blobs; listing, sizes, flags, stored bytes and trigram filters re-derived from git)`
    )
}

export const indexPrune = async (io: Out, o: IndexOptions & { olderThan: number }): Promise<void> => {
  const { commit, root } = bound(await loadProfile(o.config))
  const removed = pruneIndexes(root, o.olderThan * 86_400_000, new Set([commit]))
  if (o.json === true) {
    io.out(JSON.stringify({ root, kept: commit, removed }))
    return
  }
  for (const r of removed)
    io.out(`removed the snapshot index of ${r.commit} (${mib(r.bytes)}, last used ${r.last_used})`)
  io.out(
    `${removed.length} index(es) removed, ${mib(removed.reduce((n, r) => n + r.bytes, 0))} freed; kept ${commit} (bound by the profile)`
  )
}
