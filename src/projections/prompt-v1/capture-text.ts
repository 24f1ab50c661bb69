/**
 * FROZEN: the capture text of prompt version investigation_project_v1, byte for byte as it was
 * released. Recorded v1 prompts are re-rendered from it, so what it renders is never changed (its
 * code was: the values, filters and registration candidates the current texts share are exported,
 * and the files' headers are one helper, with every recorded v1 prompt rendered again); the current
 * text is ../capture-text.ts.
 *
 * Captures as compact, deterministic text for the model: source lines numbered under one header
 * per file (path and blob once, the commit in the header), search hits grouped by file, database
 * rows as a table with the exact values, and every limit, truncation, skip and continuation marker
 * in words. The full capture stays in the case; this is only how the prompt shows it. Pure.
 */
import type { Capture } from '../../events/capture.js'

type Rec = Readonly<Record<string, unknown>>

const asRec = (u: unknown): Rec => (typeof u === 'object' && u !== null && !Array.isArray(u) ? (u as Rec) : {})
const asArr = (u: unknown): readonly unknown[] => (Array.isArray(u) ? u : [])
const str = (u: unknown): string => (typeof u === 'string' ? u : String(u))
const num = (u: unknown): number => (typeof u === 'number' ? u : Number(u))
const short = (hex: unknown): string => str(hex).slice(0, 12)

/**
 * A database value exactly: NULL as NULL, numbers and text as they are; text is JSON-quoted only
 * where it could be misread (empty, the word NULL, a separator or line break, edge whitespace).
 */
