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
 * and nowhere else. Driver errors are mapped to coded failures: a message in words, then what the
 * server said (its code, errno and text, one bounded line, the password removed), so an operator
 * can diagnose the server from vba's output alone.
 */
import knexFactory, { type Knex } from 'knex'
import {
  LIKE_ESCAPE,
  type CountPlan,
  type PlannedFilter,
  type RowsPlan,
  type TableRef,
  type TableSchema,
  type ColumnInfo,
  type IndexInfo
} from '../../domain/database-plan.js'
import type { ProjectLimits } from '../../domain/limits.js'
import type { DatabaseSection } from '../config/profile.js'
import { columnConverter, sqliteDataType, toJsonValue } from './values.js'
import { rowReader, type Row, type RowBytes } from './row-reader.js'
import { countShape, rowsShape, StatementCache } from './statement-cache.js'
import { orderBySql } from './order-by.js'
import { mysqlExecutor, sqliteExecutor, type Executor, type Statement } from './executors.js'

export type { Row } from './row-reader.js'

export interface WorldDb {
  readonly client: 'mysql2' | 'better-sqlite3'
  /** How an SQLite world's column types are reported ({@link SqliteTypes}); null for MariaDB/MySQL. */
  readonly sqliteTypes: SqliteTypes | null
  /** `mariadb`, `mysql` or `sqlite`, known after the first connection. */
  readonly dialect: () => string
  readonly listTables: (database: string) => Promise<string[]>
  readonly tableSchema: (ref: TableRef) => Promise<TableSchema | null>
  /**
   * Up to plan.limit + 1 rows (one more than returned, to know whether more exist), read one at a
   * time: once the rows read hold more than `maxBytes` of JSON (a lower bound is counted), reading
   * stops (`stopped`), so memory is bounded by the byte limit, not by rows × row size.
   */
  readonly selectRows: (
    plan: RowsPlan,
    schema: TableSchema,
    maxBytes?: number
  ) => Promise<{
    readonly rows: Row[]
    readonly stopped: boolean
    /** An upper bound of the JSON size of the first plan.limit rows (the ones a result may return). */
    readonly upperBytes: number
  }>
  readonly count: (plan: CountPlan) => Promise<number | string>
  readonly close: () => Promise<void>
}

/**
 * How an SQLite world reports its column types: `mysql` (the default) as the MariaDB/MySQL type
 * they stand for: a column declared `TEXT_<type>` (the demo world's way to give a DECIMAL TEXT
 * affinity, so its digits stay exact) is of `<type>`; `declared` as SQLite's pragma says them, the
 * prefix kept (how captures recorded before `sqlite_types` in their settings were answered).
 */
export type SqliteTypes = 'mysql' | 'declared'

/** The prefix that gives a declared SQLite type TEXT affinity without changing the type it stands for. */
export const TEXT_AFFINITY_PREFIX = 'TEXT_'

export interface OpenOptions {
  readonly limits: ProjectLimits
  /** How an SQLite world's column types are reported (default `mysql`). */
  readonly sqliteTypes?: SqliteTypes
  /** Where password_env is looked up (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

export { mapDbError, resolvePassword } from './executors.js'

/** The SQL operator of each ordering comparison. */
const ORDER_OPERATORS = { lt: '<', le: '<=', gt: '>', ge: '>=' } as const

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
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      qb.where(f.column, ORDER_OPERATORS[f.operator], f.value)
      return
    case 'contains':
      // Fixed template; ?? quotes the (validated) identifier, the pattern and escape are bound.
      qb.whereRaw('?? LIKE ? ESCAPE ?', [f.column, f.pattern, LIKE_ESCAPE])
      return
    case 'in':
      qb.whereIn(f.column, [...f.value])
      return
    default: {
      const _never: never = f
      throw new TypeError(`unhandled filter ${JSON.stringify(_never)}`)
    }
  }
}

const MYSQL_EXACT = new Set([
  'tinyint',
  'smallint',
  'mediumint',
  'int',
  'integer',
  'bigint',
  'decimal',
  'numeric',
  'char',
  'varchar',
  'tinytext',
  'text',
  'mediumtext',
  'longtext',
  'enum',
  'set'
])

/** knex would print driver errors (with user names) to the console; failures are mapped instead. */
const SILENT = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined }

