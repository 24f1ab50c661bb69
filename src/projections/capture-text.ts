/**
 * Captures as compact, deterministic text for the model: source lines numbered under one header
 * per file (path and blob once, the commit in the header), search hits grouped by file, database
 * rows as a table with the exact values, context blocks in the order they were ranked, and every
 * limit, truncation, skip and continuation marker in words. The full capture stays in the case;
 * this is only how the prompt shows it. Pure.
 *
 * A capture's view is a head, its items (rows, lines, hits, blocks, paths, columns: what a prompt
 * guard may leave out, from the end) and a tail computed from how many items are shown, so every
 * continuation marker describes what was shown: a page cut after 20 of its rows says to continue
 * with the offset of row 21.
 */
import type { Capture } from '../events/capture.js'

import { asArr, asRec, type Rec } from './json-read.js'
import { cell, where } from './request-text.js'

const str = (u: unknown): string => (typeof u === 'string' ? u : String(u))
const num = (u: unknown): number => (typeof u === 'number' ? u : Number(u))
const short = (hex: unknown): string => str(hex).slice(0, 12)

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
  const counts = Object.entries(asRec(asRec(s)['counts']))
  return counts.length === 0 ? [] : [`skipped: ${counts.map(([k, n]) => `${k} ${str(n)}`).join(', ')}`]
}

const limitsText = (l: unknown): string[] => {
  const names = asArr(l).map(str)
  return names.length === 0 ? [] : [`limits reached: ${names.join(', ')} (the answer is partial)`]
}

const scopeOf = (r: Rec): string =>
  typeof asRec(r['scope'])['path_prefix'] === 'string' ? ` under ${str(asRec(r['scope'])['path_prefix'])}` : ''

// --- the view ---------------------------------------------------------------------------------------

/** One unit a prompt guard may leave out (a row, a line, a hit, a block, a path, a column), with its lines. */
export interface CaptureItem {
  readonly lines: readonly string[]
}

/**
 * A capture for the prompt: `head` (what was asked and answered), `items` and `tail(shown)` (the
 * markers when the first `shown` items are shown: limits, truncation, skips, continuation).
 */
export interface CaptureView {
  readonly head: readonly string[]
  readonly items: readonly CaptureItem[]
  readonly tail: (shown: number) => readonly string[]
  /** What an item is, plural ("rows", "lines", "hits", "blocks", "paths", "columns"). */
  readonly unit: string
  /** What the capture held, in a few words. */
  readonly summary: string
}

const plural = (n: unknown, word: string): string => `${str(n)} ${word}${num(n) === 1 ? '' : 's'}`

const one = (lines: readonly string[]): CaptureItem => ({ lines })

/** Items grouped under a header line per file: the header travels with the first item of its file. */
const grouped = (
  c: Capture,
  entries: ReadonlyArray<{ path: string; lines: readonly string[] }>,
  separator: string | null
): CaptureItem[] => {
  let current: string | null = null
  return entries.map((e) => {
    const first = e.path !== current
    current = e.path
    return one(
      first ? [`${e.path}${blobOf(c, e.path)}:`, ...e.lines] : separator === null ? e.lines : [separator, ...e.lines]
    )
  })
}

const notShown = (unit: string, shown: number, total: number): string[] =>
  shown >= total
    ? []
    : [`[prompt limit: ${unit} ${shown + 1}-${total} of this answer are not shown; the case holds them]`]

const searchView = (c: Capture, r: Rec): CaptureView => {
  const hits = asArr(r['hits'])
  const width = Math.max(1, ...hits.map((h) => String(num(asRec(h)['line'])).length))
  const regs = asArr(r['registrations'])
  const markers: string[] = []
  if (regs.length > 0)
    markers.push(
      `registration candidates (not proof): ${regs.map((x) => `${str(asRec(x)['name'])} at ${str(asRec(x)['path'])}:${str(asRec(x)['line'])}`).join('; ')}`
    )
  else if (c.kind === 'source.registration')
    markers.push(
      `registration candidates: none with the prefixes ${asArr(r['registration_prefixes']).map(str).join(', ')}`
    )
  markers.push(...skippedText(r['skipped']), ...limitsText(r['limits_reached']))
  return {
    head: [
      `${c.kind} ${JSON.stringify(r['term'])} (${str(r['mode'])})${scopeOf(r)} @ ${origin(c)}: ${str(r['hit_count'])} hits in ${str(r['files_with_hits'])} of ${str(r['files_scanned'])} files scanned, ${str(r['result'])}`
    ],
    items: grouped(
      c,
      hits.map((h) => ({ path: str(asRec(h)['path']), lines: [numbered(width, num(asRec(h)['line']), h)] })),
      null
    ),
    tail: (shown) => [...notShown('hits', shown, hits.length), ...markers],
    unit: 'hits',
    summary: `${plural(r['hit_count'], 'hit')} in ${plural(r['files_with_hits'], 'file')}${r['complete'] === true ? '' : ', partial'}`
  }
}

