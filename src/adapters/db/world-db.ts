/**
 * The read-only world database: knex builds every statement (the only SQL that exists is what the
 * structured plans below express), and the drivers execute it: mysql2 for MariaDB/MySQL,
 * better-sqlite3 (v12) for embedded snapshot files. Executing through the drivers' own pools
 * instead of knex's runner halves the per-query overhead (bench/db-rows).
 *
 * Read-only in three layers besides the operator's SELECT-only user: every session is
 * `TRANSACTION READ ONLY` (SQLite: a read-only file handle plus `PRAGMA query_only`), every query
 * runs inside `START TRANSACTION READ ONLY` … `COMMIT`, and the builder can only express the
 * structured query kinds. Server-side statement time limits (MariaDB
 * `max_statement_time`, MySQL `max_execution_time`) plus a client-side timeout bound every query.
 *
 * Credentials come from an environment variable or a password file; they are passed to the driver
 * and nowhere else. Driver errors are mapped to coded failures whose messages are written here,
 * never copied from the driver, so no credential or server detail leaks into captures or logs.
 */
import { promises as fsp } from 'node:fs'
import knexFactory, { type Knex } from 'knex'
import mysql from 'mysql2'
import Database from 'better-sqlite3'
import { failure, type Failure } from '../../domain/failure.js'
import { LIKE_ESCAPE, type CountPlan, type PlannedFilter, type RowsPlan, type TableRef, type TableSchema, type ColumnInfo, type IndexInfo } from '../../domain/database-plan.js'
import type { ProjectLimits } from '../../domain/limits.js'
import type { DatabaseSection } from '../config/profile.js'
import { FailureError, errnoOf } from '../fs-util.js'
import { columnConverter, sqliteDataType, toJsonValue, type JsonValue } from './values.js'

export type Row = Readonly<Record<string, JsonValue>>

export interface WorldDb {
  readonly client: 'mysql2' | 'better-sqlite3'
  /** `mariadb`, `mysql` or `sqlite`, known after the first connection. */
  readonly dialect: () => string
  readonly listTables: (database: string) => Promise<string[]>
  readonly tableSchema: (ref: TableRef) => Promise<TableSchema | null>
  /**
   * Up to plan.limit + 1 rows (one more than returned, to know whether more exist), read one at a
   * time: once the rows read hold more than `maxBytes` of JSON (a lower bound is counted), reading
   * stops (`stopped`), so memory is bounded by the byte limit, not by rows × row size.
   */
  readonly selectRows: (plan: RowsPlan, schema: TableSchema, maxBytes?: number) => Promise<{ readonly rows: Row[]; readonly stopped: boolean }>
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
const CONNECT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'ETIMEDOUT', 'EHOSTUNREACH', 'ECONNRESET', 'PROTOCOL_CONNECTION_LOST', 'ER_BAD_DB_ERROR', 'ER_CON_COUNT_ERROR', 'EPIPE', 'SQLITE_CANTOPEN', 'SQLITE_NOTADB'])

/** Maps a driver or knex error to a coded failure with a message written here. */
export const mapDbError = (e: unknown, timeMs: number): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = e as { name?: string; code?: string; errno?: number; sqlState?: string }
  const code = typeof err?.code === 'string' ? err.code : undefined
  if (err?.name === 'KnexTimeoutError' || (code !== undefined && TIMEOUT_CODES.has(code)) || err?.errno === 1969 || err?.errno === 3024) {
    return failure('DATABASE_TIMEOUT', `the query did not finish within ${timeMs} ms`, { time_ms: timeMs })
  }
  if (code === 'ER_ACCESS_DENIED_ERROR') return failure('DATABASE_AUTH_FAILED', 'the world database refused the reader\'s user name or password (check [database] user and password_env / password_file)', { driver_code: code })
  if (code === 'ER_DBACCESS_DENIED_ERROR') return failure('DATABASE_AUTH_FAILED', 'the reader may not use the configured database (check its grants)', { driver_code: code })
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

/**
 * A lower bound of a row's JSON size: every UTF-16 unit of a string is at least one byte, every
 * key is quoted and followed by a colon, values and members are separated. Exact sizes would cost a
 * serialisation per row; a lower bound is enough to know the rows read already exceed a limit.
 */
