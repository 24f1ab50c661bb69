/**
 * The drivers behind the world database, read-only: mysql2 (a pool; every query inside
 * `START TRANSACTION READ ONLY` … `COMMIT`, sessions pinned to a safe sql_mode) and better-sqlite3
 * (a read-only handle with `query_only`). Both run built statements whole (`all`) or hand their
 * rows over one at a time until the caller has enough (`each`).
 */
import type mysql from 'mysql2'
import type Database from 'better-sqlite3'
import { failure } from '../../failures/failure.js'
import type { DatabaseSection } from '../config/profile.js'
import { FailureError } from '../../failures/error.js'
import { loadPeer } from '../peers.js'
import { optional } from '../../optional.js'
import { pipelined, sent } from './mysql-pipeline.js'
import { Deadlines } from './deadlines.js'

const unavailable = (message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure('DATABASE_UNAVAILABLE', message, data))

export { mapDbError, resolvePassword, serverText } from './db-errors.js'
import { mapDbError, resolvePassword, serverText } from './db-errors.js'

/** A built statement: SQL with `?` placeholders and its bound values. */
export interface Statement {
  readonly sql: string
  readonly bindings: readonly unknown[]
}

/** Executes built statements read-only; `kind` selects the driver. */
export interface Executor {
  readonly all: (statements: readonly Statement[]) => Promise<Array<Array<Record<string, unknown>>>>
  /** Hands the rows of one statement to `take` as they arrive; `take` returning false stops the read (resolves true). */
  readonly each: (statement: Statement, take: (row: Record<string, unknown>) => boolean) => Promise<boolean>
  readonly close: () => Promise<void>
}

const run = (conn: mysql.PoolConnection, sql: string): Promise<unknown> => sent(conn, sql).done

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
  const before = String(((await run(conn, 'SELECT @@SESSION.sql_mode AS m')) as Array<{ m?: unknown }>)[0]?.m ?? '')
  const modes = before.split(',').filter((m) => m !== '' && m !== 'NO_BACKSLASH_ESCAPES')
  if (!modes.every((m) => SQL_MODE.test(m)))
    throw new FailureError(
      failure('DATABASE_UNSAFE_MODE', 'the server reports an sql_mode this client cannot pin safely', {})
    )
  await run(conn, `SET SESSION sql_mode = '${modes.join(',')}'`)
  const after = String(((await run(conn, 'SELECT @@SESSION.sql_mode AS m')) as Array<{ m?: unknown }>)[0]?.m ?? '')
  if (after.split(',').includes('NO_BACKSLASH_ESCAPES'))
    throw new FailureError(
      failure(
        'DATABASE_UNSAFE_MODE',
        'the session keeps NO_BACKSLASH_ESCAPES; research refuses to send escaped values',
        {}
      )
    )
}

/**
 * The mysql2 executor: a pool of two connections, each set up once (see prepareSession); every
 * call runs inside one read-only transaction. A connection whose statement failed or was stopped
 * early is dropped, never returned to the pool.
 */
