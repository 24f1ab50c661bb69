import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { canonicalJson, isCanonicalText } from '../../src/events/canonical.js'
import { CANONICAL, canonicalBytes, NOT_CANONICAL, UNDECIDED } from '../../src/events/canonical-bytes.js'
import { fcOptions } from '../helpers/seed.js'

const bytes = suite('canonicalBytes')

/** canonicalBytes of `text`, alone and inside a larger buffer (bytes before and after it). */
const decide = (text: string): number => {
  const alone = canonicalBytes(Buffer.from(text), 0, Buffer.byteLength(text))
  const inside = Buffer.from(`{"x":"a"}${text},"y":"b\\"c"}`)
  const start = '{"x":"a"}'.length
  assert.is(canonicalBytes(inside, start, start + Buffer.byteLength(text)), alone, `inside a buffer: ${text}`)
  return alone
}

/** What canonicalBytes says of `text` is what isCanonicalText says, unless it leaves it undecided. */
let decided = 0
let undecided = 0
let canonicalOnes = 0
const agrees = (text: string): void => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return
  const d = decide(text)
  if (d === UNDECIDED) {
    undecided++
    return
  }
  decided++
  if (d === CANONICAL) canonicalOnes++
  assert.is(d === CANONICAL, isCanonicalText(text, parsed), `canonicalBytes says ${d} of ${text}`)
}

/** Names: ASCII (decided), with escapes and past ASCII (left undecided), integer-like (JSON.parse reorders them). */
const name = fc.oneof(
  fc.constantFrom(
    'a',
    'b',
    'ab',
    'B',
    '_',
    'text',
    'format',
    '__proto__',
    '1',
    '10',
    '9',
    '',
    'a"b',
    '\u00e9',
    '\u{1f600}',
    '\ufb33'
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 4 })
)
const scalar = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\u2028', '\u007f', '\u001f', '\b\f\n\r\t', '"\\/', '\u{1f600}'),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -0, 1e21, 1e-7, 123456789012345, 1234567890123456, 2 ** 53, 0.1),
  fc.boolean(),
  fc.constant(null)
)
const value = fc.letrec<{ v: unknown; o: Record<string, unknown> }>((tie) => ({
  v: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('v'), { maxLength: 4 }), tie('o')),
  o: fc.dictionary(name, tie('v'), { maxKeys: 5 })
})).o

/** Texts of a value: canonical, as JSON.stringify writes it, and altered where canonical form can break. */
const texts = (o: Record<string, unknown>): string[] => {
  const c = canonicalJson(o)
  const out = [JSON.stringify(o), JSON.stringify(o, null, 1)]
  if (c._tag === 'Right') out.push(c.right)
  const base = out[out.length - 1] as string
  const at = (k: number): number => (base.length === 0 ? 0 : k % base.length)
  for (const [from, to] of [
    [':', ': '],
    [',', ' ,'],
    ['"', '"\\u0041'],
    ['"', '"\\/'],
    ['"', '"\\u001f'],
    ['"', '"\\u001F'],
    ['"', '"\\u0008'],
    ['"', '"\\ud83d\\ude00'],
    ['"', '"\\ud800'],
    ['"', '"\\u007f'],
    [':"', ':"\\/'],
    [':"', ':"\\u0041'],
    [':"', ':"\\u001F'],
    [':"', ':"\\u000a'],
    [':"', ':"\\u000b'],
    [':"', ':"\\ud83d\\ude00'],
    [':1', ':12345678901234567'],
    [':1', ':9007199254740993'],
    [':1', ':123456789012345'],
    [':1', ':1.0'],
    [':1', ':1e0'],
    [':0', ':-0'],
    [':1', ':01'],
    [':2', ':2E1'],
    ['}', '}\n']
  ] as const)
    out.push(base.replace(from, to), base.replaceAll(from, to))
  // A member repeated, and members swapped: duplicates and order.
  const m = /^\{("(?:[^"\\]|\\.)*":[^,{}[\]]*),/.exec(base)
  if (m !== null) out.push(`{${m[1]},${base.slice(1)}`, `{${base.slice((m[0] as string).length, -1)},${m[1]}}`)
  out.push(base.slice(0, at(base.length >> 1)))
  return out
}

bytes('decides as isCanonicalText does, over generated objects and their altered texts', () => {
  fc.assert(
    fc.property(value, (o) => {
      for (const t of texts(o)) agrees(t)
    }),
    fcOptions(600)
  )
  // It decides most texts itself (it would be pointless if it left them all to serialising), both ways.
  assert.ok(decided > undecided, `decided ${decided}, undecided ${undecided}`)
  assert.ok(canonicalOnes > 1000 && decided - canonicalOnes > 1000, `canonical ${canonicalOnes} of ${decided}`)
})

bytes('examples', () => {
  assert.is(decide('{"a":1,"b":[true,false,null],"c":{"d":"x\\ny\\u0001"}}'), CANONICAL)
  assert.is(decide('{"format":"plain","text":"gr\u00fc\u00dfe \u{1f600} \u2028"}'), CANONICAL)
  assert.is(decide('{"b":1,"a":2}'), NOT_CANONICAL)
  assert.is(decide('{"a":1,"a":1}'), NOT_CANONICAL)
  assert.is(decide('{"a":1, "b":2}'), NOT_CANONICAL)
  assert.is(decide('{"a":"\\u0041"}'), NOT_CANONICAL)
  assert.is(decide('{"a":"\\/"}'), NOT_CANONICAL)
  assert.is(decide('{"a":"\\u001F"}'), NOT_CANONICAL)
  assert.is(decide('{"a":"\\u001f"}'), CANONICAL)
  assert.is(decide('{"a":-0}'), NOT_CANONICAL)
  assert.is(decide('{"a":0,"b":-1,"c":1.5,"d":1e+21,"e":1e-7}'), CANONICAL)
  assert.is(decide('{"a":1.50}'), NOT_CANONICAL)
  assert.is(decide('{"a":123456789012345,"b":-123456789012345,"c":1234567890123456}'), CANONICAL)
  assert.is(decide('{"a":12345678901234567}'), NOT_CANONICAL)
  assert.is(decide('{"a":9007199254740993}'), NOT_CANONICAL)
  assert.is(decide('{"a":[10,-7,0]}'), CANONICAL)
  assert.is(decide('{"a":1e400}'), NOT_CANONICAL)
  assert.is(decide('{"10":1,"9":2}'), CANONICAL)
  assert.is(decide('{"9":1,"10":2}'), NOT_CANONICAL)
  assert.is(decide('{"\u00e9":1}'), UNDECIDED)
  assert.is(decide('{"a\\"":1}'), UNDECIDED)
})

bytes('a text cut short ends (any answer) instead of reading on', () => {
  const text = '{"a":"x\\u0001y","b":[1,2.5,{"c":true}],"d":"long string without escapes at all"}'
  for (let k = 0; k <= text.length; k++) {
    const r = canonicalBytes(Buffer.from(text), 0, k)
    assert.ok(r === CANONICAL || r === NOT_CANONICAL || r === UNDECIDED)
  }
})

bytes.run()