const jsonBytesAtLeast = (row: Row): number => {
  let n = 3
  for (const key in row) {
    const v = row[key]
    n += key.length + 4 + (typeof v === 'string' ? v.length : typeof v === 'object' && v !== null ? v.$base64.length + 13 : 1)
  }
  return n
}

const MYSQL_EXACT = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint', 'decimal', 'numeric', 'char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set'])

/** knex would print driver errors (with user names) to the console; failures are mapped instead. */
const SILENT = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined }

/** A built statement: SQL with `?` placeholders and its bound values. */
interface Statement {
  readonly sql: string
  readonly bindings: readonly unknown[]
}

/** Executes built statements read-only; `kind` selects the driver. */
interface Executor {
  readonly all: (statements: readonly Statement[]) => Promise<Array<Array<Record<string, unknown>>>>
  /** Hands the rows of one statement to `take` as they arrive; `take` returning false stops the read (resolves true). */
  readonly each: (statement: Statement, take: (row: Record<string, unknown>) => boolean) => Promise<boolean>
  readonly close: () => Promise<void>
}

/** A callback-API query as a promise (mysql2/promise captures a stack trace per query). */
const run = (conn: mysql.PoolConnection, sql: string | mysql.QueryOptions, values?: unknown[]): Promise<unknown> =>
  new Promise((resolve, reject) => {
    conn.query(sql as mysql.QueryOptions, values ?? [], (err: unknown, rows: unknown) => (err ? reject(err) : resolve(rows)))
  })

/**
 * Drops a connection at once. mysql2's destroy() only half-closes the socket; a server thread still
 * sending the rest of a result we stopped reading would then wait for its network write timeout
 * (60 s), holding locks on what it reads. Closing the socket too ends that at once.
 */
const drop = (conn: mysql.PoolConnection): void => {
  conn.destroy()
  ;(conn as unknown as { stream?: { destroy?: () => void } }).stream?.destroy?.()
}

const SQL_MODE = /^[A-Z_]+$/

/**
 * mysql2 escapes bound values on the client with backslashes; a server running with
 * NO_BACKSLASH_ESCAPES would read `\'` as a backslash and a closing quote (an injection). The
 * session's sql_mode is pinned without that mode at connect, and checked: values are never spliced
 * into SQL in a way that depends on the server's settings.
 */
const pinSqlMode = async (conn: mysql.PoolConnection): Promise<void> => {
  const before = String((await run(conn, 'SELECT @@SESSION.sql_mode AS m') as Array<{ m?: unknown }>)[0]?.m ?? '')
  const modes = before.split(',').filter((m) => m !== '' && m !== 'NO_BACKSLASH_ESCAPES')
  if (!modes.every((m) => SQL_MODE.test(m))) throw new FailureError(failure('DATABASE_UNSAFE_MODE', 'the server reports an sql_mode this client cannot pin safely', {}))
  await run(conn, `SET SESSION sql_mode = '${modes.join(',')}'`)
  const after = String((await run(conn, 'SELECT @@SESSION.sql_mode AS m') as Array<{ m?: unknown }>)[0]?.m ?? '')
  if (after.split(',').includes('NO_BACKSLASH_ESCAPES')) throw new FailureError(failure('DATABASE_UNSAFE_MODE', 'the session keeps NO_BACKSLASH_ESCAPES; research refuses to send escaped values', {}))
}

