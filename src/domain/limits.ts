/**
 * ProjectLimits: the operator's bounds on every project.query. They are settings, not limits of
 * the case format; every capture records the limits it ran under (and their hash). Each is a whole
 * number within a sensible range: a typo such as `time_ms = 1e12` is refused, not obeyed.
 */
import * as t from 'io-ts'
import { intBetween } from '../events/codecs.js'

/** @category research */
export const ProjectLimits = t.type(
  {
    /** Wall-clock budget of one query, server- and client-side (ms). */
    time_ms: intBetween('TimeMs', 1, 600_000),
    /** Lines one source.read returns. */
    max_lines: intBetween('MaxLines', 1, 100_000),
    /**
     * Files one source query returns: paths source.files lists, files with hits a search reports
     * (one more stops the search, marked `limits_reached: files`, partial). What a search reads is
     * bounded by max_search_bytes, not by this.
     */
    max_files: intBetween('MaxFiles', 1, 1_000_000),
    /** Size of one file that is still searched or read (bytes). */
    max_file_bytes: intBetween('MaxFileBytes', 1, 1 << 30),
    /** Bytes one source search may scan. */
    max_search_bytes: intBetween('MaxSearchBytes', 1, 64 * 2 ** 30),
    /** Size of one query's result (canonical JSON bytes). */
    max_result_bytes: intBetween('MaxResultBytes', 256, 64 << 20),
    /** Matches one search reports. */
    max_matches: intBetween('MaxMatches', 1, 100_000),
    /** Characters of one returned line before it is cut (marked text_truncated). */
    max_line_chars: intBetween('MaxLineChars', 16, 100_000),
    /** Rows one database.rows page returns. */
    max_rows: intBetween('MaxRows', 1, 100_000),
    /** Values one `in` filter may list. */
    max_in_values: intBetween('MaxInValues', 1, 10_000),
    /** Filters one database query may combine. */
    max_filters: intBetween('MaxFilters', 1, 1000),
    /** Columns one database.rows may select. */
    max_columns: intBetween('MaxColumns', 1, 4096)
  },
  'ProjectLimits'
)
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

/**
 * The smallest prompt_max_chars of an investigation with prompt version 2: its fixed parts (the
 * contract, the report, the facts index, the state, the notices, the closing) have their own bounds
 * and must fit beside some working set.
 */
export const PROMPT_MIN_CHARS = 8000
