/** source.context: see the module comment of define.ts. Pure. */
import type { Capture } from '../../events/capture.js'
import { asArr, asRec, type Rec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { blobOf, limitsOf, lineText, markers, sourceTable } from '../report/capture-html.js'
import { defineQueryKind, type CaptureView } from './define.js'
import {
  counted,
  grouped,
  limitsText,
  memberNotes,
  missedText,
  num,
  numbered,
  origin,
  plural,
  requestScope,
  scopeOf,
  skippedText,
  str,
  type Wording
} from './parts.js'

const base = (p: unknown): string => str(p).slice(str(p).lastIndexOf('/') + 1)

/** Files scanned by the searches: one count, or each search's when they differ (`120/118 files scanned`). */
const scannedText = (searches: readonly Rec[], w: Wording): string => {
  const counts = [...new Set(searches.map((x) => str(x['files_scanned'])))]
  return `${counts.length === 1 ? counted(w, counts[0], 'file') : `${counts.join('/')} files`} scanned`
}

/** The searches in one line: term, why it was followed and from where, what it found. */
const searchesLine = (searches: readonly Rec[], w: Wording): string =>
  `searches: ${searches.map((x) => `${JSON.stringify(x['term'])}${x['reason'] === 'term' ? '' : ` (${x['reason'] === 'assignment' ? 'alias' : str(x['reason'])}, ${base(asRec(x['from'])['path'])}:${str(asRec(x['from'])['line'])})`} ${plural(x['hit_count'], 'hit')}${x['complete'] === true ? '' : ` (partial${asArr(x['limits_reached']).length > 0 ? `: ${asArr(x['limits_reached']).map(str).join(', ')}` : ''})`}`).join('; ')}; ${scannedText(searches, w)}`

// a line that is a hit of several searches is marked by its best role (the term before a follow-up)
const ROLES = ['term', 'alias', 'registration', 'loader', 'same_name']

const rolesOf = (hits: readonly Rec[]): Map<string, string> => {
  const roleAt = new Map<string, string>()
  for (const h of hits) {
    const key = `${str(h['path'])}:${str(h['line'])}`
    const role = str(h['role'] ?? 'term')
    const known = roleAt.get(key)
    if (known === undefined || ROLES.indexOf(role) < ROLES.indexOf(known)) roleAt.set(key, role)
  }
  return roleAt
}

const mark = (role: string | undefined): string =>
  role === undefined ? ' ' : role === 'term' ? '>' : role === 'same_name' ? '~' : '+'

const contextMarkers = (r: Rec, hits: readonly Rec[]): string[] => {
  const same = asArr(r['candidates'])
    .map(asRec)
    .filter((x) => x['kind'] === 'same_name')
  const markers: string[] = []
  if (same.length > 0)
    markers.push(
      `~ the same name in another file is another symbol: ${same.map((x) => `${str(x['name'])} = ${str(x['value'])} (${base(x['path'])}:${str(x['line'])})`).join('; ')}`
    )
  const missing = hits.filter((h) => h['context_returned'] !== true)
  if (missing.length > 0)
    markers.push(
      `hits without context (ranked after the limit: ${[...new Set(missing.map((h) => str(h['no_context'] ?? 'lines')))].join(', ')}): ${missing.map((h) => `${str(h['path'])}:${str(h['line'])}`).join(', ')}`
    )
  markers.push(...limitsText(r['limits_reached']), ...missedText(r, r['term']))
  return markers
}

const contextView = (c: Capture, r: Rec, w: Wording): CaptureView => {
  const head = [
    `source.context ${JSON.stringify(r['term'])} (${r['whole_number'] === true ? 'whole number' : str(r['mode'])})${scopeOf({ ...r, whole_number: false })} @ ${origin(c)}: ${str(r['completeness'])}`
  ]
  const searches = asArr(r['searches']).map(asRec)
  head.push(searchesLine(searches, w))
  const skips = [...new Set(searches.map((x) => skippedText(x['skipped']).join('')).filter((x) => x !== ''))]
  if (skips.length > 0)
    head.push(skips.length === 1 && searches.length > 1 ? `every search ${skips[0] ?? ''}` : skips.join('; '))
  const hits = asArr(r['hits']).map(asRec)
  const roleAt = rolesOf(hits)
  const blocks = asArr(r['blocks']).map(asRec)
  const width = Math.max(1, ...blocks.map((b) => String(num(b['start_line']) + asArr(b['lines']).length).length))
  const items = grouped(
    c,
    blocks.map((b) => ({
      path: str(b['path']),
      lines: asArr(b['lines']).map((l, i) => {
        const line = num(b['start_line']) + i
        return numbered(width, line, l, mark(roleAt.get(`${str(b['path'])}:${line}`)))
      })
    })),
    `${' '.repeat(width + 1)}⋮`
  )
  const markers = contextMarkers(r, hits)
  const lineCount = blocks.reduce((n, b) => n + asArr(b['lines']).length, 0)
  return {
    head,
    items,
    tail: (shown) => [
      ...(shown < blocks.length
        ? [
            `[prompt limit: blocks ${shown + 1}-${blocks.length} (the lowest ranked) are not shown; the case holds them]`
          ]
        : []),
      ...markers
    ],
    unit: 'blocks',
    summary: `${plural(hits.length, 'hit')}, ${plural(blocks.length, 'block')} of ${plural(lineCount, 'line')} in ${plural(asArr(r['files']).length, 'file')} (${str(r['completeness']).replace('_configured_source_context', '')})`
  }
}

const contextBody = (c: Capture, r: Rec): string => {
  const hitSet = new Set(asArr(r['hits']).map((h) => `${hstr(asRec(h)['path'])}:${hstr(asRec(h)['line'])}`))
  const blocks = asArr(r['blocks'])
    .map((b) => {
      const x = asRec(b)
      const path = hstr(x['path'])
      const rows = asArr(x['lines']).map((l, i) => ({
        line: Number(x['start_line']) + i,
        ...lineText(l),
        hit: hitSet.has(`${path}:${Number(x['start_line']) + i}`)
      }))
      return `<h4 class="mono">${esc(path)}${blobOf(c, path)}</h4>${sourceTable(rows)}`
    })
    .join('')
  const searches = asArr(r['searches'])
    .map((s) => {
      const x = asRec(s)
      return `<li>${esc(`search ${hstr(x['index'])}: ${JSON.stringify(x['term'])} (${hstr(x['reason'])}): ${plural(x['hit_count'], 'hit')}, ${plural(x['files_scanned'], 'file')} scanned${x['complete'] === true ? '' : ', partial'}`)}</li>`
    })
    .join('')
  return `<p>${esc(`completeness: ${hstr(r['completeness'])}`)}</p><ul>${searches}</ul>${blocks}${markers([...limitsOf(r), ...missedText(r, r['term'])])}`
}

export const sourceContext = defineQueryKind({
  kind: 'source.context',
  needs: 'source_context',
  signature: 'source.context {text, path_prefix?}',
  options: 'ignore_case?',
  requestText: (request) => `source.context ${JSON.stringify(request['text'])}${requestScope(request)}`,
  view: contextView,
  reportBody: contextBody,
  tool: {
    description: (f) => {
      const a = f.analysis
      return `A bounded lexical chain for text in ${f.at}: its hits, identifiers assigned from it and registration functions of the matching files, as merged context blocks (${a.context_lines} lines of context, at most ${plural(a.max_searches, 'search')}, ${plural(a.max_blocks, 'block')}, ${plural(a.max_total_lines, 'line')}). Lexical context, not a call graph: complete_configured_source_context only means the bounded chain ran without omissions.`
    },
    notes: memberNotes
  },
  // captures recorded without code paths were ranked by the earlier chain (path order)
  notRecheckable: (c) =>
    'code_path_prefixes' in asRec(asRec(c.settings)['source_analysis'])
      ? null
      : 'it was made by the earlier source.context chain (path order, before code_path_prefixes), which this library no longer runs'
})
