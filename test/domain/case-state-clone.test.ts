/**
 * cloneCaseState copies what evolve mutates in place and shares the rest: a copy taken at any
 * point must stay equal to a deep copy taken at the same point, however both sides evolve later.
 * snapshotCaseState shares every part, and the state copies a part on its first change after it:
 * a snapshot must stay equal to a deep copy taken at the same point while the state evolves on,
 * and the state must end as a fold without snapshots does. forkCaseState is the mirror (the fork
 * copies, the state it was taken from stays): as a writer uses it, a fork taken before each event
 * evolves on while the state it was taken from stays equal to its deep copy, the forks of forks end
 * as a plain fold does, and snapshots taken of a fork (the rule fold's) stay as they were.
 * Checked on the valid example cases and on a synthetic history that reaches every in-place
 * mutation of the fold (evidence repeats, revisions, hypotheses and their evidence lists, lab
 * feedback, token counts, the pending plan's reservation, the research counters and maps).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync } from 'node:fs'
import * as path from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { cloneCaseState, forkCaseState, initCaseState, snapshotCaseState } from '../../src/domain/case-state.js'
import { evolve } from '../../src/domain/case-evolve.js'
import type { RecordedEvent } from '../../src/events/chain.js'
import { openVba } from '../../src/index.js'

const ref = (c: string, size = 10) => ({ digest: `sha256:${c.repeat(64)}`, size })
let seq = 0
const ev = (type: string, data: Record<string, unknown>, actor = 'controller'): RecordedEvent =>
  ({
    seq: ++seq,
    id: `e${seq}`,
    at: new Date(Date.UTC(2026, 11, 1, 0, 0, seq)).toISOString(),
    actor,
    type,
    data,
    command_id: `c${seq}`,
    prev: 'x',
    hash: 'y',
    type_version: 1
  }) as unknown as RecordedEvent

const capture = (id: string, c: string, reservation: string, repeat: boolean) =>
  ev('CaptureRecorded', {
    reservation_id: reservation,
    evidence_id: id,
    capture: ref(c),
    kind: 'database.count',
    request_digest: `sha256:${c.repeat(64)}`,
    repeat
  })

const synthetic = (): RecordedEvent[] => {
  seq = 0
  return [
    ev('InputsRecorded', { revision: 1, inputs_digest: 'd', entities: [], report: ref('a') }, 'operator'),
    ev('EnrichmentCaptured', {
      revision: 1,
      evidence_id: 'E1',
      capture: ref('b'),
      kind: 'database.rows',
      request_digest: 'r1',
      repeat: false
    }),
    ev('RevisionCompleted', { revision: 1, facts: ref('f'), fact_count: 2, complete: true, binding: null }),
    ev('InvestigationStarted', { revision: 1, settings: { budget_total: 9, prompt_version: 'v' } }),
    ev('ModelRequested', { turn: 1, phase: 'investigation', prompt: ref('p'), prompt_version: 'v' }),
    ev('ModelResponded', {
      turn: 1,
      raw: ref('q'),
      provenance: {
        kind: 'http',
        model: 'm',
        endpoint: null,
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 }
      }
    }),
    ev('PlanConfirmed', { plan_id: 'P1', turn: 1, operation: 'project.query', arguments: { kind: 'x' } }, 'model'),
    ev('BudgetReserved', {
      reservation_id: 'R1',
      amount: 1,
      plan_id: 'P1',
      request_digest: null,
      requester: null,
      request: null
    }),
    capture('E2', 'c', 'R1', false),
    ev('BudgetConsumed', { reservation_id: 'R1', amount: 1 }),
    ev('PlanConfirmed', { plan_id: 'P2', turn: 2, operation: 'project.query', arguments: { kind: 'x' } }, 'model'),
    ev('BudgetReserved', {
      reservation_id: 'R2',
      amount: 1,
      plan_id: 'P2',
      request_digest: null,
      requester: null,
      request: null
    }),
    capture('E2', 'c', 'R2', true),
    ev('BudgetReleased', { reservation_id: 'R2', amount: 1 }),
    ev('QueryAnsweredFromCase', { plan_id: 'P3', evidence_id: 'E2', capture: ref('c') }),
    ev('HypothesisProposed', { hypothesis_id: 'H1', statement: 's', evidence: ['E1'] }, 'model'),
    ev('HypothesisUpdated', { hypothesis_id: 'H1', status: 'supported', evidence: ['E2'], note: 'n' }, 'model'),
    ev('LabTestRequested', { request_id: 'L1', description: 'd' }, 'model'),
    ev('LabFeedbackRecorded', { request_id: 'L1', feedback: 'f' }, 'operator'),
    ev('ResearchFailed', { reservation_id: 'R3', code: 'SOURCE_UNAVAILABLE', message: 'm', unavailable: true }),
    ev('ModelFailed', { turn: 3, code: 'MODEL_HTTP_ERROR', message: 'm' }),
    ev('BudgetToppedUp', { amount: 3, reason: 'r' }, 'operator'),
    ev('ConclusionRecorded', { summary: 's', hypotheses: ['H1'], evidence: ['E1', 'E2'] }, 'model')
  ]
}

/** At every point, a copy evolved on with the rest, beside the original evolved on: both stay true to deep copies. */
const holds = (events: readonly RecordedEvent[], name: string): void => {
  const s = initCaseState()
  const kept: Array<{ readonly copy: ReturnType<typeof initCaseState>; readonly deep: unknown; readonly at: number }> =
    []
  for (const [i, e] of events.entries()) {
    kept.push({ copy: cloneCaseState(s), deep: structuredClone(s), at: i })
    evolve(s, e)
  }
  for (const k of kept) {
    assert.ok(
      isDeepStrictEqual(k.copy, k.deep),
      `${name}: the copy before event ${k.at} changed as the original evolved`
    )
    // The copy evolved on must not reach into the original's state.
    const before = structuredClone(s)
    for (const e of events.slice(k.at)) evolve(k.copy, e)
    assert.ok(isDeepStrictEqual(s, before), `${name}: evolving the copy from event ${k.at} changed the original`)
    assert.ok(isDeepStrictEqual(k.copy, s), `${name}: the copy evolved to the end is not the state at the end`)
  }
}

