/** database.tables: see the module comment of define.ts. Pure. */
import { asArr, asRec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { alwaysRecheckable, defineQueryKind } from './define.js'
import { counted, databasePrefix, flat, memberNotes, origin, str } from './parts.js'

/** The tables as `database.table` (with how a missing member is written: the prompt's and the report's). */
const names = (u: unknown, text: (v: unknown) => string = str): string =>
  asArr(u)
    .map((x) => `${text(asRec(x)['database'])}.${text(asRec(x)['table'])}`)
    .join(', ') || 'none'

export const databaseTables = defineQueryKind({
  kind: 'database.tables',
  needs: 'database',
  signature: 'database.tables {text?, database?}',
  requestText: (request) => {
    const db = databasePrefix(request)
    return `database.tables${typeof request['text'] === 'string' ? ` ${JSON.stringify(request['text'])}` : ''}${db === '' ? '' : ` in ${db.slice(0, -1)}`}`
  },
  view: (c, r, w) =>
    flat(
      `database.tables @ ${origin(c)}: present: ${names(r['tables'])}`,
      [`allowed but missing: ${names(r['allowed_but_missing'])}`],
      `${counted(w, asArr(r['tables']).length, 'table')} present`
    ),
  reportBody: (_c, r) => `<p>${esc(`present: ${names(r['tables'], hstr)}`)}</p>`,
  tool: {
    description: (f) => `Which allowed tables exist in ${f.snapshot}, read-only. Allowed: ${f.allowlist}.`,
    notes: (f) => ({ ...memberNotes(f), text: 'only tables whose name contains this text' })
  },
  notRecheckable: alwaysRecheckable
})
