import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { decodeQuery } from '../../src/domain/query.js'
import { left, right } from '../helpers/fs.js'

const decode = suite('decodeQuery (project-query-v1)')

decode('accepts every kind in its documented shape', () => {
  const ok = [
    { kind: 'source.files', text: 'Wolpertinger' },
    { kind: 'source.search', text: 'AddSC_', path_prefix: 'src/' },
    { kind: 'source.symbol', symbol: 'NPC_WILD_WOLPERTINGER' },
    { kind: 'source.registration', symbol: 'npc_wolpertinger' },
    { kind: 'source.schema', text: 'creature_template' },
    { kind: 'source.read', path: 'src/a.cpp', start_line: 1, end_line: 80 },
    { kind: 'source.context', text: '23487' },
    { kind: 'database.tables' },
    { kind: 'database.schema', table: 'creature_template', database: 'world' },
    {
      kind: 'database.rows',
      table: 't',
      columns: ['a'],
      filters: [{ column: 'a', operator: 'in', value: [1, '2'] }],
      offset: 0,
      limit: 1,
      order_by: [{ column: 'a', direction: 'desc' }]
    },
    { kind: 'database.count', table: 't', filters: [] }
  ]
  for (const q of ok) assert.equal(right(decodeQuery(q)), q)
})

decode('refuses members the contract does not name (argument injection)', () => {
  const bad = [
    { kind: 'source.search', text: 'x', repository: '/etc' },
    { kind: 'source.read', path: 'a', start_line: 1, end_line: 2, ref: 'HEAD~1' },
    { kind: 'database.rows', table: 't', columns: ['a'], filters: [], offset: 0, limit: 1, sql: 'DROP TABLE t' },
    {
      kind: 'database.rows',
      table: 't',
      columns: ['a'],
      filters: [{ column: 'a', operator: 'eq', value: 1, raw: '1 OR 1=1' }],
      offset: 0,
      limit: 1
    },
    { kind: 'database.tables', host: 'evil.example' }
  ]
  for (const q of bad) assert.is(left(decodeQuery(q)).code, 'QUERY_INVALID', JSON.stringify(q))
})

decode('refuses wrong types, non-positive or non-integer lines, unknown kinds and operators', () => {
  assert.is(left(decodeQuery({ kind: 'shell.exec', cmd: 'id' })).code, 'QUERY_UNKNOWN_KIND')
  // Names of Object.prototype members are unknown kinds too, not kinds that "do not take: kind".
  for (const kind of ['constructor', 'toString', '__proto__', 'hasOwnProperty'])
    assert.is(left(decodeQuery({ kind })).code, 'QUERY_UNKNOWN_KIND', kind)
  assert.is(left(decodeQuery(null)).code, 'QUERY_INVALID')
  assert.is(left(decodeQuery([])).code, 'QUERY_INVALID')
  for (const start of [0, -1, 1.5, '1', null])
    assert.is(
      left(decodeQuery({ kind: 'source.read', path: 'a', start_line: start, end_line: 3 })).code,
      'QUERY_INVALID'
    )
  assert.is(
    left(decodeQuery({ kind: 'database.count', table: 't', filters: [{ column: 'a', operator: 'like', value: '%' }] }))
      .code,
    'QUERY_INVALID'
  )
  assert.is(
    left(
      decodeQuery({ kind: 'database.count', table: 't', filters: [{ column: 'a', operator: 'eq', value: { $gt: 1 } }] })
    ).code,
    'QUERY_INVALID'
  )
  assert.is(left(decodeQuery({ kind: 'source.search', text: '' })).code, 'QUERY_INVALID')
  assert.is(left(decodeQuery({ kind: 'source.search', text: 'x'.repeat(201) })).code, 'QUERY_INVALID')
})

decode('refuses lone UTF-16 surrogates anywhere in a query (they can be neither canonicalised nor recorded)', () => {
  const bad = [
    { kind: 'database.count', table: 't', filters: [{ column: 'a', operator: 'eq', value: '\ud800' }] },
    {
      kind: 'database.rows',
      table: 't',
      columns: ['a'],
      filters: [{ column: 'a', operator: 'in', value: ['ok', 'x\udc00'] }],
      offset: 0,
      limit: 1
    },
    { kind: 'source.search', text: 'abc\ud83d' },
    JSON.parse('{"kind": "source.search", "text": "\\ud800"}')
  ]
  for (const q of bad) {
    const f = left(decodeQuery(q))
    assert.is(f.code, 'QUERY_INVALID', JSON.stringify(q))
    assert.match(f.message, 'lone UTF-16 surrogates')
  }
  assert.equal(right(decodeQuery({ kind: 'source.search', text: 'emoji \ud83d\ude00 is fine' })), {
    kind: 'source.search',
    text: 'emoji \ud83d\ude00 is fine'
  })
})

decode.run()
