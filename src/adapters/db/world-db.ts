/**
 * The read-only world database, through knex: mysql2 for MariaDB/MySQL, better-sqlite3 (v12) for
 * embedded snapshot files. Read-only in three layers besides the operator's SELECT-only user:
 * every session is `TRANSACTION READ ONLY` (SQLite: a read-only file handle plus
 * `PRAGMA query_only`), every query runs in a read-only transaction, and the only SQL that exists
 * is what the structured plans below build. Server-side statement time limits (MariaDB
 * `max_statement_time`, MySQL `max_execution_time`) plus a client-side timeout bound every query.
 *
 * Credentials come from an environment variable or a password file; they are passed to the driver
 * and nowhere else. Driver errors are mapped to coded failures whose messages are written here,
 * never copied from the driver, so no credential or server detail leaks into captures or logs.
 */
import { promises as fsp } from 'node:fs'
import knexFactory, { type Knex } from 'knex'
import { failure, type Failure } from '../../domain/failure.js'
import { LIKE_ESCAPE, type CountPlan, type PlannedFilter, type RowsPlan, type TableRef, type TableSchema, type ColumnInfo, type IndexInfo } from '../../domain/database-plan.js'
import type { ProjectLimits } from '../../domain/limits.js'
import type { DatabaseSection } from '../config/profile.js'
import { FailureError, errnoOf } from '../fs-util.js'
import { sqliteDataType, toJsonValue, type JsonValue } from './values.js'

export type Row = Readonly<Record<string, JsonValue>>

export interface WorldDb {
  readonly client: 'mysql2' | 'better-sqlite3'
  /** `mariadb`, `mysql` or `sqlite`, known after the first connection. */
  readonly dialect: () => string
  readonly listTables: (database: string) => Promise<string[]>
  readonly tableSchema: (ref: TableRef) => Promise<TableSchema | null>
  /** Up to plan.limit + 1 rows (one more than returned, to know whether more exist). */
  readonly selectRows: (plan: RowsPlan, schema: TableSchema) => Promise<Row[]>
  readonly count: (plan: CountPlan) => Promise<number | string>
  readonly close: () => Promise<void>
}

