/** source.files: paths of the snapshot containing a literal substring. */
import type { Capture } from '../../events/capture.js'
import type { SourceFiles } from '../../domain/query.js'
import { checkSourcePath, underPrefix } from '../../domain/source-paths.js'
import { buildCapture } from '../capture.js'
import { gitOrigin, sourceSettings, type SourceResearch } from './common.js'
import { must } from '../../failures/error.js'

export const sourceFiles = async (r: SourceResearch, q: SourceFiles): Promise<Capture> => {
  // The same paths source.search accepts: a traversal, an absolute path or .git is PATH_INVALID.
  if (q.path_prefix !== undefined) must(checkSourcePath('path_prefix', q.path_prefix))
  const matching = (await r.snap.entries()).filter((e) => underPrefix(e.path, q.path_prefix) && e.path.includes(q.text))
  const listed = matching.slice(0, r.limits.max_files)
  return must(
    buildCapture(
      'source.files',
      q,
      gitOrigin(r, []),
      sourceSettings(r),
      {
        text: q.text,
        scope: { path_prefix: q.path_prefix ?? null },
        files: listed.map((e) => ({ path: e.path, kind: e.kind, blob: e.oid })),
        match_count: matching.length,
        truncated: listed.length < matching.length,
        limits_reached: listed.length < matching.length ? ['files'] : [],
        complete: listed.length === matching.length
      },
      r.limits.max_result_bytes
    )
  )
}
