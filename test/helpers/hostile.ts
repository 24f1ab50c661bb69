/**
 * Hostile database requests shared by the database tests (the default server and one in
 * NO_BACKSLASH_ESCAPES mode): a fixed corpus with the coded refusal each must get, and a
 * generator of requests mixing plausible names, hostile identifiers and injection payloads.
 */
import * as fc from 'fast-check'

/** The value that escapes a string literal when the server ignores backslash escapes. */
export const INJECTION = "zz' UNION SELECT secret, id FROM world.account_secrets -- "

export const HOSTILE: Array<[unknown, string]> = [
  [
    {
      kind: 'database.rows',
      table: "creature_template' OR '1'='1",
      columns: ['entry'],
      filters: [],
      offset: 0,
      limit: 1
    },
    'IDENTIFIER_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template`; DROP TABLE creature_template; --',
      columns: ['entry'],
      filters: [],
      offset: 0,
      limit: 1
    },
    'IDENTIFIER_INVALID'
  ],
  [
    { kind: 'database.rows', table: 'creature_template', columns: ['entry /* */'], filters: [], offset: 0, limit: 1 },
    'IDENTIFIER_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'name;', operator: 'eq', value: 1 }],
      offset: 0,
      limit: 1
    },
    'IDENTIFIER_INVALID'
  ],
  [
    { kind: 'database.rows', table: 'creаture_template', columns: ['entry'], filters: [], offset: 0, limit: 1 },
    'IDENTIFIER_INVALID'
  ],
  [
    { kind: 'database.rows', table: 'account_secrets', columns: ['secret'], filters: [], offset: 0, limit: 1 },
    'TABLE_NOT_ALLOWED'
  ],
  [
    {
      kind: 'database.rows',
      table: 'user',
      database: 'mysql',
      columns: ['Password'],
      filters: [],
      offset: 0,
      limit: 1
    },
    'DATABASE_NOT_ALLOWED'
  ],
  [{ kind: 'database.schema', table: 'TABLES', database: 'information_schema' }, 'DATABASE_NOT_ALLOWED'],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'entry', operator: 'regexp', value: '.*' }],
      offset: 0,
      limit: 1
    },
    'QUERY_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'entry', operator: 'in', value: Array.from({ length: 101 }, (_, i) => i) }],
      offset: 0,
      limit: 1
    },
    'FILTER_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'entry', operator: 'eq', value: { toString: 'x' } }],
      offset: 0,
      limit: 1
    },
    'QUERY_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'entry', operator: 'eq', value: [[1]] }],
      offset: 0,
      limit: 1
    },
    'QUERY_INVALID'
  ],
  [
    { kind: 'database.rows', table: 'creature_template', columns: ['entry'], filters: [], offset: -1, limit: 1 },
    'QUERY_INVALID'
  ],
  [
    {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [],
      offset: 0,
      limit: 1,
      raw_sql: 'DELETE FROM creature_template'
    },
    'QUERY_INVALID'
  ]
]

export const identifierish = fc.oneof(
  {
    arbitrary: fc.constantFrom(
      'entry',
      'name',
      'npcflag',
      'subname',
      'creature_template',
      'creature_template',
      'creature_template',
      'quest_template',
      'ID'
    ),
    weight: 12
  },
  { arbitrary: fc.constantFrom('account_secrets', 'world', 'mysql', 'user', 'secret'), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
  {
    arbitrary: fc.constantFrom("a'b", 'a`b', 'a;b', 'a--', '/*', 'ＡＢ', 'nаme', '\u0000', 'a b', 'x"y', '1x'),
    weight: 1
  }
)
export const value = fc.oneof(
  fc.integer({ min: -5, max: 200_000 }),
  fc.string({ maxLength: 8 }),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.constantFrom("' OR 1=1 --", '%', '_', '\\', ';DROP TABLE x', INJECTION, "\\' OR 1=1 -- ", "zz\\'; SELECT 1; -- "),
  fc.array(fc.integer(), { maxLength: 120 }),
  fc.object({ maxDepth: 1 })
)
export const request = fc.oneof(
  fc.record(
    {
      kind: fc.constant('database.rows'),
      table: identifierish,
      columns: fc.array(identifierish, { maxLength: 4 }),
      filters: fc.array(
        fc.record({
          column: identifierish,
          operator: fc.constantFrom('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'in', 'like', 'or'),
          value
        }),
        { maxLength: 3 }
      ),
      offset: fc.integer({ min: -1, max: 4000 }),
      limit: fc.integer({ min: 0, max: 300 }),
      database: fc.option(identifierish, { nil: undefined })
    },
    { requiredKeys: ['kind', 'table', 'columns', 'filters', 'offset', 'limit'] }
  ),
  fc.record({
    kind: fc.constant('database.count'),
    table: identifierish,
    filters: fc.array(
      fc.record({ column: identifierish, operator: fc.constantFrom('eq', 'in', 'contains', 'gt'), value }),
      { maxLength: 3 }
    )
  }),
  fc.record({
    kind: fc.constantFrom('database.schema', 'database.tables'),
    table: identifierish,
    database: fc.option(identifierish, { nil: undefined })
  })
)

export const REFUSALS = new Set([
  'QUERY_INVALID',
  'QUERY_UNKNOWN_KIND',
  'IDENTIFIER_INVALID',
  'DATABASE_NOT_ALLOWED',
  'TABLE_NOT_ALLOWED',
  'COLUMN_UNKNOWN',
  'FILTER_INVALID',
  'RESULT_TOO_LARGE'
])