/** Snapshots taken before the events `every` picks: each stays as it was, and the state ends as without them. */
const snapshotsHold = (events: readonly RecordedEvent[], name: string, every: (i: number) => boolean): void => {
  const s = initCaseState()
  const plain = initCaseState()
  const kept: Array<{ readonly snap: ReturnType<typeof initCaseState>; readonly deep: unknown; readonly at: number }> =
    []
  for (const [i, e] of events.entries()) {
    if (every(i)) kept.push({ snap: snapshotCaseState(s), deep: structuredClone(s), at: i })
    evolve(s, e)
    evolve(plain, e)
    // the snapshots stay as they were after every event, not only at the end
    for (const k of kept.slice(-3))
      assert.ok(isDeepStrictEqual(k.snap, k.deep), `${name}: the snapshot before event ${k.at} changed at ${i}`)
  }
  for (const k of kept)
    assert.ok(
      isDeepStrictEqual(k.snap, k.deep),
      `${name}: the snapshot before event ${k.at} changed as the state evolved`
    )
  assert.ok(isDeepStrictEqual(s, plain), `${name}: the state with snapshots is not the state without them`)
  // A copy of a snapshotted state is a state of its own: evolving it changes neither.
  const copy = cloneCaseState(s)
  const before = structuredClone(s)
  for (const e of events) evolve(copy, e)
  assert.ok(isDeepStrictEqual(s, before), `${name}: evolving a copy changed the snapshotted state`)
}

/**
 * A writer's forks: before each event a fork of the current state is evolved (its snapshots taken
 * before the events `every` picks) and becomes the current state, or is dropped (every third one,
 * as a refused or lost command's: the event is then folded into a fork taken again). The state a
 * fork was taken from stays as it was; the last state is the plain fold's.
 */
const forksHold = (events: readonly RecordedEvent[], name: string, every: (i: number) => boolean): void => {
  let s = initCaseState()
  const plain = initCaseState()
  const kept: Array<{ readonly state: ReturnType<typeof initCaseState>; readonly deep: unknown; readonly at: number }> =
    []
  for (const [i, e] of events.entries()) {
    kept.push({ state: s, deep: structuredClone(s), at: i })
    if (i % 3 === 2) {
      const dropped = forkCaseState(s)
      for (const x of events.slice(i)) evolve(dropped, x)
    }
    const fork = forkCaseState(s)
    if (every(i)) kept.push({ state: snapshotCaseState(fork), deep: structuredClone(fork), at: i })
    evolve(fork, e)
    evolve(plain, e)
    s = fork
    for (const k of kept.slice(-4))
      assert.ok(isDeepStrictEqual(k.state, k.deep), `${name}: the state kept before event ${k.at} changed at ${i}`)
  }
  for (const k of kept)
    assert.ok(isDeepStrictEqual(k.state, k.deep), `${name}: the state kept before event ${k.at} changed later`)
  assert.ok(isDeepStrictEqual(s, plain), `${name}: the forks evolved to the end are not the plain fold`)
  // A fork evolved to the end from any kept state is that fold too, and leaves the kept state alone.
  for (const k of kept.filter((_, j) => j % 5 === 0)) {
    const fork = forkCaseState(k.state)
    for (const e of events.slice(k.at)) evolve(fork, e)
    assert.ok(
      isDeepStrictEqual(k.state, k.deep),
      `${name}: a fork from event ${k.at} changed the state it was taken from`
    )
  }
}

const snapshotPatterns: ReadonlyArray<readonly [string, (i: number) => boolean]> = [
  ['every event', () => true],
  ['every other event', (i) => i % 2 === 1],
  ['every third event', (i) => i % 3 === 0],
  ['once', (i) => i === 5]
]

test('a synthetic history reaching every in-place mutation of the fold', () => {
  const events = synthetic()
  holds(events, 'synthetic')
  for (const [what, every] of snapshotPatterns) {
    snapshotsHold(events, `synthetic, snapshots ${what}`, every)
    forksHold(events, `synthetic, forks, snapshots ${what}`, every)
  }
  // The history does reach the mutations it is there for.
  const s = initCaseState()
  for (const e of events) evolve(s, e)
  assert.is(s.research.evidence.get('E2')?.repeats, 2)
  assert.is(s.hypotheses.get('H1')?.status, 'supported')
  assert.equal(s.hypotheses.get('H1')?.evidence, ['E1', 'E2'])
  assert.is(s.labRequests.get('L1')?.feedback, 'f')
  assert.is(s.tokens.total, 12)
  assert.is(s.revisions[0]?.completed, true)
})

test('the valid example cases', async () => {
  const root = path.join(process.cwd(), 'case-format', 'examples', 'valid')
  const dirs = readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory())
  assert.ok(dirs.length >= 3)
  const vba = await openVba()
  for (const d of dirs) {
    const events = await vba.cases.events(path.join(root, d.name))
    assert.ok(events.length > 0, d.name)
    holds(events, d.name)
    for (const [what, every] of snapshotPatterns) {
      snapshotsHold(events, `${d.name}, snapshots ${what}`, every)
      forksHold(events, `${d.name}, forks, snapshots ${what}`, every)
    }
  }
  await vba.close()
})

test.run()
