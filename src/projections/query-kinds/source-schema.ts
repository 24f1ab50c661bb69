/** source.schema: see the module comment of define.ts. Pure. */
import { textRequest } from './parts.js'
import { searchKind } from './search-parts.js'

export const sourceSchema = searchKind({
  kind: 'source.schema',
  signature: 'source.schema {text}',
  options: 'ignore_case?',
  requestText: textRequest('source.schema'),
  description: (f) =>
    `Literal hits in the .sql files of ${f.at}: the schema and data as committed, not the live database's.`
})
