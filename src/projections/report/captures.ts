/**
 * A capture rendered for people: numbered source lines with path, blob and commit, hits by file,
 * database rows as tables with exact values (long values folded), and the markers of what a
 * capture left out.
 */
import type { Capture } from '../../events/capture.js'
import type { Requester } from '../../events/catalog.js'
import { cell } from '../request-text.js'
import { esc, str } from './html.js'
import { asArr, asRec, type Rec } from '../json-read.js'

const lineText = (l: unknown): { text: string; cut: string } => {
  const r = asRec(l)
  const t = typeof l === 'string' ? l : str(r['text'])
  return {
    text: t,
    cut: r['text_truncated'] === true ? ` [line cut at ${t.length} of ${str(r['length'])} characters]` : ''
  }
}

const sourceTable = (rows: ReadonlyArray<{ line: number; text: string; cut: string; hit?: boolean }>): string =>
  `<table class="src"><tbody>${rows.map((r) => `<tr${r.hit === true ? ' class="hit"' : ''}><td class="num">${r.line}</td><td class="code">${foldable(r.text)}${r.cut === '' ? '' : `<span class="marker">${esc(r.cut)}</span>`}</td></tr>`).join('')}</tbody></table>`

const blobOf = (c: Capture, path: string): string => {
  if (c.origin.type !== 'git') return ''
  const f = c.origin.files.find((x) => x.path === path)
  return f === undefined ? '' : ` <span class="muted mono">blob ${esc(f.blob)}</span>`
}

const markers = (list: readonly string[]): string => list.map((m) => `<p class="marker">${esc(m)}</p>`).join('')

const limitsOf = (r: Rec): string[] => {
  const names = asArr(r['limits_reached']).map(str)
  const out = names.length === 0 ? [] : [`limits reached: ${names.join(', ')} (the answer is partial)`]
  const counts = Object.entries(asRec(asRec(r['skipped'])['counts']))
  if (counts.length > 0) out.push(`skipped: ${counts.map(([k, n]) => `${k} ${str(n)}`).join(', ')}`)
  return out
}

const hitsByFile = (c: Capture, hits: readonly unknown[]): string => {
  const files = new Map<string, Array<{ line: number; text: string; cut: string }>>()
  for (const h of hits) {
    const r = asRec(h)
    const list = files.get(str(r['path'])) ?? []
    list.push({ line: Number(r['line']), ...lineText(r) })
    files.set(str(r['path']), list)
  }
  return [...files]
    .map(
      ([path, rows]) =>
        `<h4 class="mono">${esc(path)}${blobOf(c, path)} <span class="muted">(${rows.length} hit${rows.length === 1 ? '' : 's'})</span></h4>${sourceTable(rows)}`
    )
    .join('')
}

/** Values longer than this (or of more lines) are folded: a short summary that expands to the whole value in a box of bounded height. */
const LONG_CHARS = 300
const LONG_LINES = 8

/** A value's cell content: the value, or for a long one an expander (the page stays readable whatever a value holds). */
const foldable = (text: string): string => {
  const lines = text.split('\n', LONG_LINES + 1).length
  if (text.length <= LONG_CHARS && lines <= LONG_LINES) return esc(text)
  const head = text.slice(0, 120).split('\n').slice(0, 2).join('\n')
  return `<details class="long"><summary>${esc(head)}… <span class="muted">(${text.length} characters)</span></summary><div class="full">${esc(text)}</div></details>`
}

export const valueCell = (v: unknown): string =>
  v === null || v === undefined
    ? '<td class="null">NULL</td>'
    : `<td class="code val">${foldable(typeof v === 'string' ? v : cell(v))}</td>`

