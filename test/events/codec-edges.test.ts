/**
 * The edges of the event codecs and bounds, directly: identifiers at 128 characters and one more,
 * digests of exactly 64 lowercase hex digits, whole numbers up to the largest safe integer, UTC
 * timestamps with milliseconds only, and object bytes that are not UTF-8, not JSON or too deep.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as E from 'fp-ts/lib/Either.js'
import type * as t from 'io-ts'
import {
  Digest,
  Identifier,
  NonNegativeInt,
  ObjectRef,
  PositiveInt,
  Timestamp,
  intBetween
} from '../../src/events/codecs.js'
import { MAX_JSON_DEPTH, parseBoundedBytes, parseBoundedJson } from '../../src/events/bounds.js'

const edges = suite('codec and bound edges')
const ok = (c: t.Mixed, v: unknown): boolean => E.isRight(c.decode(v))

edges('Identifier: 1 to 128 characters, a letter or digit first, no spaces or path syntax', () => {
  assert.ok(ok(Identifier, 'a'))
  assert.ok(ok(Identifier, `a${'b'.repeat(127)}`), '128 characters')
  assert.not.ok(ok(Identifier, `a${'b'.repeat(128)}`), '129 characters')
  for (const bad of ['', '-a', '.a', 'a b', 'a/b', '../a', 'a\n', 'ä', 7, null])
    assert.not.ok(ok(Identifier, bad), JSON.stringify(bad))
  for (const good of ['case-1', 'E4', 'a.b_c:d-e', '0']) assert.ok(ok(Identifier, good), good)
})

edges('Digest: sha256: and exactly 64 lowercase hex digits', () => {
  assert.ok(ok(Digest, `sha256:${'a'.repeat(64)}`))
  for (const bad of [
    `sha256:${'a'.repeat(63)}`,
    `sha256:${'a'.repeat(65)}`,
    `sha256:${'A'.repeat(64)}`,
    `sha512:${'a'.repeat(64)}`,
    `sha256:${'a'.repeat(62)}/x`,
    'a'.repeat(64)
  ])
    assert.not.ok(ok(Digest, bad), bad)
})

edges(
  'whole numbers: the least allowed and the largest safe integer pass; fractions, NaN, infinity, strings and unsafe integers do not',
  () => {
    assert.ok(ok(NonNegativeInt, 0))
    assert.not.ok(ok(NonNegativeInt, -1))
    assert.not.ok(ok(PositiveInt, 0))
    assert.ok(ok(PositiveInt, Number.MAX_SAFE_INTEGER))
    for (const bad of [Number.MAX_SAFE_INTEGER + 1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '1'])
      assert.not.ok(ok(PositiveInt, bad), String(bad))
    const percent = intBetween('Percent', 0, 100)
    assert.ok(ok(percent, 0) && ok(percent, 100))
    assert.not.ok(ok(percent, 101) || ok(percent, -1))
  }
)

edges('Timestamp: UTC with milliseconds, as toISOString writes it', () => {
  assert.ok(ok(Timestamp, new Date(0).toISOString()))
  for (const bad of [
    '2026-11-30T10:00:00Z',
    '2026-11-30T10:00:00.000+01:00',
    '2026-11-30 10:00:00.000Z',
    '2026-11-30T10:00:00.0000Z'
  ])
    assert.not.ok(ok(Timestamp, bad), bad)
})

edges('ObjectRef: a digest and a size, a media type optional', () => {
  const digest = `sha256:${'b'.repeat(64)}`
  assert.ok(ok(ObjectRef, { digest, size: 0 }))
  assert.ok(ok(ObjectRef, { digest, size: 3, media_type: 'text/plain' }))
  assert.not.ok(ok(ObjectRef, { digest, size: -1 }))
  assert.not.ok(ok(ObjectRef, { digest: 'sha256:../../etc/passwd', size: 1 }))
  assert.not.ok(ok(ObjectRef, { digest, size: 1, media_type: 7 }))
})

edges('object bytes: not UTF-8, not JSON, or nested too deep are undefined; the depth limit itself passes', () => {
  assert.is(parseBoundedBytes(new Uint8Array([0xff, 0xfe, 0x7b, 0x7d])), undefined, 'not UTF-8')
  assert.is(parseBoundedBytes(Buffer.from('{"a":')), undefined, 'not JSON')
  const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`
  assert.ok(Array.isArray(parseBoundedBytes(Buffer.from(deep(MAX_JSON_DEPTH)))), `${MAX_JSON_DEPTH} levels`)
  assert.is(parseBoundedBytes(Buffer.from(deep(MAX_JSON_DEPTH + 1))), undefined, 'one level more')
  const left = parseBoundedJson(deep(MAX_JSON_DEPTH + 1))
  assert.ok(E.isLeft(left) && left.left.includes(`deeper than ${MAX_JSON_DEPTH} levels`))
  const notJson = parseBoundedJson('nope')
  assert.ok(E.isLeft(notJson) && notJson.left.startsWith('not JSON'))
  assert.equal(parseBoundedBytes(Buffer.from('"text"')), 'text', 'a scalar is a value')
})

edges('JSON that is not JSON is refused without a character of its text; a position is a line and column', () => {
  const reason = (text: string): string => {
    const r = parseBoundedJson(text)
    if (E.isRight(r)) throw new Error('parsed')
    return r.left
  }
  // V8 says: Unexpected token 'd', "db_passwor"... is not valid JSON
  const secret = reason('db_password=hunter2-TOPSECRET')
  assert.is(secret, 'not JSON: the text does not start with a JSON value (line 1, column 1)')
  assert.is(
    reason('\n  SHELL=/bin/bash\u0000HOME=/root'),
    'not JSON: the text does not start with a JSON value (line 2, column 3)'
  )
  assert.is(reason('{"a":1,}'), 'not JSON: expected double-quoted property name (line 1, column 8)')
  assert.is(reason('{"a":1}\n{"b":2}'), 'not JSON: unexpected non-whitespace character after JSON (line 2, column 1)')
  assert.is(reason('{"a":'), 'not JSON: the text ends before the value does')
  // V8 quotes the text here too ("[1,,hunter2]" is not valid JSON): only that a character was unexpected.
  assert.is(reason('[1,,"hunter2"]'), 'not JSON: an unexpected character')
  assert.is(reason('{"pw": tru, "x": "hunter2"}'), 'not JSON: an unexpected character')
})

edges.run()
