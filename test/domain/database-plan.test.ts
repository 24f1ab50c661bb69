import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import {
  likeContains,
  planRows,
  planCount,
  resolveTable,
  stableKey,
  type DatabaseScope,
  type TableSchema
} from '../../src/domain/database-plan.js'
import { checkIdentifier } from '../../src/domain/identifiers.js'
import { DEFAULT_LIMITS } from '../../src/domain/limits.js'
import { left, right } from '../helpers/fs.js'

const scope: DatabaseScope = {
  databases: ['world', 'world2'],
  allowedTables: { world: ['creature_template'], world2: ['quest_template'] },
  limits: { ...DEFAULT_LIMITS, max_rows: 50, max_in_values: 3 }
}
const schema: TableSchema = {
  database: 'world',
  table: 'creature_template',
  columns: ['entry', 'name', 'npcflag'].map((name, i) => ({
    name,
    type: 'int',
    data_type: 'int',
    nullable: false,
    key: i === 0 ? ('PRI' as const) : null,
    position: i + 1
  })),
  primary_key: ['entry'],
  indexes: []
}

const identifiers = suite('checkIdentifier')

identifiers('accepts plain ASCII names and refuses everything that could be SQL', () => {
  for (const ok of ['entry', 'creature_template', '_x', 'A1', 'a'.repeat(64)]) right(checkIdentifier('column', ok))
  for (const bad of [
    '',
    '1abc',
    'a b',
    'a`b',
    "a'b",
    'a"b',
    'a;b',
    'a--b',
    'a/*b*/',
    'world.table',
    'nаme' /* Cyrillic a */,
    'ｅntry',
    'a'.repeat(65),
    'a\u0000',
    3,
    null
  ]) {
    assert.is(left(checkIdentifier('column', bad)).code, 'IDENTIFIER_INVALID', String(bad))
  }
})

identifiers.run()

const tables = suite('resolveTable')

tables('uses the first database by default and enforces the allowlist per database', () => {
  assert.equal(right(resolveTable(scope, 'creature_template')), { database: 'world', table: 'creature_template' })
  assert.equal(right(resolveTable(scope, 'quest_template', 'world2')), { database: 'world2', table: 'quest_template' })
  assert.is(left(resolveTable(scope, 'quest_template')).code, 'TABLE_NOT_ALLOWED')
  assert.is(left(resolveTable(scope, 'creature_template', 'mysql')).code, 'DATABASE_NOT_ALLOWED')
  assert.is(left(resolveTable(scope, 'creature_template`; DROP', 'world')).code, 'IDENTIFIER_INVALID')
  assert.is(left(resolveTable(scope, 'creature_template', 'information_schema')).code, 'DATABASE_NOT_ALLOWED')
})

tables.run()

const plans = suite('planRows / planCount')
const rows = (extra: Record<string, unknown> = {}) => ({
  kind: 'database.rows' as const,
  table: 'creature_template',
  columns: ['entry', 'name'],
  filters: [],
  offset: 0,
  limit: 10,
  ...extra
})

plans('adds the primary key as tie-breaker and caps the limit', () => {
  const p = right(planRows(scope, schema, rows({ order_by: [{ column: 'name', direction: 'desc' }], limit: 500 })))
  assert.equal(p.order, [
    { column: 'name', direction: 'desc' },
    { column: 'entry', direction: 'asc' }
  ])
  assert.is(p.limit, 50)
  assert.is(p.requested_limit, 500)
  assert.is(p.order_source, 'primary_key')
})

plans('refuses unknown columns, duplicate columns, bad operators and oversized in lists', () => {
  assert.is(left(planRows(scope, schema, rows({ columns: ['entry', 'password'] }))).code, 'COLUMN_UNKNOWN')
  assert.is(left(planRows(scope, schema, rows({ columns: ['entry', 'entry'] }))).code, 'QUERY_INVALID')
  assert.is(left(planRows(scope, schema, rows({ columns: [] }))).code, 'QUERY_INVALID')
  assert.is(
    left(planRows(scope, schema, rows({ order_by: [{ column: 'nope', direction: 'asc' }] }))).code,
    'COLUMN_UNKNOWN'
  )
  const f = (operator: string, value: unknown) =>
    left(
      planCount(scope, schema, {
        kind: 'database.count',
        table: 'creature_template',
        filters: [{ column: 'entry', operator: operator as 'eq', value: value as number }]
      })
    ).code
  assert.is(f('in', [1, 2, 3, 4]), 'FILTER_INVALID')
  assert.is(f('in', []), 'FILTER_INVALID')
  assert.is(f('eq', [1]), 'FILTER_INVALID')
  assert.is(f('lt', null), 'FILTER_INVALID')
  assert.is(f('lt', true), 'FILTER_INVALID')
  assert.is(f('contains', 5), 'FILTER_INVALID')
  assert.is(f('eq', Number.POSITIVE_INFINITY), 'FILTER_INVALID')
  assert.is(
    left(
      planCount(scope, schema, {
        kind: 'database.count',
        table: 'creature_template',
        filters: [{ column: 'x`y', operator: 'eq', value: 1 }]
      })
    ).code,
    'IDENTIFIER_INVALID'
  )
})

plans('contains treats %, _ and the escape character as literal text', () => {
  assert.is(likeContains('50%_off!'), '%50!%!_off!!%')
  assert.is(likeContains('plain'), '%plain%')
})

plans('falls back to a unique index, then all columns, for a stable order', () => {
  assert.equal(stableKey({ ...schema, primary_key: [], indexes: [{ name: 'u', unique: true, columns: ['name'] }] }), {
    columns: ['name'],
    source: 'unique_index'
  })
  assert.equal(stableKey({ ...schema, primary_key: [], indexes: [] }).source, 'all_columns')
})

plans.run()
