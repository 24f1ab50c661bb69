/** Source queries answered straight from a snapshot (no profile): captures as JSON, failures as codes. */
import type { GitSnapshot } from '../../src/adapters/git/snapshot.js'
import { DEFAULT_LIMITS, type ProjectLimits } from '../../src/domain/limits.js'
import { DEFAULT_TEXT_EXTENSIONS } from '../../src/domain/source-paths.js'
import { decodeQuery, type SourceQuery } from '../../src/domain/query.js'
import { DEFAULT_ANALYSIS } from '../../src/research/source/open.js'
import { runSourceQuery } from '../../src/research/source/run.js'
import { toFailure } from '../../src/failures/error.js'

export const answerAll = async (
  snap: GitSnapshot,
  queries: readonly unknown[],
  limits: Partial<ProjectLimits> = {}
): Promise<string[]> => {
  const r = {
    snap,
    url: 'https://example.org/core.git',
    extensions: DEFAULT_TEXT_EXTENSIONS,
    limits: { ...DEFAULT_LIMITS, time_ms: 600_000, ...limits },
    analysis: { ...DEFAULT_ANALYSIS, enabled: true },
    // A clock that stands still: no answer here depends on how fast the machine is.
    now: () => 0,
    missedMatches: true,
    emptyScope: true
  }
  const out: string[] = []
  for (const q of queries) {
    const d = decodeQuery(q)
    if (d._tag === 'Left') throw new Error(`not a query: ${JSON.stringify(q)}`)
    try {
      out.push(JSON.stringify(await runSourceQuery(r, d.right as SourceQuery)))
    } catch (e) {
      out.push(`failure ${toFailure(e, 'research').code}`)
    }
  }
  return out
}
