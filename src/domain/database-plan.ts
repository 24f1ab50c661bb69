/**
 * Turning a decoded database query into a plan the read-only builder can execute, and refusing
 * everything else: databases and tables outside the operator's allowlist, identifiers that are not
 * plain names, columns the real schema does not have, operators applied to values they cannot
 * take, oversized `in` lists. Pure: the table schema is an input, read from the server before.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { failure, type Failure } from '../failures/failure.js'
import { checkIdentifier } from './identifiers.js'
import type { ProjectLimits } from './limits.js'
import type { DatabaseCount, DatabaseRows, Filter, OrderBy, Scalar } from './query.js'

export interface DatabaseScope {
  /** Configured databases; the first is the default. */
  readonly databases: readonly string[]
  /** Per database, the tables research may read. */
  readonly allowedTables: Readonly<Record<string, readonly string[]>>
  readonly limits: ProjectLimits
}

export interface TableRef {
  readonly database: string
  readonly table: string
}

/** A column as the server reports it. `data_type` is the lower-case base type (int, bigint, decimal, varchar, …). */
export interface ColumnInfo {
  readonly name: string
  readonly type: string
  readonly data_type: string
  readonly nullable: boolean
  readonly key: 'PRI' | 'UNI' | 'MUL' | null
  readonly position: number
}

export interface IndexInfo {
  readonly name: string
  readonly unique: boolean
  readonly columns: readonly string[]
}

export interface TableSchema {
  readonly database: string
  readonly table: string
  readonly columns: readonly ColumnInfo[]
  readonly primary_key: readonly string[]
  readonly indexes: readonly IndexInfo[]
}

export type PlanFailure = Failure<
  | 'IDENTIFIER_INVALID'
  | 'DATABASE_NOT_ALLOWED'
  | 'TABLE_NOT_ALLOWED'
  | 'COLUMN_UNKNOWN'
  | 'FILTER_INVALID'
  | 'QUERY_INVALID'
>

/** Resolves the database (default: the first configured) and checks the table is allowed. */
export const resolveTable = (
  scope: DatabaseScope,
  table: string,
  database?: string
): E.Either<PlanFailure, TableRef> => {
  const name = checkIdentifier('table', table)
  if (E.isLeft(name)) return name
  if (database !== undefined) {
    const named = checkIdentifier('database', database)
    if (E.isLeft(named)) return named
  }
  const db = database ?? scope.databases[0]
  if (db === undefined || !scope.databases.includes(db)) {
    return E.left(
      failure('DATABASE_NOT_ALLOWED', `database ${JSON.stringify(database)} is not configured`, {
        database: database ?? null
      })
    )
  }
  const allowed = scope.allowedTables[db] ?? []
  if (!allowed.includes(table)) {
    return E.left(
      failure('TABLE_NOT_ALLOWED', `table ${table} is not on the allowlist of ${db}`, { database: db, table })
    )
  }
  return E.right({ database: db, table })
}

/** A filter ready for the builder: operator and value checked against each other. */
export type PlannedFilter =
  | { readonly column: string; readonly operator: 'eq' | 'ne'; readonly value: Scalar }
  | { readonly column: string; readonly operator: 'lt' | 'le' | 'gt' | 'ge'; readonly value: string | number }
  | { readonly column: string; readonly operator: 'contains'; readonly value: string; readonly pattern: string }
  | { readonly column: string; readonly operator: 'in'; readonly value: ReadonlyArray<string | number> }

/** The escape character of `contains` patterns (bound as a parameter, same on every dialect). */
export const LIKE_ESCAPE = '!'

/** `%`, `_` and the escape character itself become literal characters of a LIKE pattern. */
export const likeContains = (text: string): string => `%${text.replace(/[!%_]/g, (c) => LIKE_ESCAPE + c)}%`

const filterFailure = (message: string, column: string): E.Either<PlanFailure, never> =>
  E.left(failure('FILTER_INVALID', message, { column }))

const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)

