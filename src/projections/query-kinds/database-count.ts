/** database.count: see the module comment of define.ts. Pure. */
import { esc } from '../report/html.js'
import { where } from '../values-text.js'
import { alwaysRecheckable, defineQueryKind } from './define.js'
import { counted, databasePrefix, flat, memberNotes, origin, plural, str } from './parts.js'

export const databaseCount = defineQueryKind({
  kind: 'database.count',
  needs: 'database',
  signature: 'database.count {table, filters, database?}',
  requestText: (request) =>
    `database.count ${databasePrefix(request)}${str(request['table'])}${where(request['filters'])}`,
  view: (c, r, w) =>
    flat(
      `database.count ${str(r['table'])}${where(c.request['filters'])} @ ${origin(c)}: ${counted(w, r['count'], 'row')}`,
      [],
      plural(r['count'], 'row')
    ),
  reportBody: (_c, r) => `<p>${esc(plural(r['count'], 'row'))}</p>`,
  tool: {
    description: (f) =>
      `The number of rows of an allowed table of ${f.snapshot} that match the filters (joined with AND), read-only.`,
    notes: memberNotes
  },
  notRecheckable: alwaysRecheckable
})