const readView = (c: Capture, r: Rec): CaptureView => {
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
        : `lines ${first}-${last} of ${str(r['path'])} (${str(r['total_lines'])} lines)`
  }
}

const contextView = (c: Capture, r: Rec): CaptureView => {
  const head = [
    `source.context ${JSON.stringify(r['term'])} (${str(r['mode'])})${scopeOf(r)} @ ${origin(c)}: ${str(r['completeness'])}`
  ]
  const searches = asArr(r['searches']).map(asRec)
  const base = (p: unknown): string => str(p).slice(str(p).lastIndexOf('/') + 1)
  // the searches in one line: term, why it was followed and from where, what it found
  head.push(
    `searches: ${searches.map((x) => `${JSON.stringify(x['term'])}${x['reason'] === 'term' ? '' : ` (${x['reason'] === 'assignment' ? 'alias' : str(x['reason'])}, ${base(asRec(x['from'])['path'])}:${str(asRec(x['from'])['line'])})`} ${plural(x['hit_count'], 'hit')}${x['complete'] === true ? '' : ` (partial${asArr(x['limits_reached']).length > 0 ? `: ${asArr(x['limits_reached']).map(str).join(', ')}` : ''})`}`).join('; ')}; ${[...new Set(searches.map((x) => str(x['files_scanned'])))].join('/')} files scanned`
  )
  const skips = [...new Set(searches.map((x) => skippedText(x['skipped']).join('')).filter((x) => x !== ''))]
  if (skips.length > 0)
    head.push(skips.length === 1 && searches.length > 1 ? `every search ${skips[0] ?? ''}` : skips.join('; '))
  const hits = asArr(r['hits']).map(asRec)
  // a line that is a hit of several searches is marked by its best role (the term before a follow-up)
  const ROLES = ['term', 'alias', 'registration', 'loader', 'same_name']
  const roleAt = new Map<string, string>()
  for (const h of hits) {
    const key = `${str(h['path'])}:${str(h['line'])}`
    const role = str(h['role'] ?? 'term')
    const known = roleAt.get(key)
    if (known === undefined || ROLES.indexOf(role) < ROLES.indexOf(known)) roleAt.set(key, role)
  }
  const blocks = asArr(r['blocks']).map(asRec)
  const width = Math.max(1, ...blocks.map((b) => String(num(b['start_line']) + asArr(b['lines']).length).length))
  const mark = (role: string | undefined): string =>
    role === undefined ? ' ' : role === 'term' ? '>' : role === 'same_name' ? '~' : '+'
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
  markers.push(...limitsText(r['limits_reached']))
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

const rowsView = (c: Capture, r: Rec): CaptureView => {
  const columns = asArr(r['columns']).map((x) => str(asRec(x)['name']))
  const rows = asArr(r['rows'])
  const offset = num(r['offset'])
  const order = asArr(r['order'])
    .map((o) => `${str(asRec(o)['column'])} ${str(asRec(o)['direction'])}`)
    .join(', ')
  const capped: string[] = []
  if (r['row_limit_capped'] === true)
    capped.push(`row limit: ${str(r['requested_limit'])} rows were requested, at most ${str(r['limit'])} are returned`)
  if (r['byte_limit_reached'] === true) capped.push('byte limit reached: the page was cut to fit max_result_bytes')
  const whole = r['complete_filtered_rows'] === true
  return {
    head: [
      `database.rows ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${str(r['row_count'])} rows from offset ${offset} (limit ${str(r['limit'])}), ordered by ${order} (${str(r['order_source'])})`,
      asArr(r['columns'])
        .map((x) => `${str(asRec(x)['name'])} (${str(asRec(x)['type'])})`)
        .join('|')
    ],
    items: rows.map((row) => one([columns.map((col) => cell(asRec(row)[col])).join('|')])),
    tail: (shown) => {
      if (shown < rows.length) {
        return [
          `[prompt limit: rows at offsets ${offset + shown}-${offset + rows.length - 1} of this page are not shown]; continue with offset ${offset + shown}`,
          ...capped,
          whole
            ? 'the page holds all rows matching the filters; not all of them are shown here'
            : 'not all rows matching the filters are in this page'
        ]
      }
      return [
        ...(r['has_more'] === true ? [`has_more: more rows exist; continue with offset ${str(r['next_offset'])}`] : []),
        ...capped,
        whole
          ? 'complete: these are all rows matching the filters'
          : 'not all rows matching the filters are in this page'
      ]
    },
    unit: 'rows',
    summary: `${plural(r['row_count'], 'row')}${whole ? ', complete' : r['has_more'] === true ? ', more exist' : ''}`
  }
}

const schemaView = (c: Capture, r: Rec): CaptureView => {
  const columns = asArr(r['columns']).map(asRec)
  const markers = [
    `primary key: ${asArr(r['primary_key']).map(str).join(', ') || 'none'}`,
    ...asArr(r['indexes']).map(
      (x) =>
        `index ${str(asRec(x)['name'])}${asRec(x)['unique'] === true ? ' (unique)' : ''}: ${asArr(asRec(x)['columns']).map(str).join(', ')}`
    )
  ]
  return {
    head: [`database.schema ${str(r['table'])} @ ${origin(c)}:`],
    items: columns.map((col) =>
      one([
        `  ${str(col['name'])} ${str(col['type'])}${col['nullable'] === true ? ' NULL' : ' NOT NULL'}${col['key'] === null ? '' : ` ${str(col['key'])}`}`
      ])
    ),
    tail: (shown) => [...notShown('columns', shown, columns.length), ...markers],
    unit: 'columns',
    summary: `${columns.length} columns of ${str(r['table'])}`
  }
}

const filesView = (c: Capture, r: Rec): CaptureView => {
  const files = asArr(r['files'])
  return {
    head: [
      `source.files ${JSON.stringify(r['text'])}${scopeOf(r)} @ ${origin(c)}: ${str(r['match_count'])} paths match`
    ],
    items: files.map((f) =>
      one([`  ${str(asRec(f)['path'])}${asRec(f)['kind'] === 'blob' ? '' : ` (${str(asRec(f)['kind'])})`}`])
    ),
    tail: (shown) => [
      ...notShown('paths', shown, files.length),
      ...(r['truncated'] === true
        ? [`truncated: the first ${files.length} of ${str(r['match_count'])} paths are listed (file limit reached)`]
        : [])
    ],
    unit: 'paths',
    summary: `${str(r['match_count'])} paths`
  }
}

const flat = (head: string, tail: readonly string[], summary: string): CaptureView => ({
  head: [head],
  items: [],
  tail: () => tail,
  unit: 'items',
  summary
})

/** The view of a capture (see the module comment). */
export const captureView = (c: Capture): CaptureView => {
  const r = c.result
  switch (c.kind) {
    case 'source.search':
    case 'source.symbol':
    case 'source.schema':
    case 'source.registration':
      return searchView(c, r)
    case 'source.read':
      return readView(c, r)
    case 'source.context':
      return contextView(c, r)
    case 'source.files':
      return filesView(c, r)
    case 'database.rows':
      return rowsView(c, r)
    case 'database.count':
      return flat(
        `database.count ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${str(r['count'])} rows`,
        [],
        plural(r['count'], 'row')
      )
    case 'database.schema':
      return schemaView(c, r)
    case 'database.tables': {
      const names = (u: unknown): string =>
        asArr(u)
          .map((x) => `${str(asRec(x)['database'])}.${str(asRec(x)['table'])}`)
          .join(', ') || 'none'
      return flat(
        `database.tables @ ${origin(c)}: present: ${names(r['tables'])}`,
        [`allowed but missing: ${names(r['allowed_but_missing'])}`],
        `${asArr(r['tables']).length} tables present`
      )
    }
    default: {
      const _never: never = c.kind
      return flat(JSON.stringify(_never), [], '')
    }
  }
}

/** A capture's view with its first `shown` items (all by default), as lines. */
export const viewLines = (v: CaptureView, shown = v.items.length): string[] => [
  ...v.head,
  ...v.items.slice(0, shown).flatMap((i) => i.lines),
  ...v.tail(shown)
]

/** The capture's result as compact lines (every item shown). */
export const renderCapture = (c: Capture): string[] => viewLines(captureView(c))
