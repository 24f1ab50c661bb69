/** database.schema: see the module comment of define.ts. Pure. */
import { asArr, asRec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { alwaysRecheckable, defineQueryKind } from './define.js'
import { counted, databasePrefix, memberNotes, notShown, one, origin, str } from './parts.js'

export const databaseSchema = defineQueryKind({
  kind: 'database.schema',
  needs: 'database',
  signature: 'database.schema {table, database?}',
  requestText: (request) => `database.schema ${databasePrefix(request)}${str(request['table'])}`,
  view: (c, r, w) => {
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
      summary: `${counted(w, columns.length, 'column')} of ${str(r['table'])}`
    }
  },
  reportBody: (_c, r) =>
    `<table><thead><tr><th>column</th><th>type</th><th>null</th><th>key</th></tr></thead><tbody>${asArr(r['columns'])
      .map((x) => {
        const col = asRec(x)
        return `<tr><td class="code">${esc(hstr(col['name']))}</td><td class="code">${esc(hstr(col['type']))}</td><td>${col['nullable'] === true ? 'NULL' : 'NOT NULL'}</td><td>${esc(col['key'] === null ? '' : hstr(col['key']))}</td></tr>`
      })
      .join('')}</tbody></table>`,
  tool: {
    description: (f) =>
      `Columns (name, type, nullability, key), primary key and indexes of one allowed table of ${f.snapshot}.`,
    notes: memberNotes
  },
  notRecheckable: alwaysRecheckable
})
