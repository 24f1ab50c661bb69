/**
 * Requests and database values as text: a value exactly (NULL as NULL, text quoted only where it
 * could be misread), filters as a WHERE clause, a request as one line. Shared by the prompt's
 * capture text and the case report. Pure.
 */
import { asArr, asRec, type Rec } from './json-read.js'

const str = (u: unknown): string => (typeof u === 'string' ? u : String(u))

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
