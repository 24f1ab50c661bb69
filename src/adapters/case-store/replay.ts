/** Replay: fold every event of a case through projections, with the chain checked on the way. */
import * as path from 'node:path'
import { isError, type Finding } from '../../events/findings.js'
import { fold, type AnyProjection } from '../../projections/projection.js'
import { FailureError, coded } from '../../failures/error.js'
import { corrupt } from './handle.js'
import { ensureCaseDir } from './case-dir.js'
import { scanCase, type ScanResult } from './scan.js'
import { startLineWorkersFor } from './feed-log.js'
import { LOG_FILE } from './layout.js'
import type { RecordedEvent } from '../../events/chain.js'

/** @category cases */
export interface ReplayResult {
  readonly case_id: string
  readonly generation: number
  readonly head_hash: string
  readonly views: Record<string, { readonly version: number; readonly view: unknown }>
  /** Crash leftovers noticed (never errors: an invalid log is CASE_CORRUPT). */
  readonly notices: readonly Finding[]
}

/**
 * Folds `projections` over the events a scan of a whole log feeds them (`scan` takes the feed), as
 * a replay; a log with an error is CASE_CORRUPT. The directory and SQL stores replay through it.
 */
export const replayScan = async (
  projections: readonly AnyProjection[],
  scan: (onEvent: (event: RecordedEvent) => void) => Promise<ScanResult>
): Promise<ReplayResult> => {
  const f = fold(projections)
  const s = await scan(f.feed)
  if (s.findings.some(isError) || s.declaration === null || s.hash === null)
    throw new FailureError(corrupt(s.findings, s.omittedFindings))
  return { case_id: s.declaration.case_id, generation: s.seq, head_hash: s.hash, views: f.views(), notices: s.findings }
}

/**
 * Replays a case from its log alone: no repository, database or network. The chain is checked
 * line by line; object contents are not read (that is `verifyCase`'s job). Memory is bounded by
 * the projections' states, not by the log.
 */
export const replayCase = (dir: string, projections: readonly AnyProjection[]): Promise<ReplayResult> =>
  coded('replay', async () => {
    const root = path.resolve(dir)
    const startedWorkers = await startLineWorkersFor(path.join(root, LOG_FILE), { canonical: false })
    try {
      await ensureCaseDir(root)
      return await replayScan(projections, (onEvent) => scanCase(root, { onEvent, canonical: false, startedWorkers }))
    } finally {
      await startedWorkers?.stop()
    }
  })
