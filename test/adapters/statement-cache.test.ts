/**
 * The statement cache (src/adapters/db/statement-cache.ts) against knex itself: on random rows and
 * count plans, many of the same shape with other values, every statement it gives is the one knex
 * builds for that plan, for MariaDB/MySQL and SQLite alike.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import knexFactory from 'knex'
import { likeContains, type CountPlan, type PlannedFilter, type RowsPlan } from '../../src/domain/database-plan.js'
import { countShape, rowsShape, StatementCache } from '../../src/adapters/db/statement-cache.js'
import { countStatement, rowsStatement } from '../../src/adapters/db/world-db.js'
import { fcOptions } from '../helpers/seed.js'

const s = suite('statement cache')

const column = fc.constantFrom('entry', 'name')
const scalar = fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom('a', "o'k", '%_!', '?', '\\'))

const filter: fc.Arbitrary<PlannedFilter> = fc.oneof(
  fc.record({
    column,
    operator: fc.constantFrom('eq' as const, 'ne' as const),
    value: fc.oneof(scalar, fc.constant(null))
  }),
  fc.record({
    column,
    operator: fc.constantFrom('lt' as const, 'le' as const, 'gt' as const, 'ge' as const),
    value: scalar
  }),
  fc
    .constantFrom('a', '%', 'x_y', '!')
    .map((value) => ({ column: 'name', operator: 'contains' as const, value, pattern: likeContains(value) })),
  fc.record({ column, operator: fc.constant('in' as const), value: fc.array(scalar, { minLength: 1, maxLength: 3 }) })
)

const ref = { database: 'world', table: 'creature_template' }

const rowsPlan: fc.Arbitrary<RowsPlan> = fc.record({
  kind: fc.constant('database.rows' as const),
  ref: fc.constant(ref),
  columns: fc.constantFrom(['entry'], ['entry', 'name']),
  filters: fc.array(filter, { maxLength: 2 }),
  order: fc.constantFrom(
    [{ column: 'entry', direction: 'asc' as const }],
    [
      { column: 'name', direction: 'desc' as const },
      { column: 'entry', direction: 'asc' as const }
    ]
  ),
  order_source: fc.constant('primary_key' as const),
  offset: fc.constantFrom(0, 0, 5, 100),
  limit: fc.constantFrom(1, 10, 1000),
  requested_limit: fc.constant(1000)
})

const countPlan: fc.Arbitrary<CountPlan> = fc.record({
  kind: fc.constant('database.count' as const),
  ref: fc.constant(ref),
  filters: fc.array(filter, { maxLength: 2 })
})

for (const client of ['mysql2', 'better-sqlite3'] as const) {
  s(`${client}: every statement is the one knex builds, served from the cache for shapes seen before`, () => {
    const k = knexFactory({ client, useNullAsDefault: true })
    const sqlite = client === 'better-sqlite3'
    const cache = new StatementCache()
    const seen = new Set<string>()
    let hits = 0
    fc.assert(
      fc.property(rowsPlan, countPlan, (rows, count) => {
        for (const [shape, build] of [
          [rowsShape(rows), () => rowsStatement(k, sqlite, rows)],
          [countShape(count), () => countStatement(k, sqlite, count)]
        ] as const) {
          if (seen.has(shape.key)) hits++
          seen.add(shape.key)
          assert.equal(cache.statement(shape, build), build())
        }
      }),
      fcOptions(400)
    )
    assert.ok(hits > 200, `only ${hits} plans of a shape seen before`)
  })
}

s('a shape whose bindings knex orders otherwise is built by knex every time', () => {
  const cache = new StatementCache()
  let builds = 0
  const shape = { key: 'x', bindings: [1, 2] }
  const build = () => {
    builds++
    return { sql: 'select ?, ?', bindings: [2, 1] }
  }
  for (let i = 0; i < 3; i++) assert.equal(cache.statement(shape, build), { sql: 'select ?, ?', bindings: [2, 1] })
  assert.is(builds, 3)
})

s.run()
