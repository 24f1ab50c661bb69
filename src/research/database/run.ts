/**
 * The database half of ProjectResearch: one function per query kind, each returning a capture.
 * Every identifier is validated and allow-listed before any SQL exists; columns are checked
 * against the schema the server reports.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../../failures/failure.js'
import {
  planCount,
  planPrecheckedRows,
  precheck,
  resolveTable,
  type DatabaseScope,
  type TableRef,
  type TableSchema
} from '../../domain/database-plan.js'
import type {
  DatabaseCount,
  DatabaseQuery,
  DatabaseRows,
  DatabaseSchema,
  DatabaseTables,
  QueryOf
} from '../../domain/query.js'
import type { Capture } from '../../events/capture.js'
import { FailureError, must } from '../../failures/error.js'
import type { Row, WorldDb } from '../../adapters/db/world-db.js'
import { buildCapture, HashedSettings, type Origin } from '../capture.js'

export interface DatabaseResearch {
  readonly db: WorldDb
  readonly scope: DatabaseScope
  readonly snapshotId: string
  /**
   * Table schemas read from the server, kept for the life of this research session. A snapshot
   * that is re-imported gets a new snapshot id and so a new session.
   */
  readonly schemas: Map<string, TableSchema>
  /** The settings of each database's captures with their hash, computed once per session. */
  readonly settings: Map<string, HashedSettings>
}

const origin = (r: DatabaseResearch, database: string): Origin => ({
  type: 'database',
  client: r.db.client,
  database,
  snapshot_id: r.snapshotId
})

const settingsOf = (r: DatabaseResearch, database: string): HashedSettings => {
  const cached = r.settings.get(database)
  if (cached !== undefined) return cached
  const l = r.scope.limits
  const settings = must(
    HashedSettings.of({
      client: r.db.client,
      // captures recorded before it reported an SQLite world's types as declared (TEXT_DECIMAL(14,4))
      ...(r.db.sqliteTypes === 'mysql' ? { sqlite_types: 'mysql' } : {}),
      allowed_tables: [...(r.scope.allowedTables[database] ?? [])].sort(),
      limits: {
        time_ms: l.time_ms,
        max_rows: l.max_rows,
        max_result_bytes: l.max_result_bytes,
        max_in_values: l.max_in_values,
        max_filters: l.max_filters,
        max_columns: l.max_columns
      }
    })
  )
  r.settings.set(database, settings)
  return settings
}

/**
 * The capture of a database query: the database's origin and settings, the result, bounded by the
 * result limit (`resultBytes`: its size, when the caller measured it already).
 */
const databaseCapture = (
  r: DatabaseResearch,
  kind: DatabaseQuery['kind'],
  q: DatabaseQuery,
  database: string,
  result: Record<string, unknown>,
  resultBytes?: number
): Capture =>
  must(
    buildCapture(
      kind,
      q,
      origin(r, database),
      settingsOf(r, database),
      result,
      r.scope.limits.max_result_bytes,
      resultBytes
    )
  )

const schemaOf = async (r: DatabaseResearch, ref: TableRef): Promise<TableSchema> => {
  const key = `${ref.database}.${ref.table}`
  const cached = r.schemas.get(key)
  if (cached !== undefined) return cached
  const schema = await r.db.tableSchema(ref)
  if (schema !== null) r.schemas.set(key, schema)
  if (schema === null)
    throw new FailureError(
      failure('TABLE_NOT_FOUND', `table ${ref.table} is allowed but does not exist in ${ref.database}`, { ...ref })
    )
  return schema
}

const tables = async (r: DatabaseResearch, q: DatabaseTables): Promise<Capture> => {
  const dbs = q.database === undefined ? r.scope.databases : [must(resolveDatabase(r.scope, q.database))]
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
  return databaseCapture(r, 'database.tables', q, first, {
    tables: found,
    allowed_but_missing: missing,
    complete: true
  })
}