/** Opens the configured world database. Connection problems surface on first use. */
export const openWorldDb = async (db: DatabaseSection, options: OpenOptions): Promise<WorldDb> => {
  let dialect = db.client === 'better-sqlite3' ? 'sqlite' : 'unknown'
  // knex only builds statements; the drivers execute them.
  const k: Knex = knexFactory({
    client: db.client === 'mysql2' ? 'mysql2' : 'better-sqlite3',
    log: SILENT,
    useNullAsDefault: true
  })
  const exec =
    db.client === 'mysql2'
      ? await mysqlExecutor(db, options.limits.time_ms, options.env ?? process.env, (d) => {
          dialect = d
        })
      : await sqliteExecutor(db)
  const sqliteTypes = db.client === 'better-sqlite3' ? (options.sqliteTypes ?? 'mysql') : null
  const s: Session = {
    k,
    statements: new StatementCache(),
    exec,
    sqlite: db.client === 'better-sqlite3',
    sqliteTypes: sqliteTypes ?? 'declared'
  }
  return {
    client: db.client,
    sqliteTypes,
    dialect: () => dialect,
    listTables: (database) => listTables(s, database),
    tableSchema: (ref) => (s.sqlite ? sqliteTableSchema(s, ref) : mysqlTableSchema(s, ref)),
    selectRows: (plan, schema, maxBytes) => selectRows(s, plan, schema, maxBytes),
    count: (plan) => count(s, plan),
    close: () => exec.close()
  }
}

/** What every statement needs: the builder, the driver that executes it, and which driver that is. */
interface Session {
  readonly k: Knex
  /** The SQL of the rows and count statements knex built, by their plan's shape. */
  readonly statements: StatementCache
  readonly exec: Executor
  readonly sqlite: boolean
  readonly sqliteTypes: SqliteTypes
}

const build = (qb: Knex.QueryBuilder | Knex.Raw): Statement => {
  const native = qb.toSQL().toNative()
  return { sql: native.sql, bindings: native.bindings }
}

/** The rows of one statement. */
const one = async (s: Session, qb: Knex.QueryBuilder): Promise<Array<Record<string, unknown>>> =>
  (await s.exec.all([build(qb)]))[0] ?? []

const tableName = (s: { readonly sqlite: boolean }, ref: TableRef): string =>
  s.sqlite ? ref.table : `${ref.database}.${ref.table}`

/** knex's SELECT of a rows plan (one row more than the limit: whether more exist). */
export const rowsStatement = (k: Knex, sqlite: boolean, plan: RowsPlan): Statement => {
  const qb = k.select([...plan.columns]).from(tableName({ sqlite }, plan.ref))
  for (const f of plan.filters) applyFilter(qb, f)
  qb.orderByRaw(orderBySql(sqlite, plan.order))
  return build(qb.limit(plan.limit + 1).offset(plan.offset))
}

/** knex's count of a count plan. */
export const countStatement = (k: Knex, sqlite: boolean, plan: CountPlan): Statement => {
  const qb = k.count({ n: '*' }).from(tableName({ sqlite }, plan.ref))
  for (const f of plan.filters) applyFilter(qb, f)
  return build(qb)
}

const listTables = async (s: Session, database: string): Promise<string[]> => {
  const k = s.k
  if (s.sqlite) {
    const rows = await one(
      s,
      k
        .select('name')
        .from('sqlite_master')
        .where('type', 'table')
        .andWhereNot('name', 'like', 'sqlite_%')
        .orderBy('name')
    )
    return rows.map((r) => String(r['name']))
  }
  const rows = await one(
    s,
    k.select('TABLE_NAME').from('information_schema.TABLES').where('TABLE_SCHEMA', database).orderBy('TABLE_NAME')
  )
  return rows.map((r) => String(r['TABLE_NAME']))
}