export const captureBody = (c: Capture): string => {
  const r = c.result
  switch (c.kind) {
    case 'source.search':
    case 'source.symbol':
    case 'source.schema':
    case 'source.registration': {
      const regs = asArr(r['registrations'])
      return `<p>${esc(`${str(r['hit_count'])} hits in ${str(r['files_with_hits'])} of ${str(r['files_scanned'])} files scanned (${str(r['mode'])}), ${str(r['result'])}`)}</p>${hitsByFile(c, asArr(r['hits']))}${regs.length > 0 ? `<p>registration candidates (not proof): ${regs.map((x) => esc(`${str(asRec(x)['name'])} at ${str(asRec(x)['path'])}:${str(asRec(x)['line'])}`)).join('; ')}</p>` : ''}${markers(limitsOf(r))}`
    }
    case 'source.read': {
      const lines = asArr(r['lines']).map((l) => ({ line: Number(asRec(l)['line']), ...lineText(l) }))
      const m: string[] = []
      if (r['truncated'] === true) m.push(`truncated: continue with start_line ${str(r['next_start_line'])}`)
      if (r['line_limit_exceeded'] === true)
        m.push(
          `line limit ${str(r['line_limit'])} exceeded: requested ${str(r['requested_start_line'])}-${str(r['requested_end_line'])}`
        )
      if (typeof r['read_notice'] === 'string') m.push(`notice: ${r['read_notice']}`)
      if (r['eof'] === true) m.push('end of file reached')
      return `<p><span class="mono">${esc(str(r['path']))}</span> <span class="muted mono">blob ${esc(str(r['blob']))}</span>, ${lines.length === 0 ? 'no lines' : `lines ${lines[0]?.line ?? ''}-${lines[lines.length - 1]?.line ?? ''}`} of ${esc(str(r['total_lines']))}</p>${sourceTable(lines)}${markers(m)}`
    }
    case 'source.context': {
      const hitSet = new Set(asArr(r['hits']).map((h) => `${str(asRec(h)['path'])}:${str(asRec(h)['line'])}`))
      const blocks = asArr(r['blocks'])
        .map((b) => {
          const x = asRec(b)
          const path = str(x['path'])
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
          return `<li>${esc(`search ${str(x['index'])}: ${JSON.stringify(x['term'])} (${str(x['reason'])}): ${str(x['hit_count'])} hits, ${str(x['files_scanned'])} files scanned${x['complete'] === true ? '' : ', partial'}`)}</li>`
        })
        .join('')
      return `<p>${esc(`completeness: ${str(r['completeness'])}`)}</p><ul>${searches}</ul>${blocks}${markers(limitsOf(r))}`
    }
    case 'source.files': {
      const files = asArr(r['files'])
      return `<p>${esc(`${str(r['match_count'])} paths match`)}</p><ul class="mono">${files.map((f) => `<li>${esc(str(asRec(f)['path']))}</li>`).join('')}</ul>${r['truncated'] === true ? markers([`truncated: the first ${files.length} of ${str(r['match_count'])} paths are listed`]) : ''}`
    }
    case 'database.rows': {
      const cols = asArr(r['columns']).map((x) => asRec(x))
      const rows = asArr(r['rows'])
      const m: string[] = []
      if (r['has_more'] === true) m.push(`more rows exist: continue with offset ${str(r['next_offset'])}`)
      if (r['row_limit_capped'] === true)
        m.push(`row limit: ${str(r['requested_limit'])} rows were requested, at most ${str(r['limit'])} are returned`)
      if (r['byte_limit_reached'] === true) m.push('byte limit reached: the page was cut to fit max_result_bytes')
      m.push(
        r['complete_filtered_rows'] === true
          ? 'complete: these are all rows matching the filters'
          : 'not all rows matching the filters are in this page'
      )
      const order = asArr(r['order'])
        .map((o) => `${str(asRec(o)['column'])} ${str(asRec(o)['direction'])}`)
        .join(', ')
      return `<p>${esc(`${str(r['row_count'])} rows from offset ${str(r['offset'])} (limit ${str(r['limit'])}), ordered by ${order}`)}</p><table><thead><tr>${cols.map((x) => `<th>${esc(str(x['name']))}<br><span class="muted">${esc(str(x['type']))}</span></th>`).join('')}</tr></thead><tbody>${rows.map((row) => `<tr>${cols.map((x) => valueCell(asRec(row)[str(x['name'])])).join('')}</tr>`).join('')}</tbody></table>${markers(m)}`
    }
    case 'database.count':
      return `<p>${esc(`${str(r['count'])} rows`)}</p>`
    case 'database.schema':
      return `<table><thead><tr><th>column</th><th>type</th><th>null</th><th>key</th></tr></thead><tbody>${asArr(
        r['columns']
      )
        .map((x) => {
          const col = asRec(x)
          return `<tr><td class="code">${esc(str(col['name']))}</td><td class="code">${esc(str(col['type']))}</td><td>${col['nullable'] === true ? 'NULL' : 'NOT NULL'}</td><td>${esc(col['key'] === null ? '' : str(col['key']))}</td></tr>`
        })
        .join('')}</tbody></table>`
    case 'database.tables':
      return `<p>${esc(
        `present: ${
          asArr(r['tables'])
            .map((x) => `${str(asRec(x)['database'])}.${str(asRec(x)['table'])}`)
            .join(', ') || 'none'
        }`
      )}</p>`
    default:
      return `<pre>${esc(JSON.stringify(r, null, 2))}</pre>`
  }
}

/** An MCP client as it named itself when it connected (its own claim). */
export const requesterText = (r: Requester): string =>
  `${esc(r.protocol.toUpperCase())} client <span class="mono requester">${esc(r.name)}${r.version === '' ? '' : ` ${esc(r.version)}`}</span>`