const resolveDatabase = (scope: DatabaseScope, database: string): E.Either<Failure, string> =>
  scope.databases.includes(database)
    ? E.right(database)
    : E.left(
        failure('DATABASE_NOT_ALLOWED', `database ${JSON.stringify(database.slice(0, 64))} is not configured`, {
          database: database.slice(0, 64)
        })
      )

const schema = async (r: DatabaseResearch, q: DatabaseSchema): Promise<Capture> => {
  const ref = must(resolveTable(r.scope, q.table, q.database))
  const s = await schemaOf(r, ref)
  return databaseCapture(r, 'database.schema', q, ref.database, {
    table: s.table,
    columns: s.columns,
    primary_key: s.primary_key,
    indexes: s.indexes
  })
}

/** Canonical size of a row (canonical JSON only reorders members, so JSON.stringify's length is it). */
const rowBytes = (row: Row): number => Buffer.byteLength(JSON.stringify(row)) + 1

const rows = async (r: DatabaseResearch, q: DatabaseRows): Promise<Capture> => {
  const ref = must(resolveTable(r.scope, q.table, q.database))
  must(precheck(r.scope, q))
  const s = await schemaOf(r, ref)
  const plan = must(planPrecheckedRows(r.scope, s, q))
  // Reading stops once the rows hold more than the result may (memory bounded by max_result_bytes).
  const { rows: fetched, upperBytes } = await r.db.selectRows(plan, s, r.scope.limits.max_result_bytes - 2048)
  const more = fetched.length > plan.limit
  const page = more ? fetched.slice(0, plan.limit) : fetched
  const types = new Map(s.columns.map((c) => [c.name, c.type]))
  const resultFor = (returned: readonly Row[], byteLimited: boolean): Record<string, unknown> => {
    const hasMore = more || byteLimited
    return {
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
    }
  }
  // Usually the whole page fits: measure it once. Otherwise keep rows while they fit.
  const budget = r.scope.limits.max_result_bytes - 2048
  const whole = resultFor(page, false)
  // An upper bound that fits is as good as the exact size (and needs no serialisation).
  const bound = upperBytes + 4096
  const wholeBytes = bound <= budget ? bound : Buffer.byteLength(JSON.stringify(whole))
  if (wholeBytes <= budget) return databaseCapture(r, 'database.rows', q, ref.database, whole, wholeBytes)
  let used = 0
  let kept = 0
  for (const row of page) {
    const size = rowBytes(row)
    if (used + size > budget) break
    used += size
    kept++
  }
  if (kept === 0) {
    throw new FailureError(
      failure(
        'RESULT_TOO_LARGE',
        `one row is larger than the result limit of ${r.scope.limits.max_result_bytes} bytes; select fewer columns`,
        { max_result_bytes: r.scope.limits.max_result_bytes }
      )
    )
  }
  return databaseCapture(r, 'database.rows', q, ref.database, resultFor(page.slice(0, kept), true))
}

const count = async (r: DatabaseResearch, q: DatabaseCount): Promise<Capture> => {
  const ref = must(resolveTable(r.scope, q.table, q.database))
  must(precheck(r.scope, q))
  const s = await schemaOf(r, ref)
  const plan = must(planCount(r.scope, s, q))
  const n = await r.db.count(plan)
  return databaseCapture(r, 'database.count', q, ref.database, {
    table: ref.table,
    count: n,
    complete: true
  })
}

type DatabaseKind = DatabaseQuery['kind']

/** The executor of each database kind (mapped: a database kind without one does not compile). */
const EXECUTORS: { readonly [K in DatabaseKind]: (r: DatabaseResearch, q: QueryOf<K>) => Promise<Capture> } = {
  'database.tables': tables,
  'database.schema': schema,
  'database.rows': rows,
  'database.count': count
}

/** Runs one database query. Throws FailureError with a coded failure on refusal or outage. */
export const runDatabaseQuery = (r: DatabaseResearch, q: DatabaseQuery): Promise<Capture> =>
  // the executor of q's own kind (the table's mapped type ties them; TypeScript cannot follow it through a union)
  (EXECUTORS[q.kind] as (r: DatabaseResearch, q: DatabaseQuery) => Promise<Capture>)(r, q)
