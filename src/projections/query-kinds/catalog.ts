/**
 * The query kinds' definitions, one per kind (each in its own file beside this one), mapped by
 * kind: a kind of QUERY_REQUESTS without a definition here does not compile. Pure.
 */
import type { QueryKind } from '../../events/query-requests.js'
import type { QueryKindDefinition } from './define.js'
import { sourceFiles } from './source-files.js'
import { sourceSearch } from './source-search.js'
import { sourceSymbol } from './source-symbol.js'
import { sourceRegistration } from './source-registration.js'
import { sourceSchema } from './source-schema.js'
import { sourceRead } from './source-read.js'
import { sourceContext } from './source-context.js'
import { databaseTables } from './database-tables.js'
import { databaseSchema } from './database-schema.js'
import { databaseRows } from './database-rows.js'
import { databaseCount } from './database-count.js'

export const QUERY_KIND_DEFINITIONS: { readonly [K in QueryKind]: QueryKindDefinition<K> } = {
  'source.files': sourceFiles,
  'source.search': sourceSearch,
  'source.symbol': sourceSymbol,
  'source.registration': sourceRegistration,
  'source.schema': sourceSchema,
  'source.read': sourceRead,
  'source.context': sourceContext,
  'database.tables': databaseTables,
  'database.schema': databaseSchema,
  'database.rows': databaseRows,
  'database.count': databaseCount
}
