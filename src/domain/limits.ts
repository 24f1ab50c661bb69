/**
 * ProjectLimits: the operator's bounds on every project.query. They are settings, not limits of
 * the case format; every capture records the limits it ran under (and their hash).
 */
import * as t from 'io-ts'
import { intAtLeast } from '../events/codecs.js'

export const ProjectLimits = t.type({
  /** Wall-clock budget of one query, server- and client-side (ms). */
  time_ms: intAtLeast('TimeMs', 1),
  /** Lines one source.read returns. */
  max_lines: intAtLeast('MaxLines', 1),
  /** Files one source query touches (listed or searched). */
  max_files: intAtLeast('MaxFiles', 1),
  /** Size of one file that is still searched or read (bytes). */
  max_file_bytes: intAtLeast('MaxFileBytes', 1),
  /** Bytes one source search may scan. */
  max_search_bytes: intAtLeast('MaxSearchBytes', 1),
  /** Size of one query's result (canonical JSON bytes). */
  max_result_bytes: intAtLeast('MaxResultBytes', 256),
  /** Matches one search reports. */
  max_matches: intAtLeast('MaxMatches', 1),
  /** Characters of one returned line before it is cut (marked text_truncated). */
  max_line_chars: intAtLeast('MaxLineChars', 16),
  /** Rows one database.rows page returns. */
  max_rows: intAtLeast('MaxRows', 1),
  /** Values one `in` filter may list. */
  max_in_values: intAtLeast('MaxInValues', 1),
  /** Filters one database query may combine. */
  max_filters: intAtLeast('MaxFilters', 1),
  /** Columns one database.rows may select. */
  max_columns: intAtLeast('MaxColumns', 1)
}, 'ProjectLimits')
export type ProjectLimits = t.TypeOf<typeof ProjectLimits>

export const DEFAULT_LIMITS: ProjectLimits = {
  time_ms: 10_000,
  max_lines: 80,
  max_files: 200,
  max_file_bytes: 2 * 1024 * 1024,
  max_search_bytes: 512 * 1024 * 1024,
  max_result_bytes: 256 * 1024,
  max_matches: 200,
  max_line_chars: 400,
  max_rows: 200,
  max_in_values: 100,
  max_filters: 16,
  max_columns: 64
}
