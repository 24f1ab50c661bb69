/** database.rows: see the module comment of define.ts. Pure. */
import type { Capture } from '../../events/capture.js'
import { asArr, asRec, type Rec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { markers, valueCell } from '../report/capture-html.js'
import { cell, where } from '../values-text.js'
import { alwaysRecheckable, defineQueryKind, type CaptureView } from './define.js'
import {
  counted,
  databasePrefix,
  memberNotes,
  num,
  one,
  orderText,
  origin,
  plural,
  str,
  type Wording
} from './parts.js'

/** The limits a page of rows reached, in words (`text` shows a value: the prompt's way or the report's). */
const pageLimits = (r: Rec, text: (u: unknown) => string): string[] => [
  ...(r['row_limit_capped'] === true
    ? [`row limit: ${text(r['requested_limit'])} rows were requested, at most ${text(r['limit'])} are returned`]
    : []),
  ...(r['byte_limit_reached'] === true ? ['byte limit reached: the page was cut to fit max_result_bytes'] : [])
]

/** Whether a page holds every row matching the filters, in words. */
const wholePage = (r: Rec): string =>
  r['complete_filtered_rows'] === true
    ? 'complete: these are all rows matching the filters'
    : 'not all rows matching the filters are in this page'

const rowsView = (c: Capture, r: Rec, w: Wording): CaptureView => {
  const columns = asArr(r['columns']).map((x) => str(asRec(x)['name']))
  const rows = asArr(r['rows'])
  const offset = num(r['offset'])
  const capped = pageLimits(r, str)
  const whole = r['complete_filtered_rows'] === true
  return {
    head: [
      `database.rows ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${counted(w, r['row_count'], 'row')} from offset ${offset} (limit ${str(r['limit'])}), ordered by ${orderText(r['order'])} (${str(r['order_source'])})`,
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
        wholePage(r)
      ]
    },
    unit: 'rows',
    summary: `${plural(r['row_count'], 'row')}${whole ? ', complete' : r['has_more'] === true ? ', more exist' : ''}`
  }
}

const rowsBody = (_c: Capture, r: Rec): string => {
  const cols = asArr(r['columns']).map((x) => asRec(x))
  const rows = asArr(r['rows'])
  const m = [
    ...(r['has_more'] === true ? [`more rows exist: continue with offset ${hstr(r['next_offset'])}`] : []),
    ...pageLimits(r, hstr),
    wholePage(r)
  ]
  return `<p>${esc(`${plural(r['row_count'], 'row')} from offset ${hstr(r['offset'])} (limit ${hstr(r['limit'])}), ordered by ${orderText(r['order'])}`)}</p><table><thead><tr>${cols.map((x) => `<th>${esc(hstr(x['name']))}<br><span class="muted">${esc(hstr(x['type']))}</span></th>`).join('')}</tr></thead><tbody>${rows.map((row) => `<tr>${cols.map((x) => valueCell(asRec(row)[hstr(x['name'])])).join('')}</tr>`).join('')}</tbody></table>${markers(m)}`
}

export const databaseRows = defineQueryKind({
  kind: 'database.rows',
  needs: 'database',
  signature: 'database.rows {table, columns, filters, offset, limit, order_by?, database?}',
  requestText: (request) => {
    const order = orderText(request['order_by'])
    return `database.rows ${databasePrefix(request)}${str(request['table'])} [${asArr(request['columns']).map(str).join(', ')}]${where(request['filters'])}${order === '' ? '' : ` order by ${order}`} offset ${str(request['offset'])} limit ${str(request['limit'])}`
  },
  view: rowsView,
  reportBody: rowsBody,
  tool: {
    description: (f) =>
      `One page of rows of an allowed table of ${f.snapshot}, read-only: the chosen columns, filters joined with AND, from offset, at most ${plural(f.limits.max_rows, 'row')}. has_more and next_offset say how to continue; complete_filtered_rows is true only when the page holds every matching row. Values are exact (DECIMAL and BIGINT as strings, NULL as null). Template data says what the data is, not what a running server did.`,
    notes: memberNotes
  },
  notRecheckable: alwaysRecheckable
})
