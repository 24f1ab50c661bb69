import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import {
  canonicalJson,
  sameCanonicalJson,
  sha256Digest,
  utf8OfLines,
  DIGEST_PATTERN
} from '../../src/events/canonical.js'
import canonicalize from 'canonicalize'
import { fcOptions } from '../helpers/seed.js'
import { right, left } from '../helpers/fs.js'

const canonical = suite('canonicalJson (RFC 8785)')

canonical('sorts object members by UTF-16 code units, recursively', () => {
  // RFC 8785 section 3.2.3 ordering example keys
  const value = {
    '\u20ac': 'Euro Sign',
    '\r': 'Carriage Return',
    '\ufb33': 'Hebrew Letter Dalet With Dagesh',
    '1': 'One',
    '\ud83d\ude00': 'Emoji: Grinning Face',
    '\u0080': 'Control',
    '\u00f6': 'Latin Small Letter O With Diaeresis'
  }
  const text = right(canonicalJson(value))
  const keys = Object.keys(JSON.parse(text))
  // JSON.parse reorders the integer-like key '1' first; compare the textual order instead
  const order = ['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33'].map((k) => JSON.stringify(k))
  let last = -1
  for (const k of order) {
    const at = text.indexOf(`${k}:`)
    assert.ok(at > last, `key ${k} out of order in ${text}`)
    last = at
  }
  assert.is(keys.length, 7)
})

canonical('serialises numbers as ECMAScript does (RFC 8785 section 3.2.2.3)', () => {
  assert.is(
    right(canonicalJson([1e21, 1e-7, -0, 0.000001, 123456789012345680000, 4.5])),
    '[1e+21,1e-7,0,0.000001,123456789012345680000,4.5]'
  )
})

canonical('has no whitespace and escapes only what JSON requires', () => {
  assert.is(
    right(canonicalJson({ b: [true, null, 'a\u0001"\\/é'], a: {} })),
    '{"a":{},"b":[true,null,"a\\u0001\\"\\\\/é"]}'
  )
})

canonical('refuses values without a JSON form', () => {
  assert.is(left(canonicalJson(Number.NaN)).code, 'NOT_CANONICALIZABLE')
  assert.is(left(canonicalJson({ x: Infinity })).code, 'NOT_CANONICALIZABLE')
  assert.is(left(canonicalJson('\ud800')).code, 'NOT_CANONICALIZABLE')
  assert.is(left(canonicalJson(undefined)).code, 'NOT_CANONICALIZABLE')
})

/** A copy of a JSON value with every object's members in reverse order. */
const reordered = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(reordered)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>)
            .reverse()
            .map(([k, x]) => [k, reordered(x)])
        )
      : v

canonical('sameCanonicalJson: true only when both have the same canonical text, and of a reordered copy', () => {
  // what canonicalize refuses or reads otherwise: NaN, Infinity, lone surrogates, undefined, toJSON
  const odd = fc.constantFrom<unknown>(
    Number.NaN,
    Number.POSITIVE_INFINITY,
    '\ud800',
    'a\udc00',
    undefined,
    new Date(0),
    -0,
    0
  )
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 2 }),
      odd,
      fc.array(tie('v'), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('a', 'b', '\ud800', 'c'), tie('v'), { maxKeys: 3 })
    )
  })).v
  let same = 0
  fc.assert(
    fc.property(value, value, (a, b) => {
      for (const [x, y] of [
        [a, b],
        [a, reordered(a)]
      ]) {
        if (!sameCanonicalJson(x, y)) continue
        same++
        const cx = canonicalJson(x)
        const cy = canonicalJson(y)
        assert.ok(cx._tag === 'Right' && cy._tag === 'Right' && cx.right === cy.right, JSON.stringify([x, y]))
      }
    }),
    fcOptions(2000)
  )
  assert.ok(same > 1000, `${same} pairs were the same`)
  // a JSON value and its reordered copy are the same
  fc.assert(
    fc.property(fc.jsonValue(), (v) => sameCanonicalJson(v, reordered(v))),
    fcOptions(500)
  )
  assert.not.ok(sameCanonicalJson([Number.NaN], [Number.NaN]))
  assert.not.ok(sameCanonicalJson('\ud800', '\ud800'))
})

