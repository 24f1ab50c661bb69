/**
 * What differs between PostgreSQL and MariaDB/MySQL, in one object per dialect (as knex resolves
 * a client by name): session settings, the database's clock, how raw results come back, and
 * whether an append may write events, command and head in one statement.
 */
import type { Knex } from 'knex'
import { loadPeer } from '../peers.js'

export interface Dialect {
  readonly name: 'postgres' | 'mysql'
  /** The knex client. */
  readonly client: 'pg' | 'mysql2'
  /** Loads the driver knex will use (an optional peer: PACKAGE_MISSING when it is not installed). */
  readonly loadDriver: () => Promise<unknown>
  /** Statements run on every new connection: lock wait, isolation, strictness, UTC. */
  readonly session: (lockWaitMs: number) => readonly string[]
  /** Driver options beyond host, port, user, password and database. */
  readonly connection: (connectTimeoutMs: number) => Readonly<Record<string, unknown>>
  /** An SQL expression for the database's clock in epoch milliseconds. */
  readonly nowMs: string
  /** The rows of a `knex.raw` result. */
  readonly rows: <R>(raw: unknown) => R[]
  /** The rows a `knex.raw` INSERT or UPDATE touched. */
  readonly rowsWritten: (raw: unknown) => number
  /** Data-modifying CTEs: events, command and head of an append in one statement. */
  readonly appendInOneStatement: boolean
  /** The column type of exact bytes. */
  readonly bytes: string
}

export const postgres: Dialect = {
  name: 'postgres',
  client: 'pg',
  loadDriver: () => loadPeer('pg', 'the SQL case store on PostgreSQL', () => import('pg')),
  session: (lockWaitMs) => [`SET lock_timeout = ${Math.max(1, Math.round(lockWaitMs))}`, "SET TIME ZONE 'UTC'"],
  connection: (connectTimeoutMs) => ({ connectionTimeoutMillis: connectTimeoutMs }),
  nowMs: 'CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)',
  rows: <R>(raw: unknown): R[] => (raw as { rows: R[] }).rows,
  rowsWritten: (raw) => (raw as { rowCount: number }).rowCount,
  appendInOneStatement: true,
  bytes: 'bytea'
}

export const mysql: Dialect = {
  name: 'mysql',
  client: 'mysql2',
  loadDriver: () => loadPeer('mysql2', 'the SQL case store on MariaDB/MySQL', () => import('mysql2')),
  session: (lockWaitMs) => [
    `SET SESSION innodb_lock_wait_timeout = ${Math.max(1, Math.ceil(lockWaitMs / 1000))}`,
    'SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED',
    "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
    "SET time_zone = '+00:00'"
  ],
  connection: (connectTimeoutMs) => ({ supportBigNumbers: true, connectTimeout: connectTimeoutMs }),
  nowMs: 'CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS UNSIGNED)',
  rows: <R>(raw: unknown): R[] => (raw as [R[]])[0],
  rowsWritten: (raw) => (raw as [{ affectedRows: number }])[0].affectedRows,
  appendInOneStatement: false,
  bytes: 'longblob'
}

/** The dialect of a knex client name. */
export const dialectOf = (client: 'pg' | 'mysql2'): Dialect => (client === 'pg' ? postgres : mysql)

/** The dialect a knex instance was configured with (migrations get only the instance). */
export const dialectOfKnex = (knex: Knex): Dialect => dialectOf(knex.client.config.client === 'pg' ? 'pg' : 'mysql2')

/** The database's clock, epoch milliseconds. */
export const dbNowMs = async (q: Knex | Knex.Transaction, d: Dialect): Promise<number> => {
  const rows = d.rows<{ now: unknown }>(await q.raw(`SELECT ${d.nowMs} AS now`))
  const v = rows[0]?.now
  return typeof v === 'number' ? v : Number(v)
}