/** `columns` null: check everything but the column's existence (before the schema is read). */
const planFilter = (
  limits: ProjectLimits,
  columns: ReadonlySet<string> | null,
  f: Filter
): E.Either<PlanFailure, PlannedFilter> => {
  const id = checkIdentifier('column', f.column)
  if (E.isLeft(id)) return id
  if (columns !== null && !columns.has(f.column))
    return E.left(failure('COLUMN_UNKNOWN', `column ${f.column} does not exist in this table`, { column: f.column }))
  const v = f.value
  switch (f.operator) {
    case 'eq':
    case 'ne':
      if (Array.isArray(v)) return filterFailure(`${f.operator} takes one value; use in for a list`, f.column)
      if (typeof v === 'number' && !isFiniteNumber(v)) return filterFailure('numbers must be finite', f.column)
      return E.right({ column: f.column, operator: f.operator, value: v })
    case 'lt':
    case 'le':
    case 'gt':
    case 'ge':
      if (typeof v === 'string' || isFiniteNumber(v))
        return E.right({ column: f.column, operator: f.operator, value: v })
      return filterFailure(`${f.operator} takes a string or a finite number`, f.column)
    case 'contains':
      if (typeof v !== 'string' || v.length === 0) return filterFailure('contains takes a non-empty string', f.column)
      return E.right({ column: f.column, operator: 'contains', value: v, pattern: likeContains(v) })
    case 'in':
      if (!Array.isArray(v) || v.length === 0)
        return filterFailure('in takes a non-empty list of strings or numbers', f.column)
      if (v.length > limits.max_in_values)
        return filterFailure(`in lists at most ${limits.max_in_values} values (got ${v.length})`, f.column)
      if (!v.every((x) => typeof x === 'string' || isFiniteNumber(x)))
        return filterFailure('in values are strings or finite numbers', f.column)
      return E.right({ column: f.column, operator: 'in', value: v })
    default: {
      const _never: never = f.operator
      return filterFailure(`unknown operator ${String(_never)}`, f.column)
    }
  }
}

const planFilters = (
  limits: ProjectLimits,
  schema: TableSchema | null,
  filters: readonly Filter[]
): E.Either<PlanFailure, readonly PlannedFilter[]> => {
  if (filters.length > limits.max_filters) {
    return E.left(
      failure('QUERY_INVALID', `at most ${limits.max_filters} filters (got ${filters.length})`, {
        filters: filters.length
      })
    )
  }
  const columns = schema === null ? null : columnNames(schema)
  const planned: PlannedFilter[] = []
  for (const f of filters) {
    const p = planFilter(limits, columns, f)
    if (E.isLeft(p)) return p
    planned.push(p.right)
  }
  return E.right(planned)
}

/** The column names of a schema, kept per schema (schemas are read once per research session). */
const NAMES = new WeakMap<TableSchema, ReadonlySet<string>>()
const columnNames = (schema: TableSchema): ReadonlySet<string> => {
  let names = NAMES.get(schema)
  if (names === undefined) {
    names = new Set(schema.columns.map((c) => c.name))
    NAMES.set(schema, names)
  }
  return names
}

export interface CountPlan {
  readonly kind: 'database.count'
  readonly ref: TableRef
  readonly filters: readonly PlannedFilter[]
}

export interface RowsPlan {
  readonly kind: 'database.rows'
  readonly ref: TableRef
  readonly columns: readonly string[]
  readonly filters: readonly PlannedFilter[]
  /** Requested order first, then the tie-breaker that makes pages stable. */
  readonly order: readonly OrderBy[]
  readonly order_source: 'primary_key' | 'unique_index' | 'all_columns'
  readonly offset: number
  /** Rows returned at most (the request's limit, capped by ProjectLimits.max_rows). */
  readonly limit: number
  readonly requested_limit: number
}

/** The unique column set that makes an order total: the primary key, else a unique index, else all columns. */
export const stableKey = (schema: TableSchema): { columns: readonly string[]; source: RowsPlan['order_source'] } => {
  if (schema.primary_key.length > 0) return { columns: schema.primary_key, source: 'primary_key' }
  const unique = schema.indexes.find((i) => i.unique)
  if (unique !== undefined) return { columns: unique.columns, source: 'unique_index' }
  return { columns: schema.columns.map((c) => c.name), source: 'all_columns' }
}

