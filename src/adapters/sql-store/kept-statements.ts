/**
 * The statements a store keeps per shape: one StatementCache per knex instance (a store's dialect
 * and clock are fixed), as the database research keeps its SELECTs. The appends' statements
 * (append-statements.ts) and the case row's read (rows.ts) are kept there.
 */
import type { Knex } from 'knex'
import type { Statement } from '../db/executors.js'
import { StatementCache } from '../db/statement-cache.js'

const caches = new WeakMap<Knex, StatementCache>()

/** The kept statements of the store of `k`. */
export const keptStatements = (k: Knex): StatementCache => {
  let cache = caches.get(k)
  if (cache === undefined) {
    cache = new StatementCache()
    caches.set(k, cache)
  }
  return cache
}

/** The text and values of a query knex built (without the rest of its toSQL()). */
export const built = (query: { readonly toSQL: () => Knex.Sql }): Statement => {
  const { sql, bindings } = query.toSQL()
  return { sql, bindings }
}