export interface OpenOptions {
  readonly limits: ProjectLimits
  /** Where password_env is looked up (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const unavailable = (message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure('DATABASE_UNAVAILABLE', message, data))

/** Reads the reader's password from the configured source; never echoes it. */
export const resolvePassword = async (db: DatabaseSection, env: Readonly<Record<string, string | undefined>>): Promise<string | undefined> => {
  if (db.password_env !== undefined) {
    const value = env[db.password_env]
    if (value === undefined) throw new FailureError(failure('CREDENTIALS_MISSING', `environment variable ${db.password_env} (named by password_env) is not set`, { password_env: db.password_env }))
    return value
  }
  if (db.password_file !== undefined) {
    try {
      return (await fsp.readFile(db.password_file, 'utf8')).replace(/\r?\n$/, '')
    } catch (e) {
      throw new FailureError(failure('CREDENTIALS_MISSING', `cannot read password_file (${errnoOf(e) ?? 'error'})`, { password_file: db.password_file }))
    }
  }
  return undefined
}

const TIMEOUT_CODES = new Set(['ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'PROTOCOL_SEQUENCE_TIMEOUT'])
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST', 'ER_ACCESS_DENIED_ERROR', 'ER_DBACCESS_DENIED_ERROR', 'ER_BAD_DB_ERROR', 'ER_CON_COUNT_ERROR', 'EPIPE', 'SQLITE_CANTOPEN', 'SQLITE_NOTADB'])

/** Maps a driver or knex error to a coded failure with a message written here. */
export const mapDbError = (e: unknown, timeMs: number): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = e as { name?: string; code?: string; errno?: number; sqlState?: string }
  const code = typeof err?.code === 'string' ? err.code : undefined
  if (err?.name === 'KnexTimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code)) || err?.errno === 1969 || err?.errno === 3024) {
    return failure('DATABASE_TIMEOUT', `the query did not finish within ${timeMs} ms`, { time_ms: timeMs })
  }
  if (code !== undefined && CONNECT_CODES.has(code)) return failure('DATABASE_UNAVAILABLE', `the world database is unavailable (${code})`, { driver_code: code })
  if (code === 'ER_TABLEACCESS_DENIED_ERROR' || code === 'ER_COLUMNACCESS_DENIED_ERROR') return failure('DATABASE_ACCESS_DENIED', `the reader may not read this (${code})`, { driver_code: code })
  return failure('DATABASE_QUERY_FAILED', `the world database refused the query (${code ?? 'unknown error'})`, { driver_code: code ?? null })
}

const applyFilter = (qb: Knex.QueryBuilder, f: PlannedFilter): void => {
  switch (f.operator) {
    case 'eq':
      if (f.value === null) qb.whereNull(f.column)
      else qb.where(f.column, '=', f.value)
      return
    case 'ne':
      if (f.value === null) qb.whereNotNull(f.column)
      else qb.where(f.column, '<>', f.value)
      return
    case 'lt': qb.where(f.column, '<', f.value); return
    case 'le': qb.where(f.column, '<=', f.value); return
    case 'gt': qb.where(f.column, '>', f.value); return
    case 'ge': qb.where(f.column, '>=', f.value); return
    case 'contains':
      // Fixed template; ?? quotes the (validated) identifier, the pattern and escape are bound.
      qb.whereRaw('?? LIKE ? ESCAPE ?', [f.column, f.pattern, LIKE_ESCAPE])
      return
    case 'in': qb.whereIn(f.column, [...f.value]); return
    default: {
      const _never: never = f
      throw new TypeError(`unhandled filter ${JSON.stringify(_never)}`)
    }
  }
}

/** knex would print driver errors (with user names) to the console; failures are mapped instead. */
const SILENT = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined }

/** Opens the configured world database. Connection problems surface on first use. */
export const openWorldDb = async (db: DatabaseSection, options: OpenOptions): Promise<WorldDb> => {
  const limits = options.limits
  const timeMs = limits.time_ms
  let dialect = db.client === 'better-sqlite3' ? 'sqlite' : 'unknown'
  let k: Knex
  if (db.client === 'mysql2') {
    const password = await resolvePassword(db, options.env ?? process.env)
    k = knexFactory({
      client: 'mysql2',
      log: SILENT,
      connection: {
        host: db.host ?? '127.0.0.1',
        port: db.port ?? 3306,
        user: db.user ?? '',
        ...(password === undefined ? {} : { password }),
        charset: 'utf8mb4',
        supportBigNumbers: true,
        bigNumberStrings: true,
        dateStrings: true,
        multipleStatements: false,
        connectTimeout: db.connect_timeout_ms ?? 5000
      },
      pool: {
        min: 0,
        max: 2,
        afterCreate: (conn: { query: (sql: string, cb: (err: unknown, rows?: unknown) => void) => void }, done: (err: unknown, conn: unknown) => void) => {
          conn.query('SELECT VERSION() AS v', (err, rows) => {
            if (err) return done(err, conn)
            const version = String((rows as Array<{ v?: unknown }>)[0]?.v ?? '')
            dialect = /mariadb/i.test(version) ? 'mariadb' : 'mysql'
            const limit = dialect === 'mariadb' ? `SET SESSION max_statement_time = ${(timeMs / 1000).toFixed(3)}` : `SET SESSION max_execution_time = ${timeMs}`
            conn.query(limit, (e1) => {
              if (e1) return done(e1, conn)
              conn.query("SET SESSION time_zone = '+00:00'", (e2) => {
                if (e2) return done(e2, conn)
                conn.query('SET SESSION TRANSACTION READ ONLY', (e3) => done(e3, conn))
              })
            })
          })
        }
      },
      acquireConnectionTimeout: db.connect_timeout_ms ?? 5000
    })
  } else {
    if (db.filename === undefined) throw unavailable('no SQLite filename configured')
    try {
      await fsp.access(db.filename)
    } catch {
      throw unavailable('the SQLite world database file does not exist', { filename: db.filename })
    }
    k = knexFactory({
      client: 'better-sqlite3',
      log: SILENT,
      connection: { filename: db.filename, options: { readonly: true, safeIntegers: true } },
      useNullAsDefault: true,
      pool: {
        min: 0,
        max: 1,
        afterCreate: (conn: { pragma: (s: string) => unknown }, done: (err: unknown, conn: unknown) => void) => {
          try {
            conn.pragma('query_only = ON')
            done(null, conn)
          } catch (e) {
            done(e, conn)
          }
        }
      }
    })
  }
  const sqlite = db.client === 'better-sqlite3'
  const tableName = (ref: TableRef): string => (sqlite ? ref.table : `${ref.database}.${ref.table}`)

  /** Runs `work` in a read-only transaction (MySQL) or directly (read-only SQLite handle). */
  const readOnly = async <A>(work: (q: Knex | Knex.Transaction) => Promise<A>): Promise<A> => {
    try {
      if (sqlite) return await work(k)
      return await k.transaction((trx) => work(trx), { readOnly: true })
    } catch (e) {
      throw new FailureError(mapDbError(e, timeMs))
    }
  }
  const timed = (qb: Knex.QueryBuilder): Knex.QueryBuilder => (sqlite ? qb : qb.timeout(timeMs, { cancel: true }))

  const listTables = (database: string): Promise<string[]> =>
    readOnly(async (q) => {
      if (sqlite) {
        const rows: Array<{ name: string }> = await q.select('name').from('sqlite_master').where('type', 'table').andWhereNot('name', 'like', 'sqlite_%').orderBy('name')
        return rows.map((r) => r.name)
      }
      const rows: Array<{ TABLE_NAME: string }> = await timed(q.select('TABLE_NAME').from('information_schema.TABLES').where('TABLE_SCHEMA', database).orderBy('TABLE_NAME'))
      return rows.map((r) => r.TABLE_NAME)
    })

  const tableSchema = (ref: TableRef): Promise<TableSchema | null> =>
    readOnly(async (q) => {
      if (sqlite) {
        const cols: Array<{ cid: bigint; name: string; type: string; notnull: bigint; pk: bigint }> = await q.select('cid', 'name', 'type', 'notnull', 'pk').from(k.raw('pragma_table_info(?)', [ref.table]))
        if (cols.length === 0) return null
        const list: Array<{ name: string; unique: bigint; origin: string }> = await q.select('name', 'unique', 'origin').from(k.raw('pragma_index_list(?)', [ref.table]))
        const indexes: IndexInfo[] = []
        for (const ix of list) {
          const parts: Array<{ name: string; seqno: bigint }> = await q.select('name', 'seqno').from(k.raw('pragma_index_info(?)', [ix.name])).orderBy('seqno')
          if (ix.origin !== 'pk') indexes.push({ name: ix.name, unique: ix.unique === 1n, columns: parts.map((p) => p.name) })
        }
        const pk = cols.filter((c) => c.pk > 0n).sort((a, b) => Number(a.pk - b.pk)).map((c) => c.name)
        const uniqueCols = new Set(indexes.filter((i) => i.unique && i.columns.length === 1).map((i) => i.columns[0]))
        const indexed = new Set(indexes.map((i) => i.columns[0]))
        const columns: ColumnInfo[] = cols.map((c) => ({
          name: c.name,
          type: c.type,
          data_type: sqliteDataType(c.type),
          nullable: c.notnull === 0n && c.pk === 0n,
          key: pk[0] === c.name ? 'PRI' : uniqueCols.has(c.name) ? 'UNI' : indexed.has(c.name) ? 'MUL' : null,
          position: Number(c.cid) + 1
        }))
        return { database: ref.database, table: ref.table, columns, primary_key: pk, indexes: indexes.sort((a, b) => (a.name < b.name ? -1 : 1)) }
      }
      const cols: Array<{ COLUMN_NAME: string; COLUMN_TYPE: string; DATA_TYPE: string; IS_NULLABLE: string; COLUMN_KEY: string; ORDINAL_POSITION: number | string }> = await timed(
        q.select('COLUMN_NAME', 'COLUMN_TYPE', 'DATA_TYPE', 'IS_NULLABLE', 'COLUMN_KEY', 'ORDINAL_POSITION').from('information_schema.COLUMNS')
          .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table }).orderBy('ORDINAL_POSITION')
      )
      if (cols.length === 0) return null
      const stats: Array<{ INDEX_NAME: string; NON_UNIQUE: number | string; SEQ_IN_INDEX: number | string; COLUMN_NAME: string }> = await timed(
        q.select('INDEX_NAME', 'NON_UNIQUE', 'SEQ_IN_INDEX', 'COLUMN_NAME').from('information_schema.STATISTICS')
          .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table }).orderBy([{ column: 'INDEX_NAME' }, { column: 'SEQ_IN_INDEX' }])
      )
      const byIndex = new Map<string, { unique: boolean; columns: string[] }>()
      for (const s of stats) {
        const entry = byIndex.get(s.INDEX_NAME) ?? { unique: Number(s.NON_UNIQUE) === 0, columns: [] }
        entry.columns.push(s.COLUMN_NAME)
        byIndex.set(s.INDEX_NAME, entry)
      }
      const primary = byIndex.get('PRIMARY')?.columns ?? []
      const indexes: IndexInfo[] = [...byIndex.entries()].filter(([n]) => n !== 'PRIMARY').map(([name, v]) => ({ name, unique: v.unique, columns: v.columns }))
      const key = (k2: string): ColumnInfo['key'] => (k2 === 'PRI' || k2 === 'UNI' || k2 === 'MUL' ? k2 : null)
      return {
        database: ref.database,
        table: ref.table,
        columns: cols.map((c) => ({ name: c.COLUMN_NAME, type: c.COLUMN_TYPE, data_type: c.DATA_TYPE.toLowerCase(), nullable: c.IS_NULLABLE === 'YES', key: key(c.COLUMN_KEY), position: Number(c.ORDINAL_POSITION) })),
        primary_key: primary,
        indexes
      }
    })

  const selectRows = (plan: RowsPlan, schema: TableSchema): Promise<Row[]> =>
    readOnly(async (q) => {
      const qb = q.select([...plan.columns]).from(tableName(plan.ref))
      for (const f of plan.filters) applyFilter(qb, f)
      qb.orderBy(plan.order.map((o) => ({ column: o.column, order: o.direction })))
      qb.limit(plan.limit + 1).offset(plan.offset)
      const raw: Array<Record<string, unknown>> = await timed(qb)
      const types = new Map(schema.columns.map((c) => [c.name, c.data_type]))
      return raw.map((r) => Object.fromEntries(plan.columns.map((c) => [c, toJsonValue(types.get(c) ?? 'unknown', r[c])])))
    })

  const count = (plan: CountPlan): Promise<number | string> =>
    readOnly(async (q) => {
      const qb = q.count({ n: '*' }).from(tableName(plan.ref))
      for (const f of plan.filters) applyFilter(qb, f)
      const rows: Array<{ n: unknown }> = await timed(qb)
      const n = rows[0]?.n
      const value = toJsonValue('bigint', n)
      return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : typeof value === 'number' ? value : String(value)
    })

  return {
    client: db.client,
    dialect: () => dialect,
    listTables,
    tableSchema,
    selectRows,
    count,
    close: () => k.destroy()
  }
}