/** A SQLite table's columns and indexes, from its pragmas; null when there is no such table. */
const sqliteTableSchema = async (s: Session, ref: TableRef): Promise<TableSchema | null> => {
  const k = s.k
  const [cols = [], list = []] = await s.exec.all([
    build(k.select('cid', 'name', 'type', 'notnull', 'pk').from(k.raw('pragma_table_info(?)', [ref.table]))),
    build(k.select('name', 'unique', 'origin').from(k.raw('pragma_index_list(?)', [ref.table])))
  ])
  if (cols.length === 0) return null
  const indexes: IndexInfo[] = []
  for (const ix of list) {
    if (ix['origin'] === 'pk') continue
    const parts = await one(
      s,
      k
        .select('name', 'seqno')
        .from(k.raw('pragma_index_info(?)', [String(ix['name'])]))
        .orderBy('seqno')
    )
    indexes.push({
      name: String(ix['name']),
      unique: ix['unique'] === 1n,
      columns: parts.map((p) => String(p['name']))
    })
  }
  const pk = cols
    .filter((c) => (c['pk'] as bigint) > 0n)
    .sort((a, b) => Number((a['pk'] as bigint) - (b['pk'] as bigint)))
    .map((c) => String(c['name']))
  const uniqueCols = new Set(indexes.filter((i) => i.unique && i.columns.length === 1).map((i) => i.columns[0]))
  const indexed = new Set(indexes.map((i) => i.columns[0]))
  const columns: ColumnInfo[] = cols.map((c) => {
    const name = String(c['name'])
    const declared = String(c['type'])
    const type =
      s.sqliteTypes === 'mysql' && declared.startsWith(TEXT_AFFINITY_PREFIX)
        ? declared.slice(TEXT_AFFINITY_PREFIX.length)
        : declared
    return {
      name,
      type,
      data_type: sqliteDataType(declared),
      nullable: c['notnull'] === 0n && c['pk'] === 0n,
      key: pk[0] === name ? 'PRI' : uniqueCols.has(name) ? 'UNI' : indexed.has(name) ? 'MUL' : null,
      position: Number(c['cid']) + 1
    }
  })
  return {
    database: ref.database,
    table: ref.table,
    columns,
    primary_key: pk,
    indexes: indexes.sort((a, b) => (a.name < b.name ? -1 : 1))
  }
}

/** A MariaDB/MySQL table's columns and indexes, from information_schema; null when there is no such table. */
const mysqlTableSchema = async (s: Session, ref: TableRef): Promise<TableSchema | null> => {
  const k = s.k
  const [cols = [], stats = []] = await s.exec.all([
    build(
      k
        .select('COLUMN_NAME', 'COLUMN_TYPE', 'DATA_TYPE', 'IS_NULLABLE', 'COLUMN_KEY', 'ORDINAL_POSITION')
        .from('information_schema.COLUMNS')
        .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table })
        .orderBy('ORDINAL_POSITION')
    ),
    build(
      k
        .select('INDEX_NAME', 'NON_UNIQUE', 'SEQ_IN_INDEX', 'COLUMN_NAME')
        .from('information_schema.STATISTICS')
        .where({ TABLE_SCHEMA: ref.database, TABLE_NAME: ref.table })
        .orderBy([{ column: 'INDEX_NAME' }, { column: 'SEQ_IN_INDEX' }])
    )
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
  const indexes: IndexInfo[] = [...byIndex.entries()]
    .filter(([n]) => n !== 'PRIMARY')
    .map(([name, v]) => ({ name, unique: v.unique, columns: v.columns }))
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

/** Each column's base type, by name, of a (session-cached) schema. */
const TYPES = new WeakMap<TableSchema, ReadonlyMap<string, string>>()
const typesOf = (schema: TableSchema): ReadonlyMap<string, string> => {
  let types = TYPES.get(schema)
  if (types === undefined) {
    types = new Map(schema.columns.map((c) => [c.name, c.data_type]))
    TYPES.set(schema, types)
  }
  return types
}

const selectRows = async (
  s: Session,
  plan: RowsPlan,
  schema: TableSchema,
  maxBytes = Number.POSITIVE_INFINITY
): Promise<{ rows: Row[]; stopped: boolean; upperBytes: number }> => {
  const statement = s.statements.statement(rowsShape(plan), () => rowsStatement(s.k, s.sqlite, plan))
  const types = typesOf(schema)
  // mysql2 already gives exact JSON for these types (numbers for INT, strings for text, DECIMAL and
  // BIGINT); only the others are converted.
  const converters = plan.columns.map((c) => {
    const type = types.get(c) ?? 'unknown'
    return s.sqlite || !MYSQL_EXACT.has(type) ? columnConverter(type) : null
  })
  const read = rowReader(
    plan.columns,
    converters.map((c) => c !== null)
  )
  const rows: Row[] = []
  const sizes: RowBytes = { lower: 2, upper: 2 }
  const stopped = await s.exec.each(statement, (row) => {
    rows.push(read(row, converters, sizes, rows.length < plan.limit))
    return sizes.lower <= maxBytes
  })
  return { rows, stopped, upperBytes: sizes.upper }
}

const count = async (s: Session, plan: CountPlan): Promise<number | string> => {
  const statement = s.statements.statement(countShape(plan), () => countStatement(s.k, s.sqlite, plan))
  const rows = (await s.exec.all([statement]))[0] ?? []
  const value = toJsonValue('bigint', rows[0]?.['n'])
  return typeof value === 'string' && /^\d{1,15}$/.test(value)
    ? Number(value)
    : typeof value === 'number'
      ? value
      : String(value)
}