canonical('canonicalJson: the text canonicalize makes, or its refusal, of any value', () => {
  // plain values take a path of their own: every other value, and every refusal, is canonicalize's
  const reference = (v: unknown): string | null => {
    try {
      return canonicalize(v) ?? null
    } catch {
      return null
    }
  }
  const odd = fc.constantFrom<unknown>(
    Number.NaN,
    Number.NEGATIVE_INFINITY,
    '\ud800',
    'a\udc00b',
    '\ud83d\ude00',
    undefined,
    null,
    -0,
    1e21,
    5e-324,
    new Date(0),
    { toJSON: () => 'x' },
    Object.create(null) as object,
    Object.assign(Object.create(null) as object, { b: 1, a: [2] }),
    // a sparse array
    Object.assign(new Array<unknown>(3), { 0: 1, 2: 3 })
  )
  const key = fc.oneof(
    fc.constantFrom('a', 'b', 'B', '1', '10', '2', '', 'é', '\u20ac', '\ud83d\ude00', '\ud800', '__proto__x'),
    fc.string({ maxLength: 3 })
  )
  const value = fc.letrec((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 2 }),
      odd,
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(key, tie('v'), { maxKeys: 5 })
    )
  })).v
  let refused = 0
  fc.assert(
    fc.property(value, (v) => {
      const want = reference(v)
      const got = canonicalJson(v)
      if (want === null) {
        refused++
        assert.is(got._tag, 'Left')
      } else assert.is(right(got), want)
    }),
    fcOptions(3000)
  )
  assert.ok(refused > 100, `${refused} values refused`)
  // past 64 levels, a cycle
  let deep: unknown = 'x'
  for (let k = 0; k < 100; k++) deep = k % 2 === 0 ? [deep] : { k: deep }
  assert.is(right(canonicalJson(deep)), reference(deep))
  const cycle: Record<string, unknown> = { a: 1 }
  cycle['self'] = cycle
  assert.is(canonicalJson(cycle)._tag, 'Left')
})

canonical.run()

const digest = suite('sha256Digest')

digest('is sha256: plus 64 lowercase hex digits of the UTF-8 bytes', () => {
  assert.is(sha256Digest('abc'), 'sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  assert.is(sha256Digest(Buffer.from('abc')), sha256Digest('abc'))
  assert.ok(DIGEST_PATTERN.test(sha256Digest('')))
  assert.not.ok(DIGEST_PATTERN.test('sha256:../../etc/passwd'))
  assert.not.ok(DIGEST_PATTERN.test(`sha256:${'A'.repeat(64)}`))
})

digest('of lines: the UTF-8 of the pieces joined with LF, whatever their characters and sizes', () => {
  const joined = (pieces: string[]): Buffer => Buffer.from(pieces.join('\n'), 'utf8')
  const same = (pieces: string[]): void => assert.is(Buffer.compare(utf8OfLines(pieces), joined(pieces)), 0)
  // ASCII, Latin-1, BMP text, astral pairs and lone surrogates (UTF-8 encodes them as U+FFFD either way)
  const char = fc.oneof(
    fc.constantFrom('a', '\n', 'é', '→', '–', '\ud83d\ude00', '\ud800', '\udc00'),
    fc.string({ maxLength: 3 }),
    fc.string({ unit: 'grapheme', maxLength: 2 })
  )
  const piece = fc.oneof(
    { weight: 9, arbitrary: fc.array(char, { maxLength: 40 }).map((cs) => cs.join('')) },
    // long pieces: the reused buffer grows, and a text past its bound is encoded on its own
    { weight: 1, arbitrary: fc.tuple(char, fc.integer({ min: 1, max: 400_000 })).map(([c, n]) => c.repeat(n)) }
  )
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (pieces) => {
      same(pieces)
      // again, now that the buffer holds the bytes of this call: nothing carries over
      same(pieces)
    }),
    fcOptions(200)
  )
  // past the bound of the reused buffer
  const long = ['x'.repeat(700_000), '→'.repeat(400_000)]
  same(long)
  same([])
  same([''])
  assert.is(utf8OfLines(['a', 'b']).length, 3)
})

digest.run()
