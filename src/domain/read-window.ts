/**
 * Window arithmetic of source.read: an inclusive line range bounded by ProjectLimits.max_lines.
 * A request over the limit is served from its start line, and the result says exactly what is
 * missing and where to continue; nothing is skipped and nothing is invented.
 */

export interface ReadWindow {
  /** First and last returned line (inclusive); `returnedCount` 0 means an empty result. */
  readonly returnedStart: number
  readonly returnedEnd: number
  readonly returnedCount: number
  readonly requestedCount: number
  readonly lineLimitExceeded: boolean
  /** The returned window reaches the end of the file. */
  readonly eof: boolean
  /** Lines of the requested range that exist but were not returned. */
  readonly truncated: boolean
  readonly requestedRangeComplete: boolean
  /** Where to continue (keeping the original end line), or null when nothing is missing. */
  readonly nextStartLine: number | null
}

/**
 * @example window(115, 215, 80, 400) → lines 115-194, next 195, truncated, incomplete
 * @example window(390, 420, 80, 400) → lines 390-400, eof, complete, next null
 */
export const window = (start: number, end: number, maxLines: number, totalLines: number): ReadWindow => {
  const requestedCount = end - start + 1
  const lineLimitExceeded = requestedCount > maxLines
  const servedEnd = Math.min(end, start + maxLines - 1, totalLines)
  const returnedCount = Math.max(0, servedEnd - start + 1)
  const eof = start + returnedCount - 1 >= totalLines
  const lastWanted = Math.min(end, totalLines)
  const truncated = returnedCount > 0 ? servedEnd < lastWanted : false
  return {
    returnedStart: start,
    returnedEnd: returnedCount > 0 ? servedEnd : start - 1,
    returnedCount,
    requestedCount,
    lineLimitExceeded,
    eof,
    truncated,
    requestedRangeComplete: !truncated,
    nextStartLine: truncated ? servedEnd + 1 : null
  }
}
