/** source.read: see the module comment of define.ts. Pure. */
import { asArr, asRec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { lineText, markers, sourceTable } from '../report/capture-html.js'
import { alwaysRecheckable, defineQueryKind } from './define.js'
import { counted, memberNotes, num, numbered, one, origin, plural, short, str } from './parts.js'

export const sourceRead = defineQueryKind({
  kind: 'source.read',
  needs: 'source',
  signature: 'source.read {path, start_line, end_line}',
  requestText: (request) =>
    `source.read ${str(request['path'])} lines ${str(request['start_line'])}-${str(request['end_line'])}`,
  view: (c, r, w) => {
    const lines = asArr(r['lines'])
    const first = num(asRec(lines[0])['line'])
    const last = num(asRec(lines[lines.length - 1])['line'])
    const width = String(Number.isFinite(last) ? last : 1).length
    const end = str(r['requested_end_line'] ?? c.request['end_line'])
    const limit =
      r['line_limit_exceeded'] === true
        ? ` (line limit ${str(r['line_limit'])}: ${str(r['requested_line_count'])} lines were asked for)`
        : ''
    return {
      head: [
        `source.read ${str(r['path'])} (blob ${short(r['blob'])}) @ ${origin(c)}: ${lines.length === 0 ? 'no lines' : `lines ${first}-${last}`} of ${str(r['total_lines'])}`
      ],
      items: lines.map((l) => one([numbered(width, num(asRec(l)['line']), l)])),
      // One continuation line, for what was shown.
      tail: (shown) => {
        if (shown < lines.length)
          return [
            `[prompt limit: lines ${first + shown}-${last} are not shown]; continue with start_line ${first + shown} and end_line ${end}`
          ]
        if (r['truncated'] === true)
          return [`continue with start_line ${str(r['next_start_line'])} and end_line ${end}${limit}`]
        return r['eof'] === true ? ['end of file reached'] : []
      },
      unit: 'lines',
      summary:
        lines.length === 0
          ? `no lines of ${str(r['path'])}`
          : `lines ${first}-${last} of ${str(r['path'])} (${counted(w, r['total_lines'], 'line')})`
    }
  },
  reportBody: (_c, r) => {
    const lines = asArr(r['lines']).map((l) => ({ line: Number(asRec(l)['line']), ...lineText(l) }))
    const m: string[] = []
    if (r['truncated'] === true) m.push(`truncated: continue with start_line ${hstr(r['next_start_line'])}`)
    if (r['line_limit_exceeded'] === true)
      m.push(
        `line limit ${hstr(r['line_limit'])} exceeded: requested ${hstr(r['requested_start_line'])}-${hstr(r['requested_end_line'])}`
      )
    if (typeof r['read_notice'] === 'string') m.push(`notice: ${r['read_notice']}`)
    if (r['eof'] === true) m.push('end of file reached')
    return `<p><span class="mono">${esc(hstr(r['path']))}</span> <span class="muted mono">blob ${esc(hstr(r['blob']))}</span>, ${lines.length === 0 ? 'no lines' : `lines ${lines[0]?.line ?? ''}-${lines[lines.length - 1]?.line ?? ''}`} of ${esc(hstr(r['total_lines']))}</p>${sourceTable(lines)}${markers(m)}`
  },
  tool: {
    description: (f) =>
      `Lines start_line..end_line of one file of ${f.at}, numbered, at most ${plural(f.limits.max_lines, 'line')} per call (a larger window is served from start_line and says where to continue); lines over ${f.limits.max_line_chars} characters are cut and marked.`,
    notes: memberNotes
  },
  notRecheckable: alwaysRecheckable
})
