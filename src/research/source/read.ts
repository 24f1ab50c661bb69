/**
 * source.read: an inclusive line window of one file, bounded by ProjectLimits.max_lines. Over the
 * limit the window is served from its start line and the result adds the continuation data
 * (see src/domain/read-window.ts); within the limit the plain shape is kept.
 */
import { failure, type FailureCode } from '../../failures/failure.js'
import type { SourceRead } from '../../domain/query.js'
import { checkSourcePath } from '../../domain/source-paths.js'
import { window } from '../../domain/read-window.js'
import { cutLine } from '../../domain/text-scan.js'
import type { Capture } from '../../events/capture.js'
import { FailureError } from '../../failures/error.js'
import { buildCapture } from '../capture.js'
import { gitOrigin, isBinary, originFileOf, sourceSettings, splitLines, type SourceResearch } from './common.js'
import { must } from '../../failures/error.js'

const refuse = (code: FailureCode, message: string, data: Record<string, unknown> = {}): never => {
  throw new FailureError(failure(code, message, data))
}

export const sourceRead = async (r: SourceResearch, q: SourceRead): Promise<Capture> => {
  const path = must(checkSourcePath('path', q.path))
  if (q.end_line < q.start_line)
    return refuse('QUERY_INVALID', `end_line ${q.end_line} is before start_line ${q.start_line}`)
  const e = await r.snap.entry(path)
  if (e === undefined)
    return refuse('SOURCE_FILE_NOT_FOUND', `${path} does not exist at commit ${r.snap.commit}`, { path })
  if (e.kind !== 'blob')
    return refuse('SOURCE_NOT_READABLE', `${path} is a ${e.kind}, not a source file`, { path, kind: e.kind })
  const bytes = await r.snap.blob(e.oid)
  if (bytes === null)
    return refuse('SOURCE_OBJECT_MISSING', `the blob of ${path} is missing from the repository`, { path, blob: e.oid })
  if (bytes.length > r.limits.max_file_bytes)
    return refuse(
      'SOURCE_FILE_TOO_LARGE',
      `${path} has ${bytes.length} bytes, over max_file_bytes ${r.limits.max_file_bytes}`,
      { path, size: bytes.length }
    )
  if (isBinary(bytes)) return refuse('SOURCE_NOT_TEXT', `${path} is binary`, { path })
  const lines = splitLines(bytes)
  // A window wholly past the end holds nothing to cite: refused (and not billed), not an empty answer.
  if (q.start_line > lines.length)
    return refuse(
      'SOURCE_LINES_PAST_END',
      `${path} has ${lines.length} lines; start_line ${q.start_line} is past its end`,
      { path, total_lines: lines.length, start_line: q.start_line }
    )
  const w = window(q.start_line, q.end_line, r.limits.max_lines, lines.length)
  const returned = lines.slice(w.returnedStart - 1, w.returnedStart - 1 + w.returnedCount).map((text, i) => {
    const c = cutLine(text, r.limits.max_line_chars)
    return c.cut
      ? { line: w.returnedStart + i, text: c.text, text_truncated: true, length: c.length }
      : { line: w.returnedStart + i, text: c.text }
  })
  const plain = {
    path,
    blob: e.oid,
    total_lines: lines.length,
    start_line: q.start_line,
    end_line: w.returnedCount > 0 ? w.returnedEnd : null,
    lines: returned,
    eof: w.eof,
    truncated: w.truncated,
    next_start_line: w.nextStartLine
  }
  const result = !w.lineLimitExceeded
    ? plain
    : {
        ...plain,
        requested_line_count: w.requestedCount,
        line_limit: r.limits.max_lines,
        line_limit_exceeded: true,
        returned_line_count: w.returnedCount,
        requested_start_line: q.start_line,
        requested_end_line: q.end_line,
        returned_start_line: w.returnedCount > 0 ? w.returnedStart : null,
        returned_end_line: w.returnedCount > 0 ? w.returnedEnd : null,
        requested_range_complete: w.requestedRangeComplete,
        read_notice: w.truncated
          ? `Returned lines ${w.returnedStart}-${w.returnedEnd} of the requested ${q.start_line}-${q.end_line} (limit ${r.limits.max_lines} lines). To continue, read from ${w.nextStartLine} keeping end_line ${q.end_line}; do not skip lines or count them again as new evidence.`
          : `The requested range exceeded the limit of ${r.limits.max_lines} lines, but the file ends at line ${lines.length}: nothing of the range is missing.`
      }
  return must(
    buildCapture(
      'source.read',
      q,
      gitOrigin(r, [originFileOf(r, e, bytes)]),
      sourceSettings(r),
      result,
      r.limits.max_result_bytes
    )
  )
}
