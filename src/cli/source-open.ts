/** The source half as the CLI opens it: snapshot-index notices and build progress on stderr. */
import type { Profile } from '../adapters/config/profile.js'
import type { SnapshotNotice } from '../adapters/git/snapshot.js'
import type { SourceRunner } from '../research/project-research.js'
import { openSourceResearch, type SourceOpenOptions } from '../research/source/open.js'
import { progressBar, terminalText } from './io.js'

/** A damaged or unwritable index is always said; a build only on a terminal (with its progress). */
export const printNotice = (n: SnapshotNotice): void => {
  if (n.code !== 'SOURCE_INDEX_BUILT' || process.stderr.isTTY === true)
    process.stderr.write(`vba: ${n.code}: ${terminalText(n.message)}\n`)
}

export const cliOpenSource = async (profile: Profile, options: SourceOpenOptions): Promise<SourceRunner> => {
  const bar = progressBar('building the snapshot index (once per commit)')
  return openSourceResearch(profile, {
    ...options,
    onNotice: printNotice,
    onProgress: (p) => {
      bar.update(p.done, p.total)
      if (p.done >= p.total) bar.stop()
    }
  })
}