const mysqlExecutor = async (db: DatabaseSection, timeMs: number, env: Readonly<Record<string, string | undefined>>, onDialect: (d: string) => void): Promise<Executor> => {
  const password = await resolvePassword(db, env)
  const pool = mysql.createPool({
    host: db.host ?? '127.0.0.1',
    port: db.port ?? 3306,
    user: db.user ?? '',
    ...(password === undefined ? {} : { password }),
    charset: 'utf8mb4',
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    multipleStatements: false,
    connectTimeout: db.connect_timeout_ms ?? 5000,
    connectionLimit: 2,
    maxIdle: 2
  })
  const prepared = new WeakSet<object>()
  /** Session setup once per connection: statement time limit, UTC, read-only transactions. */
  const prepare = async (conn: mysql.PoolConnection): Promise<void> => {
    if (prepared.has(conn)) return
    const rows = await run(conn, 'SELECT VERSION() AS v')
    const version = String((rows as Array<{ v?: unknown }>)[0]?.v ?? '')
    const dialect = /mariadb/i.test(version) ? 'mariadb' : 'mysql'
    onDialect(dialect)
    await run(conn, dialect === 'mariadb' ? `SET SESSION max_statement_time = ${(timeMs / 1000).toFixed(3)}` : `SET SESSION max_execution_time = ${timeMs}`)
    await run(conn, "SET SESSION time_zone = '+00:00'")
    await pinSqlMode(conn)
    await run(conn, 'SET SESSION TRANSACTION READ ONLY')
    prepared.add(conn)
  }
  const acquire = (): Promise<mysql.PoolConnection> =>
    new Promise((resolve, reject) => pool.getConnection((err, conn) => (err ? reject(err) : resolve(conn))))
  return {
    all: async (statements) => {
      let conn: mysql.PoolConnection
      try {
        conn = await acquire()
      } catch (e) {
        throw new FailureError(mapDbError(e, timeMs))
      }
      let healthy = true
      try {
        await prepare(conn)
        // One read-only transaction around the statements, sent back to back.
        const begin = run(conn, 'START TRANSACTION READ ONLY')
        const results = statements.map((st) => run(conn, { sql: st.sql, timeout: timeMs }, [...st.bindings]))
        const commit = run(conn, 'COMMIT')
        const settled = await Promise.allSettled([begin, ...results, commit])
        const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected')
        if (failed !== undefined) {
          healthy = false
          throw new FailureError(mapDbError(failed.reason, timeMs))
        }
        return settled.slice(1, -1).map((x) => (x as PromiseFulfilledResult<unknown>).value as Array<Record<string, unknown>>)
      } catch (e) {
        healthy = false
        throw e instanceof FailureError ? e : new FailureError(mapDbError(e, timeMs))
      } finally {
        if (healthy) conn.release()
        else conn.destroy()
      }
    },
    each: async (st, take) => {
      let conn: mysql.PoolConnection
      try {
        conn = await acquire()
      } catch (e) {
        throw new FailureError(mapDbError(e, timeMs))
      }
      let healthy = true
      try {
        await prepare(conn)
        // Begin, query and commit are sent back to back (one round trip), as for `all`.
        const begin = run(conn, 'START TRANSACTION READ ONLY')
        const streamed = new Promise<boolean>((resolve, reject) => {
          let settled = false
          // The client-side time limit is a timer of our own: one left behind by a query that was
          // stopped early would keep the process alive after the research is closed.
          const timer = setTimeout(() => finish(() => reject(Object.assign(new Error('timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' }))), timeMs)
          const finish = (then: () => void): void => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            then()
          }
          const q = conn.query({ sql: st.sql, values: [...st.bindings] })
          q.on('result', (row: unknown) => {
            if (settled || take(row as Record<string, unknown>)) return
            // Enough: stop reading the socket; the connection is dropped with the rest unread.
            conn.pause()
            finish(() => resolve(true))
          })
          q.on('error', (e: unknown) => finish(() => reject(e)))
          q.on('end', () => finish(() => resolve(false)))
        })
        const commit = run(conn, 'COMMIT')
        // A query stopped early drops the connection: the commit queued behind it never runs.
        commit.catch(() => undefined)
        begin.catch(() => undefined)
        await begin
        const stopped = await streamed
        if (stopped) healthy = false
        else await commit
        return stopped
      } catch (e) {
        healthy = false
        throw e instanceof FailureError ? e : new FailureError(mapDbError(e, timeMs))
      } finally {
        if (healthy) conn.release()
        else drop(conn)
      }
    },
    close: () => new Promise<void>((resolve) => pool.end(() => resolve()))
  }
}

