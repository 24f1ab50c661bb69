/**
 * Bounded structure: a value nested deeper than MAX_JSON_DEPTH or with more than MAX_JSON_MEMBERS
 * members is refused, with its depth named, before anything recursive sees it: a log line
 * (EVENT_MALFORMED), a model answer (MODEL_ANSWER_INVALID), a query (QUERY_INVALID), JSON decoded at
 * a trust boundary. Generated values of every shape and depth at every member of an envelope.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import * as E from 'fp-ts/lib/Either.js'
import * as t from 'io-ts'
import { boundsViolation, MAX_JSON_DEPTH, MAX_JSON_MEMBERS, parseBoundedJson } from '../../src/events/bounds.js'
import { checkLine, genesisHash } from '../../src/events/chain.js'
import { decodeJson } from '../../src/events/decode.js'
import { decideAnswer } from '../../src/domain/answer-decider.js'
import { decodeQuery } from '../../src/domain/query.js'
import { ruleFold } from '../../src/domain/rules.js'
import { DEEP, deepText, sealRawLine, wideText, type Shape } from '../helpers/deep.js'
import { left, right } from '../helpers/fs.js'

const bounds = suite('bounded structure')
const genesis = right(
  genesisHash({ format: 'vba-case', format_version: 1, case_id: 'c', created_at: '2026-01-01T00:00:00.000Z' })
)
const AT = '2026-01-01T00:00:00.000Z'

bounds('the limits: 64 levels pass, 65 do not; 1,048,576 members pass, one more does not', () => {
  assert.is(boundsViolation(JSON.parse(deepText(MAX_JSON_DEPTH))), null)
  const v = boundsViolation(JSON.parse(deepText(MAX_JSON_DEPTH + 1, 'object')))
  assert.is(v?.limit, 'depth')
  assert.match(v?.message ?? '', /nested deeper than 64 levels \(at least 65\)/)
  assert.is(boundsViolation(JSON.parse(wideText(MAX_JSON_MEMBERS))), null)
  assert.is(boundsViolation(JSON.parse(wideText(MAX_JSON_MEMBERS + 1)))?.limit, 'members')
  assert.is(boundsViolation('a scalar'), null)
  // 200,000 levels: no recursion anywhere.
  assert.is(boundsViolation(JSON.parse(deepText(200_000, 'mixed')))?.limit, 'depth')
  assert.match(left(parseBoundedJson(deepText(6000))), /nested deeper than 64/)
  assert.match(left(decodeJson(t.unknown, deepText(6000))), /nested deeper than 64/)
  assert.ok(E.isRight(decodeJson(t.unknown, '{"a":[1,2,{"b":null}]}')))
})

const shapes: Shape[] = ['array', 'object', 'mixed']
const PLACES: Array<{ name: string; event: (raw: string) => Parameters<typeof sealRawLine>[0] }> = [
  {
    name: 'a note text',
    event: () => ({ type: 'NoteRecorded', version: 2, actor: 'operator', data: { text: DEEP, format: 'plain' } })
  },
  {
    name: 'a member of data',
    event: () => ({
      type: 'NoteRecorded',
      version: 2,
      actor: 'operator',
      data: { text: 'x', format: 'plain', extra: DEEP }
    })
  },
  { name: 'data itself', event: () => ({ type: 'CaptureRecorded', version: 1, actor: 'system', data: DEEP }) },
  {
    name: 'the actor',
    event: () => ({ type: 'NoteRecorded', version: 2, actor: DEEP, data: { text: 'x', format: 'plain' } })
  },
  {
    name: 'an extra envelope member',
    event: () => ({
      type: 'NoteRecorded',
      version: 2,
      actor: 'operator',
      data: { text: 'x', format: 'plain' },
      envelope: { extra: DEEP }
    })
  },
  {
    name: 'a capture reference',
    event: () => ({
      type: 'ModelResponded',
      version: 2,
      actor: 'model',
      data: { turn: 1, raw: { digest: DEEP, size: 1 }, provenance: null }
    })
  }
]

bounds('any deep value anywhere in an envelope is EVENT_MALFORMED naming the depth, and the rules never see it', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: MAX_JSON_DEPTH, max: 8000 }),
      fc.constantFrom(...shapes),
      fc.constantFrom(...PLACES),
      (depth, shape, place) => {
        const raw = deepText(depth, shape)
        const { line } = sealRawLine(place.event(raw), 1, genesis, AT, raw)
        const checked = checkLine(line, { seq: 1, prev: genesis, lineNo: 1 })
        assert.is(checked.findings.length, 1, place.name)
        const f = checked.findings[0]
        assert.is(f?.code, 'EVENT_MALFORMED', place.name)
        assert.match(f?.message ?? '', /nested deeper than 64 levels/)
        assert.is(checked.event, undefined)
      }
    ),
    { numRuns: 60 }
  )
})

bounds('a deep model answer is refused as too deep (not as lone surrogates); a deep query is QUERY_INVALID', () => {
  for (const [state, phase] of [
    ['INTERPRETING', 'interpretation'],
    ['INVESTIGATING', 'investigation']
  ] as const)
    for (const shape of shapes) {
      const s = { ...ruleFold().state(), state, openTurn: { turn: 1, phase } }
      const d = right(decideAnswer(s, { turn: 1, raw: deepText(6000, shape), planId: 'P1' }, new Date(AT)))
      const rejected = d.find((e) => e.type === 'ModelResponseRejected')?.data as { code: string; message: string }
      assert.is(rejected.code, 'MODEL_ANSWER_INVALID')
      assert.match(rejected.message, /nested deeper than 64 levels/)
    }
  for (const shape of shapes) {
    const q = left(decodeQuery({ kind: 'source.read', path: JSON.parse(deepText(5000, shape)) }))
    assert.is(q.code, 'QUERY_INVALID')
    assert.match(q.message, /nested deeper than 64 levels/)
  }
})

bounds.run()
