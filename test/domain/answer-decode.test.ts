/**
 * decodeNext (src/domain/answer-decider.ts) is `NextAction.decode`: the same value (the same
 * object when it decodes) and the same errors, over valid answers of every kind and answers
 * altered member by member (wrong literals, types, missing and extra members).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import * as E from 'fp-ts/lib/Either.js'
import { decodeNext, NextAction } from '../../src/domain/answer-decider.js'
import { fcOptions } from '../helpers/seed.js'

const ids = fc.array(fc.constantFrom('E1', 'E2', 'H1', 'x', ''), { maxLength: 3 })
const next = fc.oneof(
  fc.record({ kind: fc.constant('tool'), operation: fc.string(), arguments: fc.jsonValue() }),
  fc.record({ kind: fc.constant('hypothesis'), action: fc.constant('propose'), statement: fc.string(), evidence: ids }),
  fc.record({
    kind: fc.constant('hypothesis'),
    action: fc.constant('update'),
    hypothesis_id: fc.string(),
    status: fc.constantFrom('open', 'supported', 'refuted'),
    evidence: ids,
    note: fc.string()
  }),
  fc.record({ kind: fc.constant('lab_test'), description: fc.string() }),
  fc.record({ kind: fc.constant('conclusion'), summary: fc.string(), hypotheses: ids, evidence: ids })
)
/** A member replaced, removed or added: a wrong literal, another type, a value of another answer. */
const altered = (value: Record<string, unknown>): fc.Arbitrary<unknown> =>
  fc.oneof(
    fc.constant(value),
    fc
      .tuple(
        fc.constantFrom(...Object.keys(value), 'kind', 'action', 'status', 'extra'),
        fc.oneof(
          fc.constantFrom('tool', 'hypothesis', 'propose', 'update', 'unknown', 'supported', 'lost', null, 7),
          fc.jsonValue()
        ),
        fc.boolean()
      )
      .map(([k, v, remove]) => {
        const copy: Record<string, unknown> = { ...value }
        if (remove) delete copy[k]
        else copy[k] = v
        return copy
      })
  )
const answer = next.chain((n) => altered(n)).map((n) => ({ next: n }))
const anything = fc.oneof(answer, fc.jsonValue(), fc.constant({ next: [] }), fc.constant([{}]))

const test = suite('decodeNext')

test('is NextAction.decode: the same value, the same object when it decodes, the same errors', () => {
  let decoded = 0
  let refused = 0
  fc.assert(
    fc.property(anything, (u) => {
      const want = NextAction.decode(u)
      const got = decodeNext(u)
      assert.equal(got, want)
      if (E.isRight(got) && E.isRight(want)) {
        // the answer itself when decode keeps it (a copy when it adds a missing tool's arguments)
        if (want.right === u) assert.ok(got.right === u, 'the same object')
        decoded++
      } else refused++
    }),
    fcOptions(3000)
  )
  // both sides of the comparison are reached
  assert.ok(decoded > 300, `${decoded} decoded`)
  assert.ok(refused > 300, `${refused} refused`)
})

test.run()