export const cell = (v: unknown): string => {
  if (v === null || v === undefined) return 'NULL'
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  if (typeof v === 'string')
    return v === '' || v === 'NULL' || /[|\r\n\t"]|^\s|\s$/.test(v) || v.startsWith('base64:') ? JSON.stringify(v) : v
  const b64 = asRec(v)['$base64']
  if (typeof b64 === 'string') return `base64:${b64}`
  return JSON.stringify(v)
}

const filterText = (f: unknown): string => {
  const r = asRec(f)
  const col = str(r['column'])
  const v = r['value']
  switch (r['operator']) {
    case 'eq':
      return v === null ? `${col} is NULL` : `${col} = ${cell(v)}`
    case 'ne':
      return v === null ? `${col} is not NULL` : `${col} <> ${cell(v)}`
    case 'lt':
      return `${col} < ${cell(v)}`
    case 'le':
      return `${col} <= ${cell(v)}`
    case 'gt':
      return `${col} > ${cell(v)}`
    case 'ge':
      return `${col} >= ${cell(v)}`
    case 'contains':
      return `${col} contains ${JSON.stringify(v)}`
    case 'in':
      return `${col} in (${asArr(v).map(cell).join(', ')})`
    default:
      return JSON.stringify(f)
  }
}

/** Filters as a WHERE clause (empty without filters); the current texts show them so too (values-text.ts). */
export const where = (filters: unknown): string => {
  const fs = asArr(filters)
  return fs.length === 0 ? '' : ` where ${fs.map(filterText).join(' and ')}`
}

const scopeText = (request: Rec): string =>
  typeof request['path_prefix'] === 'string' ? ` under ${request['path_prefix']}` : ''

/** A request in one line (the evidence index shows it without the payload). */
export const requestText = (kind: string, request: Rec): string => {
  const db = typeof request['database'] === 'string' ? `${request['database']}.` : ''
  switch (kind) {
    case 'source.files':
    case 'source.search':
    case 'source.schema':
    case 'source.context':
      return `${kind} ${JSON.stringify(request['text'])}${scopeText(request)}`
    case 'source.symbol':
    case 'source.registration':
      return `${kind} ${str(request['symbol'])}${scopeText(request)}`
    case 'source.read':
      return `${kind} ${str(request['path'])} lines ${str(request['start_line'])}-${str(request['end_line'])}`
    case 'database.tables':
      return `${kind}${typeof request['text'] === 'string' ? ` ${JSON.stringify(request['text'])}` : ''}${db === '' ? '' : ` in ${db.slice(0, -1)}`}`
    case 'database.schema':
      return `${kind} ${db}${str(request['table'])}`
    case 'database.count':
      return `${kind} ${db}${str(request['table'])}${where(request['filters'])}`
    case 'database.rows': {
      const order = asArr(request['order_by']).map((o) => `${str(asRec(o)['column'])} ${str(asRec(o)['direction'])}`)
      return `${kind} ${db}${str(request['table'])} [${asArr(request['columns']).map(str).join(', ')}]${where(request['filters'])}${order.length === 0 ? '' : ` order by ${order.join(', ')}`} offset ${str(request['offset'])} limit ${str(request['limit'])}`
    }
    default:
      return `${kind} ${JSON.stringify(request)}`
  }
}

const origin = (c: Capture): string =>
  c.origin.type === 'git' ? `commit ${short(c.origin.commit)}` : `${c.origin.database} snapshot ${c.origin.snapshot_id}`

const blobOf = (c: Capture, path: string): string => {
  if (c.origin.type !== 'git') return ''
  const f = c.origin.files.find((x) => x.path === path)
  return f === undefined ? '' : ` (blob ${short(f.blob)})`
}

/** A source line, numbered, with its cut marker. */
const numbered = (width: number, line: number, text: unknown, mark = ''): string => {
  const r = asRec(text)
  const t = typeof text === 'string' ? text : str(r['text'])
  const cut = r['text_truncated'] === true ? ` [line cut at ${t.length} of ${str(r['length'])} characters]` : ''
  return `${mark}${String(line).padStart(width)}| ${t}${cut}`
}

const skippedText = (s: unknown): string[] => {
  const r = asRec(s)
  const counts = Object.entries(asRec(r['counts']))
  if (counts.length === 0) return []
  return [`skipped: ${counts.map(([k, n]) => `${k} ${str(n)}`).join(', ')}`]
}

const limitsText = (l: unknown): string[] => {
  const names = asArr(l).map(str)
  return names.length === 0 ? [] : [`limits reached: ${names.join(', ')} (the answer is partial)`]
}

/**
 * Groups of lines under a header per file (its path and blob); `again` stands before a group of
 * the file the group before it was of (null: nothing).
 */
const byFile = (
  c: Capture,
  groups: ReadonlyArray<{ readonly path: string; readonly lines: readonly string[] }>,
  again: string | null
): string[] => {
  const out: string[] = []
  let current: string | null = null
  for (const g of groups) {
    if (g.path !== current) {
      out.push(`${g.path}${blobOf(c, g.path)}:`)
      current = g.path
    } else if (again !== null) out.push(again)
    out.push(...g.lines)
  }
  return out
}

const hitLines = (c: Capture, hits: readonly unknown[]): string[] => {
  const width = Math.max(1, ...hits.map((h) => String(num(asRec(h)['line'])).length))
  return byFile(
    c,
    hits.map((h) => ({ path: str(asRec(h)['path']), lines: [numbered(width, num(asRec(h)['line']), asRec(h))] })),
    null
  )
}

/**
 * A rendered capture in three parts: `head` (what was asked and answered), `body` (the payload:
 * numbered lines, hits, rows; a prompt guard may shorten it) and `tail` (the markers: limits,
 * truncation, skips, continuation; never cut).
 */
export interface CaptureText {
  readonly head: readonly string[]
  readonly body: readonly string[]
  readonly tail: readonly string[]
}

/** A search's registration candidates (not proof), or that a registration search found none. */
export const registrationLines = (c: Capture, r: Rec): string[] => {
  const regs = asArr(r['registrations'])
  if (regs.length > 0)
    return [
      `registration candidates (not proof): ${regs.map((x) => `${str(asRec(x)['name'])} at ${str(asRec(x)['path'])}:${str(asRec(x)['line'])}`).join('; ')}`
    ]
  return c.kind === 'source.registration'
    ? [`registration candidates: none with the prefixes ${asArr(r['registration_prefixes']).map(str).join(', ')}`]
    : []
}

const renderSearch = (c: Capture, r: Rec): CaptureText => {
  const hits = asArr(r['hits'])
  const head = [
    `${c.kind} ${JSON.stringify(r['term'])} (${str(r['mode'])})${typeof asRec(r['scope'])['path_prefix'] === 'string' ? ` under ${str(asRec(r['scope'])['path_prefix'])}` : ''} @ ${origin(c)}: ${str(r['hit_count'])} hits in ${str(r['files_with_hits'])} of ${str(r['files_scanned'])} files scanned, ${str(r['result'])}`
  ]
  return {
    head,
    body: hitLines(c, hits),
    tail: [...registrationLines(c, r), ...skippedText(r['skipped']), ...limitsText(r['limits_reached'])]
  }
}

const renderRead = (c: Capture, r: Rec): CaptureText => {
  const lines = asArr(r['lines'])
  const first = num(asRec(lines[0])['line'])
  const last = num(asRec(lines[lines.length - 1])['line'])
  const width = String(Number.isFinite(last) ? last : 1).length
  const head = [
    `source.read ${str(r['path'])} (blob ${short(r['blob'])}) @ ${origin(c)}: ${lines.length === 0 ? 'no lines' : `lines ${first}-${last}`} of ${str(r['total_lines'])}`
  ]
  const body = lines.map((l) => numbered(width, num(asRec(l)['line']), l))
  const out: string[] = []
  if (r['truncated'] === true)
    out.push(
      `truncated: continue with start_line ${str(r['next_start_line'])}${r['requested_end_line'] === undefined ? '' : ` and end_line ${str(r['requested_end_line'])}`}`
    )
  if (r['line_limit_exceeded'] === true)
    out.push(
      `line limit ${str(r['line_limit'])} exceeded: requested ${str(r['requested_start_line'])}-${str(r['requested_end_line'])} (${str(r['requested_line_count'])} lines), returned ${r['returned_start_line'] === null ? 'none' : `${str(r['returned_start_line'])}-${str(r['returned_end_line'])}`}; requested range complete: ${str(r['requested_range_complete'])}`
    )
  if (typeof r['read_notice'] === 'string') out.push(`notice: ${r['read_notice']}`)
  if (r['eof'] === true) out.push('end of file reached')
  return { head, body, tail: out }
}

const renderContext = (c: Capture, r: Rec): CaptureText => {
  const out = [
    `source.context ${JSON.stringify(r['term'])} (${str(r['mode'])})${typeof asRec(r['scope'])['path_prefix'] === 'string' ? ` under ${str(asRec(r['scope'])['path_prefix'])}` : ''} @ ${origin(c)}: ${str(r['completeness'])}`
  ]
  const searches = asArr(r['searches'])
  const skips = searches.map((s) => skippedText(asRec(s)['skipped']).join(''))
  const sameSkips = skips.length > 1 && skips.every((x) => x === skips[0])
  searches.forEach((s, i) => {
    const x = asRec(s)
    const from = asRec(x['from'])
    out.push(
      `search ${str(x['index'])}: ${JSON.stringify(x['term'])} (${str(x['reason'])}${x['from'] === null ? '' : ` from ${str(from['path'])}:${str(from['line'])}`}): ${str(x['hit_count'])} hits, ${str(x['files_scanned'])} files scanned${x['complete'] === true ? '' : ', partial'}${asArr(x['limits_reached']).length > 0 ? `, limits ${asArr(x['limits_reached']).map(str).join(', ')}` : ''}`
    )
    if (!sameSkips && skips[i] !== '') out.push(`  ${skips[i] ?? ''}`)
  })
  if (sameSkips && skips[0] !== '') out.push(`every search ${skips[0] ?? ''}`)
  const candidates = asArr(r['candidates'])
  if (candidates.length > 0)
    out.push(
      `candidates: ${candidates.map((x) => `${str(asRec(x)['kind'])} ${str(asRec(x)['name'])} at ${str(asRec(x)['path'])}:${str(asRec(x)['line'])}${asRec(x)['context_returned'] === true ? '' : ' (no context returned)'}`).join('; ')}`
    )
  const head = out
  const hitSet = new Set(asArr(r['hits']).map((h) => `${str(asRec(h)['path'])}:${str(asRec(h)['line'])}`))
  const blocks = asArr(r['blocks'])
  const width = Math.max(
    1,
    ...blocks.map((b) => String(num(asRec(b)['start_line']) + asArr(asRec(b)['lines']).length).length)
  )
  const body = byFile(
    c,
    blocks.map((b) => {
      const x = asRec(b)
      const path = str(x['path'])
      return {
        path,
        lines: asArr(x['lines']).map((l, i) => {
          const line = num(x['start_line']) + i
          return numbered(width, line, l, hitSet.has(`${path}:${line}`) ? '>' : ' ')
        })
      }
    }),
    `${' '.repeat(width + 1)}⋮`
  )
  const tail: string[] = []
  const missing = asArr(r['hits'])
    .filter((h) => asRec(h)['context_returned'] !== true)
    .map((h) => `${str(asRec(h)['path'])}:${str(asRec(h)['line'])}`)
  if (missing.length > 0) tail.push(`hits without context returned (limits): ${missing.join(', ')}`)
  tail.push(...limitsText(r['limits_reached']))
  // The notice (lexical context, not a call graph) is part of the prompt's stable contract.
  return { head, body, tail }
}

const renderRows = (c: Capture, r: Rec): CaptureText => {
  const columns = asArr(r['columns']).map((x) => str(asRec(x)['name']))
  const rows = asArr(r['rows'])
  const order = asArr(r['order'])
    .map((o) => `${str(asRec(o)['column'])} ${str(asRec(o)['direction'])}`)
    .join(', ')
  const head = [
    `database.rows ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${str(r['row_count'])} rows from offset ${str(r['offset'])} (limit ${str(r['limit'])}), ordered by ${order} (${str(r['order_source'])})`,
    asArr(r['columns'])
      .map((x) => `${str(asRec(x)['name'])} (${str(asRec(x)['type'])})`)
      .join('|')
  ]
  const body = rows.map((row) => columns.map((col) => cell(asRec(row)[col])).join('|'))
  const out: string[] = []
  if (r['has_more'] === true) out.push(`has_more: more rows exist; continue with offset ${str(r['next_offset'])}`)
  if (r['row_limit_capped'] === true)
    out.push(`row limit: ${str(r['requested_limit'])} rows were requested, at most ${str(r['limit'])} are returned`)
  if (r['byte_limit_reached'] === true) out.push('byte limit reached: the page was cut to fit max_result_bytes')
  out.push(
    r['complete_filtered_rows'] === true
      ? 'complete: these are all rows matching the filters'
      : 'not all rows matching the filters are in this page'
  )
  return { head, body, tail: out }
}

const renderSchema = (c: Capture, r: Rec): CaptureText => ({
  head: [`database.schema ${str(r['table'])} @ ${origin(c)}:`],
  body: asArr(r['columns']).map((x) => {
    const col = asRec(x)
    return `  ${str(col['name'])} ${str(col['type'])}${col['nullable'] === true ? ' NULL' : ' NOT NULL'}${col['key'] === null ? '' : ` ${str(col['key'])}`}`
  }),
  tail: [
    `primary key: ${asArr(r['primary_key']).map(str).join(', ') || 'none'}`,
    ...asArr(r['indexes']).map(
      (x) =>
        `index ${str(asRec(x)['name'])}${asRec(x)['unique'] === true ? ' (unique)' : ''}: ${asArr(asRec(x)['columns']).map(str).join(', ')}`
    )
  ]
})

/** The capture's result as compact lines: head, body, tail. */
export const renderCapture = (c: Capture): string[] => {
  const t = captureText(c)
  return [...t.head, ...t.body, ...t.tail]
}

/** The capture's result as compact text parts. */
export const captureText = (c: Capture): CaptureText => {
  const r = c.result
  switch (c.kind) {
    case 'source.search':
    case 'source.symbol':
    case 'source.schema':
    case 'source.registration':
      return renderSearch(c, r)
    case 'source.read':
      return renderRead(c, r)
    case 'source.context':
      return renderContext(c, r)
    case 'source.files': {
      const files = asArr(r['files'])
      return {
        head: [
          `source.files ${JSON.stringify(r['text'])}${typeof asRec(r['scope'])['path_prefix'] === 'string' ? ` under ${str(asRec(r['scope'])['path_prefix'])}` : ''} @ ${origin(c)}: ${str(r['match_count'])} paths match`
        ],
        body: files.map(
          (f) => `  ${str(asRec(f)['path'])}${asRec(f)['kind'] === 'blob' ? '' : ` (${str(asRec(f)['kind'])})`}`
        ),
        tail:
          r['truncated'] === true
            ? [`truncated: the first ${files.length} of ${str(r['match_count'])} paths are listed (file limit reached)`]
            : []
      }
    }
    case 'database.rows':
      return renderRows(c, r)
    case 'database.count':
      return {
        head: [
          `database.count ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${str(r['count'])} rows`
        ],
        body: [],
        tail: []
      }
    case 'database.schema':
      return renderSchema(c, r)
    case 'database.tables': {
      const names = (u: unknown): string =>
        asArr(u)
          .map((x) => `${str(asRec(x)['database'])}.${str(asRec(x)['table'])}`)
          .join(', ') || 'none'
      return {
        head: [`database.tables @ ${origin(c)}: present: ${names(r['tables'])}`],
        body: [],
        tail: [`allowed but missing: ${names(r['allowed_but_missing'])}`]
      }
    }
    default: {
      const _never: never = c.kind
      return { head: [JSON.stringify(_never)], body: [], tail: [] }
    }
  }
}
