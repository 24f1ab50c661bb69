/**
 * unknownMember finds the first member a codec does not name, and its path, as the walk that built
 * the path at every step did (kept here as the reference): today's builds it only for the member it
 * finds. Values are generated against a codec with every kind of node the walk reads (exact,
 * partial, intersection, union, array, record, refinement), with unknown members anywhere or nowhere.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as t from 'io-ts'
import fc from 'fast-check'
import { unknownMember } from '../../src/events/strict.js'
import { Capture } from '../../src/events/capture.js'
import { fcOptions } from '../helpers/seed.js'

// --- the reference: the walk before the path was made lazily -------------------------------------

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const propsOfCodec = (codec: t.Mixed): Record<string, t.Mixed> | null => {
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType) return codec.props as Record<string, t.Mixed>
  if (codec instanceof t.ExactType || codec instanceof t.RefinementType || codec instanceof t.ReadonlyType)
    return propsOfCodec(codec.type as t.Mixed)
  if (codec instanceof t.IntersectionType) {
    const all: Record<string, t.Mixed> = {}
    for (const c of codec.types as t.Mixed[]) {
      const p = propsOfCodec(c)
      if (p === null) return null
      Object.assign(all, p)
    }
    return all
  }
  return null
}

const reference = (codec: t.Mixed, value: unknown, at = ''): string | null => {
  if (codec instanceof t.RefinementType || codec instanceof t.ExactType || codec instanceof t.ReadonlyType)
    return reference(codec.type as t.Mixed, value, at)
  if (codec instanceof t.UnionType) {
    const match = (codec.types as t.Mixed[]).find((c) => c.is(value))
    return match === undefined ? null : reference(match, value, at)
  }
  if (codec instanceof t.ArrayType || codec instanceof t.ReadonlyArrayType) {
    if (!Array.isArray(value)) return null
    for (const [i, v] of value.entries()) {
      const r = reference(codec.type as t.Mixed, v, `${at}[${i}]`)
      if (r !== null) return r
    }
    return null
  }
  if (codec instanceof t.DictionaryType) {
    if (!isPlainObject(value)) return null
    for (const [k, v] of Object.entries(value)) {
      const r = reference(codec.codomain as t.Mixed, v, `${at}.${k}`)
      if (r !== null) return r
    }
    return null
  }
  const props = propsOfCodec(codec)
  if (props === null || !isPlainObject(value)) return null
  for (const k of Object.keys(value)) {
    const c = props[k]
    if (c === undefined) return `${at}.${k}`.replace(/^\./, '')
    const r = reference(c, value[k], `${at}.${k}`)
    if (r !== null) return r
  }
  return null
}

// --- a codec with every kind of node, and values of it with unknown members here and there ----------

const Positive = t.refinement(t.number, (n) => n > 0, 'Positive')
const Hit = t.union([
  t.type({ kind: t.literal('line'), text: t.string, at: Positive }),
  t.type({ kind: t.literal('block'), lines: t.readonlyArray(t.string) })
])
const Codec = t.intersection([
  t.type({
    name: t.string,
    hits: t.array(Hit),
    byFile: t.record(t.string, t.type({ count: t.number, sample: t.array(t.array(t.string)) }))
  }),
  t.partial({ note: t.exact(t.type({ text: t.string })), open: t.UnknownRecord })
])

/** Maybe one member no codec names, beside the named ones. */
const withExtra = <A extends Record<string, unknown>>(a: fc.Arbitrary<A>): fc.Arbitrary<Record<string, unknown>> =>
  fc
    .tuple(a, fc.option(fc.constantFrom('extra', 'verified_by', 'z', '0'), { freq: 6 }))
    .map(([v, extra]) => (extra === null ? v : { ...v, [extra]: true }))

const hit = fc.oneof(
  withExtra(
    fc.record({ kind: fc.constant('line'), text: fc.string({ maxLength: 4 }), at: fc.integer({ min: 1, max: 9 }) })
  ),
  withExtra(fc.record({ kind: fc.constant('block'), lines: fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }) })),
  // matches no member of the union: not looked into
  fc.record({ kind: fc.constant('other'), extra: fc.boolean() })
)
const value = withExtra(
  fc.record(
    {
      name: fc.string({ maxLength: 4 }),
      hits: fc.array(hit, { maxLength: 6 }),
      byFile: fc.dictionary(
        fc.constantFrom('a.cpp', 'b.h', 'c'),
        withExtra(
          fc.record({
            count: fc.nat(9),
            sample: fc.array(fc.array(fc.string({ maxLength: 2 }), { maxLength: 2 }), { maxLength: 2 })
          })
        )
      ),
      note: withExtra(fc.record({ text: fc.string({ maxLength: 3 }) })),
      open: fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue({ maxDepth: 1 }))
    },
    { requiredKeys: ['name', 'hits', 'byFile'] }
  )
)

const strict = suite('unknownMember')

strict('finds the member and path the reference walk finds, with and without a prefix', () => {
  let found = 0
  let deep = 0
  fc.assert(
    fc.property(value, fc.constantFrom('', 'data', '.x'), (v, at) => {
      const want = reference(Codec, v, at)
      assert.is(unknownMember(Codec, v, at), want)
      if (want !== null) found++
      if (want?.includes('[') === true || want?.includes('.') === true) deep++
    }),
    fcOptions(600)
  )
  // the generator reaches both outcomes and members below the top
  assert.ok(found > 100, `${found} values with an unknown member`)
  assert.ok(deep > 50, `${deep} of them below the top`)
})

strict('on captures: none in a capture as recorded, the path of one added deep inside', () => {
  const capture = {
    format: 'vba-capture',
    version: 1,
    kind: 'source.search',
    request: { kind: 'source.search', pattern: 'x' }
  }
  assert.is(unknownMember(Capture, capture), reference(Capture, capture))
  assert.is(unknownMember(Capture, [capture]), null)
  assert.is(
    unknownMember(t.array(Codec), [{ name: 'a', hits: [], byFile: { f: { count: 1, sample: [], x: 1 } } }]),
    '[0].byFile.f.x'
  )
})

strict.run()