export const mysqlExecutor = async (
  db: DatabaseSection,
  timeMs: number,
  env: Readonly<Record<string, string | undefined>>,
  onDialect: (d: string) => void
): Promise<Executor> => {
  const { default: driver } = await loadPeer('mysql2', 'a MySQL/MariaDB world database', () => import('mysql2'))
  const password = await resolvePassword(db, env)
  const secrets = password === undefined ? [] : [password]
  const pool = driver.createPool({
    host: db.host ?? '127.0.0.1',
    port: db.port ?? 3306,
    user: db.user ?? '',
    ...optional('password', password),
    charset: 'utf8mb4',
    supportBigNumbers: true,
    bigNumberStrings: true,
    dateStrings: true,
    // MySQL's JSON columns as the server's text, as MariaDB (JSON = LONGTEXT) sends them: parsed by
    // mysql2 they would reach the capture as an object, not the exact value.
    jsonStrings: true,
    multipleStatements: false,
    connectTimeout: db.connect_timeout_ms ?? 5000,
    connectionLimit: 2,
    maxIdle: 2
  })
  const prepared = new WeakSet<object>()
  const deadlines = new Deadlines(timeMs)
  const acquire = async (): Promise<mysql.PoolConnection> => {
    let conn: mysql.PoolConnection
    try {
      conn = await new Promise((resolve, reject) => pool.getConnection((err, c) => (err ? reject(err) : resolve(c))))
    } catch (e) {
      throw new FailureError(mapDbError(e, timeMs, secrets))
    }
    return conn
  }
  return {
    all: async (statements) => {
      const conn = await acquire()
      let healthy = true
      try {
        if (!prepared.has(conn)) await prepareSession(conn, prepared, timeMs, onDialect)
        return await allInTransaction(conn, statements, timeMs, secrets)
      } catch (e) {
        healthy = false
        throw e instanceof FailureError ? e : new FailureError(mapDbError(e, timeMs, secrets))
      } finally {
        if (healthy) conn.release()
        else conn.destroy()
      }
    },
    each: async (st, take) => {
      const conn = await acquire()
      let healthy = true
      try {
        if (!prepared.has(conn)) await prepareSession(conn, prepared, timeMs, onDialect)
        const stopped = await eachInTransaction(conn, st, take, deadlines)
        if (stopped) healthy = false
        return stopped
      } catch (e) {
        healthy = false
        throw e instanceof FailureError ? e : new FailureError(mapDbError(e, timeMs, secrets))
      } finally {
        if (healthy) conn.release()
        else drop(conn)
      }
    },
    close: () => new Promise<void>((resolve) => pool.end(() => resolve()))
  }
}

/** Session setup once per connection: statement time limit, UTC, pinned sql_mode, read-only transactions. */
const prepareSession = async (
  conn: mysql.PoolConnection,
  prepared: WeakSet<object>,
  timeMs: number,
  onDialect: (d: string) => void
): Promise<void> => {
  if (prepared.has(conn)) return
  const rows = await run(conn, 'SELECT VERSION() AS v')
  const version = String((rows as Array<{ v?: unknown }>)[0]?.v ?? '')
  const dialect = /mariadb/i.test(version) ? 'mariadb' : 'mysql'
  onDialect(dialect)
  await run(
    conn,
    dialect === 'mariadb'
      ? `SET SESSION max_statement_time = ${(timeMs / 1000).toFixed(3)}`
      : `SET SESSION max_execution_time = ${timeMs}`
  )
  await run(conn, "SET SESSION time_zone = '+00:00'")
  await pinSqlMode(conn)
  await run(conn, 'SET SESSION TRANSACTION READ ONLY')
  prepared.add(conn)
}

/** The rows of each statement, run in one read-only transaction sent in one write; a failure is coded. */
const allInTransaction = async (
  conn: mysql.PoolConnection,
  statements: readonly Statement[],
  timeMs: number,
  secrets: readonly string[]
): Promise<Array<Array<Record<string, unknown>>>> => {
  const replies = pipelined(conn, () => {
    const all = [
      sent(conn, 'START TRANSACTION READ ONLY'),
      ...statements.map((st) => sent(conn, { sql: st.sql, timeout: timeMs }, [...st.bindings])),
      sent(conn, 'COMMIT')
    ]
    return { result: all.map((x) => x.done), commands: all.map((x) => x.command) }
  })
  const settled = await Promise.allSettled(replies)
  const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected')
  if (failed !== undefined) throw new FailureError(mapDbError(failed.reason, timeMs, secrets))
  return settled.slice(1, -1).map((x) => (x as PromiseFulfilledResult<unknown>).value as Array<Record<string, unknown>>)
}

/**
 * Streams one statement's rows to `take` inside a read-only transaction; true when `take` stopped
 * the read (the connection must then be dropped: the commit sent behind it is never read).
 */
