/**
 * Database values and filters as text: a value exactly (NULL as NULL, text quoted only where it
 * could be misread), filters as a WHERE clause. Shared by the query kinds' texts, the prompt's
 * capture text and the case report. Pure.
 */
import { asArr, asRec } from './json-read.js'

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

/** Filters as a WHERE clause (empty without filters). */
export const where = (filters: unknown): string => {
  const fs = asArr(filters)
  return fs.length === 0 ? '' : ` where ${fs.map(filterText).join(' and ')}`
}
