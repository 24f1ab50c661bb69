/**
 * describeErrors says what a member takes in words, whatever the codec is named: a whole number
 * from its minimum, a string of its lengths, one of a keyof's keys, a list of what it holds, a
 * union's branches once; a missing member is said to be missing; the path names the member.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { describeErrors } from '../../src/events/decode.js'
import { intAtLeast, intBetween, Digest } from '../../src/events/codecs.js'
import { DatabaseRows, SourceRead } from '../../src/events/query-requests.js'

const said = (codec: t.Mixed, u: unknown): string => {
  const d = codec.decode(u)
  if (E.isRight(d)) throw new Error('expected a refusal')
  return describeErrors(d.left)
}

const decode = suite('describeErrors')

decode('members in words, not codec names', () => {
  const read = { kind: 'source.read', path: 'a.cpp', start_line: 1, end_line: 2 }
  assert.is(said(SourceRead, { ...read, start_line: 0 }), 'start_line must be a whole number from 1')
  assert.is(said(SourceRead, { ...read, path: '' }), 'path must be a string of 1-1024 characters')
  assert.is(
    said(SourceRead, { kind: 'source.read', start_line: 1, end_line: 2 }),
    'path is missing: it must be a string of 1-1024 characters'
  )
  assert.is(said(SourceRead, 7), 'the value must be an object')
  const rows = { kind: 'database.rows', table: 'x', columns: ['a'], filters: [], offset: 0, limit: 1 }
  assert.is(said(DatabaseRows, { ...rows, limit: -1 }), 'limit must be a whole number from 1')
  assert.is(said(DatabaseRows, { ...rows, columns: 'a' }), 'columns must be a list (each a string of 1-128 characters)')
  assert.is(
    said(DatabaseRows, { ...rows, filters: [{ column: 'a', operator: 'like', value: 1 }] }),
    'filters.0.operator must be one of "eq", "ne", "lt", "le", "gt", "ge", "contains", "in"'
  )
  // a union is said once, its nested branches flattened
  assert.is(
    said(DatabaseRows, { ...rows, filters: [{ column: 'a', operator: 'eq', value: {} }] }),
    'filters.0.value must be a string of 0-1000 characters, a number, true or false, null or a list (each a string of 0-1000 characters or a number)'
  )
  assert.is(
    said(t.type({ n: intBetween('Small', 1, 5), b: t.boolean, s: t.array(t.string) }), { n: 9, b: 1, s: [1] }),
    'n must be a whole number from 1 to 5; b must be true or false; s.0 must be a string'
  )
  assert.is(said(t.type({ m: intAtLeast('Anything', 0) }), {}), 'm is missing: it must be a whole number from 0')
  assert.match(said(t.type({ d: Digest }), { d: 'x' }), 'd must be a Digest (a string matching /')
  // exact, readonly and a refinement of an object add no entry to the path: its members are named
  assert.is(said(t.exact(t.type({ a: t.string })), { a: 1 }), 'a must be a string')
  assert.is(said(t.readonly(t.type({ a: t.string })), { a: 1 }), 'a must be a string')
  assert.is(
    said(
      t.refinement(t.type({ a: t.string }), () => true, 'Refined'),
      { a: 1 }
    ),
    'a must be a string'
  )
  const many = said(t.type({ a: t.string, b: t.string, c: t.string, d: t.string }), {})
  assert.ok(many.endsWith(' (+1 more)'), many)
})

decode.run()