const sqliteExecutor = async (db: DatabaseSection): Promise<Executor> => {
  if (db.filename === undefined) throw unavailable('no SQLite filename configured')
  let handle: Database.Database
  try {
    // Read-only file handle, and query_only as a second lock.
    handle = new Database(db.filename, { readonly: true, fileMustExist: true })
    handle.pragma('query_only = ON')
    handle.defaultSafeIntegers(true)
  } catch {
    throw unavailable('the SQLite world database cannot be opened read-only', { filename: db.filename })
  }
  return {
    all: async (statements) => {
      try {
        return handle.transaction(() => statements.map((st) => handle.prepare(st.sql).all(...(st.bindings as unknown[])) as Array<Record<string, unknown>>))()
      } catch (e) {
        throw new FailureError(mapDbError(e, 0))
      }
    },
    each: async (st, take) => {
      try {
        return handle.transaction(() => {
          for (const row of handle.prepare(st.sql).iterate(...(st.bindings as unknown[]))) {
            if (!take(row as Record<string, unknown>)) return true
          }
          return false
        })()
      } catch (e) {
        throw new FailureError(mapDbError(e, 0))
      }
    },
    close: async () => {
      handle.close()
    }
  }
}

/** Opens the configured world database. Connection problems surface on first use. */
export const openWorldDb = async (db: DatabaseSection, options: OpenOptions): Promise<WorldDb> => {
  const limits = options.limits
  const timeMs = limits.time_ms
  let dialect = db.client === 'better-sqlite3' ? 'sqlite' : 'unknown'
  // knex only builds statements; the drivers execute them.
  const k: Knex = knexFactory({ client: db.client === 'mysql2' ? 'mysql2' : 'better-sqlite3', log: SILENT, useNullAsDefault: true })
  const exec = db.client === 'mysql2'
    ? await mysqlExecutor(db, timeMs, options.env ?? process.env, (d) => { dialect = d })
    : await sqliteExecutor(db)
  const build = (qb: Knex.QueryBuilder | Knex.Raw): Statement => {
    const native = qb.toSQL().toNative()
    return { sql: native.sql, bindings: native.bindings }
  }
  const one = async (qb: Knex.QueryBuilder): Promise<Array<Record<string, unknown>>> => (await exec.all([build(qb)]))[0] ?? []
  const sqlite = db.client === 'better-sqlite3'
  const tableName = (ref: TableRef): string => (sqlite ? ref.table : `${ref.database}.${ref.table}`)

  const listTables = async (database: string): Promise<string[]> => {
    if (sqlite) {
      const rows = await one(k.select('name').from('sqlite_master').where('type', 'table').andWhereNot('name', 'like', 'sqlite_%').orderBy('name'))
      return rows.map((r) => String(r['name']))
    }
    const rows = await one(k.select('TABLE_NAME').from('information_schema.TABLES').where('TABLE_SCHEMA', database).orderBy('TABLE_NAME'))
    return rows.map((r) => String(r['TABLE_NAME']))
  }

  const tableSchema = async (ref: TableRef): Promise<TableSchema | null> => {
    if (sqlite) {
      const [cols = [], list = []] = await exec.all([
        build(k.select('cid', 'name', 'type', 'notnull', 'pk').from(k.raw('pragma_table_info(?)', [ref.table]))),
        build(k.select('name', 'unique', 'origin').from(k.raw('pragma_index_list(?)', [ref.table])))
      ])
      if (cols.length === 0) return null
      const indexes: IndexInfo[] = []
      for (const ix of list) {
        if (ix['origin'] === 'pk') continue
        const parts = await one(k.select('name', 'seqno').from(k.raw('pragma_index_info(?)', [String(ix['name'])])).orderBy('seqno'))
        indexes.push({ name: String(ix['name']), unique: ix['unique'] === 1n, columns: parts.map((p) => String(p['name'])) })
      }
      const pk = cols.filter((c) => (c['pk'] as bigint) > 0n).sort((a, b) => Number((a['pk'] as bigint) - (b['pk'] as bigint))).map((c) => String(c['name']))
      const uniqueCols = new Set(indexes.filter((i) => i.unique && i.columns.length === 1).map((i) => i.columns[0]))
      const indexed = new Set(indexes.map((i) => i.columns[0]))
      const columns: ColumnInfo[] = cols.map((c) => {
        const name = String(c['name'])
        return {
          name,
          type: String(c['type']),
          data_type: sqliteDataType(String(c['type'])),
          nullable: c['notnull'] === 0n && c['pk'] === 0n,
          key: pk[0] === name ? 'PRI' : uniqueCols.has(name) ? 'UNI' : indexed.has(name) ? 'MUL' : null,
          position: Number(c['cid']) + 1
        }
      })
      return { database: ref.database, table: ref.table, columns, primary_key: pk, indexes: indexes.sort((a, b) => (a.name < b.name ? -1 : 1)) }
    }
    const [cols = [], stats = []] = await exec.all([
      build(k.select('COLUMN_NAME', 'COLUMN_TYPE', 'DATA_TYPE', 'IS_NULLABLE', 'COLUMN_KEY', 'ORDINAL_POSITION').from('information_schema.COLUMNS')
        .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table }).orderBy('ORDINAL_POSITION')),
      build(k.select('INDEX_NAME', 'NON_UNIQUE', 'SEQ_IN_INDEX', 'COLUMN_NAME').from('information_schema.STATISTICS')
        .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table }).orderBy([{ column: 'INDEX_NAME' }, { column: 'SEQ_IN_INDEX' }]))
    ])
    if (cols.length === 0) return null
    const byIndex = new Map<string, { unique: boolean; columns: string[] }>()
    for (const st of stats) {
      const name = String(st['INDEX_NAME'])
      const entry = byIndex.get(name) ?? { unique: Number(st['NON_UNIQUE']) === 0, columns: [] }
      entry.columns.push(String(st['COLUMN_NAME']))
      byIndex.set(name, entry)
    }
    const primary = byIndex.get('PRIMARY')?.columns ?? []
    const indexes: IndexInfo[] = [...byIndex.entries()].filter(([n]) => n !== 'PRIMARY').map(([name, v]) => ({ name, unique: v.unique, columns: v.columns }))
    const key = (k2: unknown): ColumnInfo['key'] => (k2 === 'PRI' || k2 === 'UNI' || k2 === 'MUL' ? k2 : null)
    return {
      database: ref.database,
      table: ref.table,
      columns: cols.map((c) => ({
        name: String(c['COLUMN_NAME']),
        type: String(c['COLUMN_TYPE']),
        data_type: String(c['DATA_TYPE']).toLowerCase(),
        nullable: c['IS_NULLABLE'] === 'YES',
        key: key(c['COLUMN_KEY']),
        position: Number(c['ORDINAL_POSITION'])
      })),
      primary_key: primary,
      indexes
    }
  }

  const selectRows = async (plan: RowsPlan, schema: TableSchema, maxBytes = Number.POSITIVE_INFINITY): Promise<{ rows: Row[]; stopped: boolean }> => {
    const qb = k.select([...plan.columns]).from(tableName(plan.ref))
    for (const f of plan.filters) applyFilter(qb, f)
    qb.orderBy(plan.order.map((o) => ({ column: o.column, order: o.direction })))
    qb.limit(plan.limit + 1).offset(plan.offset)
    const types = new Map(schema.columns.map((c) => [c.name, c.data_type]))
    // mysql2 already gives exact JSON for these types (numbers for INT, strings for text, DECIMAL and
    // BIGINT); only the others are converted.
    const converters = plan.columns
      .filter((c) => sqlite || !MYSQL_EXACT.has(types.get(c) ?? 'unknown'))
      .map((c) => [c, columnConverter(types.get(c) ?? 'unknown')] as const)
    const rows: Row[] = []
    let bytes = 2
    const stopped = await exec.each(build(qb), (row) => {
      // The driver's row objects are ours: converted in place instead of copied.
      for (const [c, convert] of converters) row[c] = convert(row[c])
      rows.push(row as Row)
      bytes += jsonBytesAtLeast(row as Row)
      return bytes <= maxBytes
    })
    return { rows, stopped }
  }

  const count = async (plan: CountPlan): Promise<number | string> => {
    const qb = k.count({ n: '*' }).from(tableName(plan.ref))
    for (const f of plan.filters) applyFilter(qb, f)
    const rows = await one(qb)
    const value = toJsonValue('bigint', rows[0]?.['n'])
    return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : typeof value === 'number' ? value : String(value)
  }

  return {
    client: db.client,
    dialect: () => dialect,
    listTables,
    tableSchema,
    selectRows,
    count,
    close: () => exec.close()
  }
}
