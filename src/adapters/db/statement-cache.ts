/**
 * Statements knex built, kept by the shape of their plan. Building a SELECT with knex took about a
 * quarter of a millisecond per query, more than a tenth of database.rows of 1,000 rows
 * (bench/db-rows); a session asks the same shapes again and again, with other values.
 *
 * The text of a statement depends on its plan's shape only: table, columns, order, each filter's
 * column, operator and kind of value (null or not, string or number, how many in a list), and
 * whether there is an offset (knex leaves `offset 0` out); the values are bound. So the SQL of a
 * shape is kept and the values of a plan are bound in the order knex binds them: the filters'
 * values in order, then the limit and the offset. That order is checked against knex's own
 * bindings the first time a shape is built; a shape where they differ is never kept, and knex builds
 * it every time.
 */
import { LIKE_ESCAPE, type PlannedFilter, type RowsPlan, type CountPlan } from '../../domain/database-plan.js'
import type { Statement } from './executors.js'

const kindOf = (v: unknown): string => (v === null ? 'null' : typeof v)

const filterShape = (f: PlannedFilter): unknown[] =>
  f.operator === 'in' ? [f.column, f.operator, f.value.map(kindOf)] : [f.column, f.operator, kindOf(f.value)]

/** The values knex binds for one filter, in its order. */
const filterBindings = (f: PlannedFilter, into: unknown[]): void => {
  switch (f.operator) {
    case 'eq':
    case 'ne':
      // `is null` and `is not null` bind nothing
      if (f.value !== null) into.push(f.value)
      return
    case 'contains':
      into.push(f.pattern, LIKE_ESCAPE)
      return
    case 'in':
      for (const v of f.value) into.push(v)
      return
    default:
      into.push(f.value)
  }
}

/** The shape of a rows plan and the values a statement of that shape binds. */
export const rowsShape = (plan: RowsPlan): { readonly key: string; readonly bindings: unknown[] } => {
  const bindings: unknown[] = []
  for (const f of plan.filters) filterBindings(f, bindings)
  bindings.push(plan.limit + 1)
  if (plan.offset !== 0) bindings.push(plan.offset)
  const key = JSON.stringify([
    'rows',
    plan.ref.database,
    plan.ref.table,
    plan.columns,
    plan.filters.map(filterShape),
    plan.order,
    plan.offset === 0
  ])
  return { key, bindings }
}

/** The shape of a count plan and the values a statement of that shape binds. */
export const countShape = (plan: CountPlan): { readonly key: string; readonly bindings: unknown[] } => {
  const bindings: unknown[] = []
  for (const f of plan.filters) filterBindings(f, bindings)
  return { key: JSON.stringify(['count', plan.ref.database, plan.ref.table, plan.filters.map(filterShape)]), bindings }
}

const sameValues = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((v, i) => v === b[i])

const MAX_SHAPES = 512

/** The SQL of each shape seen (null: knex binds that shape otherwise; it is always built). */
export class StatementCache {
  private readonly sql = new Map<string, string | null>()

  /** The statement of `shape`: its SQL kept, or `build` (knex) run and its SQL kept when its bindings agree. */
  statement(shape: { readonly key: string; readonly bindings: unknown[] }, build: () => Statement): Statement {
    const known = this.sql.get(shape.key)
    if (known != null) return { sql: known, bindings: shape.bindings }
    const built = build()
    if (known === undefined) {
      if (this.sql.size >= MAX_SHAPES) this.sql.clear()
      this.sql.set(shape.key, sameValues(built.bindings, shape.bindings) ? built.sql : null)
    }
    return built
  }
}