/**
 * Names a row object cannot hold as a member: mysql2 refuses to read a result with such a column
 * (a fatal error of the connection), and better-sqlite3 sets `__proto__` through the accessor, so
 * its values vanish or become the row's prototype. Selecting them is refused; filters and order
 * only name them in SQL.
 */
const UNREADABLE_COLUMNS: ReadonlySet<string> = new Set([
  '__proto__',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__'
])

/**
 * Every check that needs no schema: identifiers, column count, duplicates, operators, values and
 * list sizes. Run before anything is sent to the server; hostile input stops here.
 */
export const precheck = (scope: DatabaseScope, q: DatabaseRows | DatabaseCount): E.Either<PlanFailure, true> => {
  if (q.kind === 'database.rows') {
    if (q.columns.length === 0) return E.left(failure('QUERY_INVALID', 'name at least one column', {}))
    if (q.columns.length > scope.limits.max_columns)
      return E.left(failure('QUERY_INVALID', `at most ${scope.limits.max_columns} columns`, {}))
    for (const c of [...q.columns, ...(q.order_by ?? []).map((o) => o.column)]) {
      const id = checkIdentifier('column', c)
      if (E.isLeft(id)) return id
    }
    if (new Set(q.columns).size !== q.columns.length)
      return E.left(failure('QUERY_INVALID', 'columns are listed twice', {}))
    const unreadable = q.columns.find((c) => UNREADABLE_COLUMNS.has(c))
    if (unreadable !== undefined)
      return E.left(
        failure(
          'QUERY_INVALID',
          `column ${unreadable} cannot be read: a row member of that name is not a value (the drivers refuse or drop it); filter or order by it, or read it through a view that names it otherwise`,
          { column: unreadable }
        )
      )
  }
  return pipe(
    planFilters(scope.limits, null, q.filters),
    E.map(() => true as const)
  )
}

export const planRows = (
  scope: DatabaseScope,
  schema: TableSchema,
  q: DatabaseRows
): E.Either<PlanFailure, RowsPlan> => {
  const pre = precheck(scope, q)
  return E.isLeft(pre) ? pre : planPrecheckedRows(scope, schema, q)
}

/** {@link planRows} of a query {@link precheck} accepted already. */
export const planPrecheckedRows = (
  scope: DatabaseScope,
  schema: TableSchema,
  q: DatabaseRows
): E.Either<PlanFailure, RowsPlan> => {
  const names = columnNames(schema)
  for (const c of [...q.columns, ...(q.order_by ?? []).map((o) => o.column)]) {
    if (!names.has(c))
      return E.left(failure('COLUMN_UNKNOWN', `column ${c} does not exist in ${schema.table}`, { column: c }))
  }
  const filters = planFilters(scope.limits, schema, q.filters)
  if (E.isLeft(filters)) return filters
  const requested = q.order_by ?? []
  const key = stableKey(schema)
  const seen = new Set(requested.map((o) => o.column))
  const order = [
    ...requested,
    ...key.columns.filter((c) => !seen.has(c)).map((column) => ({ column, direction: 'asc' as const }))
  ]
  return E.right({
    kind: 'database.rows' as const,
    ref: { database: schema.database, table: schema.table },
    columns: q.columns,
    filters: filters.right,
    order,
    order_source: key.source,
    offset: q.offset,
    limit: Math.min(q.limit, scope.limits.max_rows),
    requested_limit: q.limit
  })
}

export const planCount = (
  scope: DatabaseScope,
  schema: TableSchema,
  q: DatabaseCount
): E.Either<PlanFailure, CountPlan> =>
  pipe(
    planFilters(scope.limits, schema, q.filters),
    E.map((filters) => ({
      kind: 'database.count' as const,
      ref: { database: schema.database, table: schema.table },
      filters
    }))
  )
