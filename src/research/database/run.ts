/**
 * The database half of ProjectResearch: one function per query kind, each returning a capture.
 * Every identifier is validated and allow-listed before any SQL exists; columns are checked
 * against the schema the server reports.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../../domain/failure.js'
import { planCount, planRows, precheck, resolveTable, type DatabaseScope, type TableRef, type TableSchema } from '../../domain/database-plan.js'
import type { DatabaseCount, DatabaseQuery, DatabaseRows, DatabaseSchema, DatabaseTables } from '../../domain/query.js'
import { canonicalJson } from '../../events/canonical.js'
import type { Capture } from '../../events/capture.js'
import { FailureError } from '../../adapters/fs-util.js'
import type { Row, WorldDb } from '../../adapters/db/world-db.js'
import { buildCapture, type Origin } from '../capture.js'

export interface DatabaseResearch {
  readonly db: WorldDb
  readonly scope: DatabaseScope
  readonly snapshotId: string
}

const origin = (r: DatabaseResearch, database: string): Origin => ({ type: 'database', client: r.db.client, database, snapshot_id: r.snapshotId })

const settingsOf = (r: DatabaseResearch, database: string): Record<string, unknown> => {
  const l = r.scope.limits
  return {
    client: r.db.client,
    allowed_tables: [...(r.scope.allowedTables[database] ?? [])].sort(),
    limits: { time_ms: l.time_ms, max_rows: l.max_rows, max_result_bytes: l.max_result_bytes, max_in_values: l.max_in_values, max_filters: l.max_filters, max_columns: l.max_columns }
  }
}

const orThrow = <A>(e: E.Either<Failure, A>): A => {
  if (E.isLeft(e)) throw new FailureError(e.left)
  return e.right
}

const schemaOf = async (r: DatabaseResearch, ref: TableRef): Promise<TableSchema> => {
  const schema = await r.db.tableSchema(ref)
  if (schema === null) throw new FailureError(failure('TABLE_NOT_FOUND', `table ${ref.table} is allowed but does not exist in ${ref.database}`, { ...ref }))
  return schema
}

const tables = async (r: DatabaseResearch, q: DatabaseTables): Promise<Capture> => {
  const dbs = q.database === undefined ? r.scope.databases : [orThrow(resolveDatabase(r.scope, q.database))]
  const found: Array<{ database: string; table: string }> = []
  const missing: Array<{ database: string; table: string }> = []
  for (const database of dbs) {
    const present = new Set(await r.db.listTables(database))
    for (const table of [...(r.scope.allowedTables[database] ?? [])].sort()) {
      if (q.text !== undefined && !table.includes(q.text)) continue
      if (present.has(table)) found.push({ database, table })
      else missing.push({ database, table })
    }
  }
  const first = dbs[0] ?? ''
  return orThrow(buildCapture('database.tables', q, origin(r, first), settingsOf(r, first), {
    tables: found,
    allowed_but_missing: missing,
    complete: true
  }, r.scope.limits.max_result_bytes))
}

const resolveDatabase = (scope: DatabaseScope, database: string): E.Either<Failure, string> =>
  scope.databases.includes(database) ? E.right(database) : E.left(failure('DATABASE_NOT_ALLOWED', `database ${JSON.stringify(database.slice(0, 64))} is not configured`, { database: database.slice(0, 64) }))

const schema = async (r: DatabaseResearch, q: DatabaseSchema): Promise<Capture> => {
  const ref = orThrow(resolveTable(r.scope, q.table, q.database))
  const s = await schemaOf(r, ref)
  return orThrow(buildCapture('database.schema', q, origin(r, ref.database), settingsOf(r, ref.database), {
    table: s.table,
    columns: s.columns,
    primary_key: s.primary_key,
    indexes: s.indexes
  }, r.scope.limits.max_result_bytes))
}

const rowBytes = (row: Row): number => {
  const text = canonicalJson(row)
  return E.isRight(text) ? Buffer.byteLength(text.right) + 1 : Number.MAX_SAFE_INTEGER
}

const rows = async (r: DatabaseResearch, q: DatabaseRows): Promise<Capture> => {
  const ref = orThrow(resolveTable(r.scope, q.table, q.database))
  orThrow(precheck(r.scope, q))
  const s = await schemaOf(r, ref)
  const plan = orThrow(planRows(r.scope, s, q))
  const fetched = await r.db.selectRows(plan, s)
  const more = fetched.length > plan.limit
  const page = more ? fetched.slice(0, plan.limit) : fetched
  // Keep rows while the result stays under the byte limit (with room for the envelope).
  const budget = r.scope.limits.max_result_bytes - 2048
  let used = 0
  let kept = 0
  for (const row of page) {
    const size = rowBytes(row)
    if (used + size > budget) break
    used += size
    kept++
  }
  const byteLimited = kept < page.length
  if (byteLimited && kept === 0) {
    throw new FailureError(failure('RESULT_TOO_LARGE', `one row is larger than the result limit of ${r.scope.limits.max_result_bytes} bytes; select fewer columns`, { max_result_bytes: r.scope.limits.max_result_bytes }))
  }
  const hasMore = more || byteLimited
  const returned = page.slice(0, kept)
  const types = new Map(s.columns.map((c) => [c.name, c.type]))
  return orThrow(buildCapture('database.rows', q, origin(r, ref.database), settingsOf(r, ref.database), {
    table: ref.table,
    columns: plan.columns.map((name) => ({ name, type: types.get(name) ?? 'unknown' })),
    rows: returned,
    row_count: returned.length,
    offset: plan.offset,
    limit: plan.limit,
    requested_limit: plan.requested_limit,
    row_limit_capped: plan.limit < plan.requested_limit,
    byte_limit_reached: byteLimited,
    has_more: hasMore,
    next_offset: hasMore ? plan.offset + returned.length : null,
    complete_filtered_rows: plan.offset === 0 && !hasMore,
    order: plan.order,
    order_source: plan.order_source
  }, r.scope.limits.max_result_bytes))
}

const count = async (r: DatabaseResearch, q: DatabaseCount): Promise<Capture> => {
  const ref = orThrow(resolveTable(r.scope, q.table, q.database))
  orThrow(precheck(r.scope, q))
  const s = await schemaOf(r, ref)
  const plan = orThrow(planCount(r.scope, s, q))
  const n = await r.db.count(plan)
  return orThrow(buildCapture('database.count', q, origin(r, ref.database), settingsOf(r, ref.database), {
    table: ref.table,
    count: n,
    complete: true
  }, r.scope.limits.max_result_bytes))
}

/** Runs one database query. Throws FailureError with a coded failure on refusal or outage. */
export const runDatabaseQuery = (r: DatabaseResearch, q: DatabaseQuery): Promise<Capture> => {
  switch (q.kind) {
    case 'database.tables': return tables(r, q)
    case 'database.schema': return schema(r, q)
    case 'database.rows': return rows(r, q)
    case 'database.count': return count(r, q)
    default: {
      const _never: never = q
      throw new TypeError(`unhandled query ${JSON.stringify(_never)}`)
    }
  }
}