const eachInTransaction = async (
  conn: mysql.PoolConnection,
  st: Statement,
  take: (row: Record<string, unknown>) => boolean,
  deadlines: Deadlines
): Promise<boolean> => {
  // Begin, query and commit go out in one write (one round trip), as for `all`.
  const [begin, streamed, commit] = pipelined(conn, () => {
    const b = sent(conn, 'START TRANSACTION READ ONLY')
    const q = streamRows(conn, st, take, deadlines)
    const c = sent(conn, 'COMMIT')
    return { result: [b.done, q.done, c.done] as const, commands: [b.command, q.command, c.command] }
  })
  // A query stopped early, or after a failed begin, drops the connection: what is behind it is never read.
  for (const p of [begin, streamed, commit]) p.catch(() => undefined)
  await begin
  const stopped = await streamed
  if (!stopped) await commit
  return stopped
}

/** Hands the rows of one query to `take` as they arrive, within the time limit; true when `take` stopped it. */
const streamRows = (
  conn: mysql.PoolConnection,
  st: Statement,
  take: (row: Record<string, unknown>) => boolean,
  deadlines: Deadlines
): { readonly done: Promise<boolean>; readonly command: unknown } => {
  let command: unknown
  const done = new Promise<boolean>((resolve, reject) => {
    let settled = false
    const stop = deadlines.start(() =>
      finish(() => reject(Object.assign(new Error('timeout'), { code: 'PROTOCOL_SEQUENCE_TIMEOUT' })))
    )
    // A fatal error of the connection (lost, killed, a row parser mysql2 cannot build) reaches only
    // the connection when the running query has no callback: without this the query would never
    // end, and the deadline's timer, unreferenced, keeps no process alive to report it.
    const lost = (e: unknown): void => finish(() => reject(e))
    conn.on('error', lost)
    const finish = (then: () => void): void => {
      if (settled) return
      settled = true
      stop()
      conn.removeListener('error', lost)
      then()
    }
    const q = conn.query({ sql: st.sql, values: [...st.bindings] })
    command = q
    q.on('result', (row: unknown) => {
      if (settled || take(row as Record<string, unknown>)) return
      // Enough: stop reading the socket; the connection is dropped with the rest unread.
      conn.pause()
      finish(() => resolve(true))
    })
    q.on('error', (e: unknown) => finish(() => reject(e)))
    q.on('end', () => finish(() => resolve(false)))
  })
  return { done, command }
}

/**
 * better-sqlite3 binds no booleans (knex's own runner turns them into 1 and 0 before it binds; the
 * drivers here run knex's statements themselves): a filter `eq true` would be refused otherwise.
 */
const sqliteBindings = (bindings: readonly unknown[]): unknown[] =>
  bindings.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v))

export const sqliteExecutor = async (db: DatabaseSection): Promise<Executor> => {
  if (db.filename === undefined) throw unavailable('no SQLite filename configured')
  const { default: Sqlite } = await loadPeer(
    'better-sqlite3',
    'an SQLite world database',
    () => import('better-sqlite3')
  )
  let handle: Database.Database
  try {
    // Read-only file handle, and query_only as a second lock.
    handle = new Sqlite(db.filename, { readonly: true, fileMustExist: true })
    handle.pragma('query_only = ON')
    handle.defaultSafeIntegers(true)
  } catch (e) {
    const said = serverText(e)
    throw unavailable(
      `the SQLite world database ${db.filename} cannot be opened read-only${said === null ? '' : ` (${said})`}`,
      { filename: db.filename, server_message: said }
    )
  }
  return {
    all: async (statements) => {
      try {
        return handle.transaction(() =>
          statements.map(
            (st) => handle.prepare(st.sql).all(...sqliteBindings(st.bindings)) as Array<Record<string, unknown>>
          )
        )()
      } catch (e) {
        throw new FailureError(mapDbError(e, 0))
      }
    },
    each: async (st, take) => {
      try {
        return handle.transaction(() => {
          for (const row of handle.prepare(st.sql).iterate(...sqliteBindings(st.bindings))) {
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
