/** source.files: paths of the snapshot containing a literal substring (with ignore_case, in any case). */
import type { Capture } from '../../events/capture.js'
import type { SourceFiles } from '../../domain/query.js'
import { checkSourcePath, underPrefix } from '../../domain/source-paths.js'
import { buildCapture } from '../capture.js'
import { gitOrigin, sourceSettings, type SourceResearch } from './common.js'
import { must } from '../../failures/error.js'
import { MISSED_BELOW, MISSED_PATHS, missedSettings } from './missed.js'

export const sourceFiles = async (r: SourceResearch, q: SourceFiles): Promise<Capture> => {
  // The same paths source.search accepts: a traversal, an absolute path or .git is PATH_INVALID.
  if (q.path_prefix !== undefined) must(checkSourcePath('path_prefix', q.path_prefix))
  const ignoreCase = q.ignore_case === true
  const lower = q.text.toLowerCase()
  const entries = (await r.snap.entries()).filter((e) => underPrefix(e.path, q.path_prefix))
  const matching = entries.filter((e) => (ignoreCase ? e.path.toLowerCase().includes(lower) : e.path.includes(q.text)))
  const listed = matching.slice(0, r.limits.max_files)
  // Few paths: those that hold the text in another case (never listed as matches).
  const other =
    r.missedMatches && !ignoreCase && matching.length < MISSED_BELOW
      ? entries.filter((e) => !e.path.includes(q.text) && e.path.toLowerCase().includes(lower)).map((e) => e.path)
      : null
  return must(
    buildCapture(
      'source.files',
      q,
      gitOrigin(r, []),
      sourceSettings(r, missedSettings(r)),
      {
        text: q.text,
        scope: { path_prefix: q.path_prefix ?? null },
        files: listed.map((e) => ({ path: e.path, kind: e.kind, blob: e.oid })),
        match_count: matching.length,
        truncated: listed.length < matching.length,
        limits_reached: listed.length < matching.length ? ['files'] : [],
        complete: listed.length === matching.length,
        ...(ignoreCase ? { ignore_case: true } : {}),
        ...(other === null
          ? {}
          : { missed: { other_case_paths: other.length, paths: other.slice(0, MISSED_PATHS), complete: true } })
      },
      r.limits.max_result_bytes
    )
  )
}
