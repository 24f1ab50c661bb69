/** Replay: fold every event of a case through projections, with the chain checked on the way. */
import * as path from 'node:path'
import { isError, type Finding } from '../../events/findings.js'
import { fold, type AnyProjection } from '../../projections/projection.js'
import { FailureError, coded } from '../../failures/error.js'
import { corrupt } from './handle.js'
import { ensureCaseDir } from './case-dir.js'
import { scanCase } from './scan.js'

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
 * Replays a case from its log alone: no repository, database or network. The chain is checked
 * line by line; object contents are not read (that is `verifyCase`'s job). Memory is bounded by
 * the projections' states, not by the log.
 */
export const replayCase = (dir: string, projections: readonly AnyProjection[]): Promise<ReplayResult> =>
  coded('replay', async () => {
    const root = path.resolve(dir)
    await ensureCaseDir(root)
    const f = fold(projections)
    const scan = await scanCase(root, { onEvent: f.feed, canonical: false })
    if (scan.findings.some(isError) || scan.declaration === null || scan.hash === null) {
      throw new FailureError(corrupt(scan.findings, scan.omittedFindings))
    }
    return {
      case_id: scan.declaration.case_id,
      generation: scan.seq,
      head_hash: scan.hash,
      views: f.views(),
      notices: scan.findings
    }
  })
