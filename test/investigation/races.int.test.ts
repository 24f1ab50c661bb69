/**
 * Two writers racing on one case: two loops advancing it, two operators recording feedback, a
 * controller on a case a worker has leased. The loser always gets a retryable conflict
 * (GENERATION_CONFLICT, CASE_LOCKED, CASE_LEASED), never a rule violation or a command id
 * conflict; the documented retry policy (re-read and retry a retryable failure) then finishes
 * the work; the case verifies. On a directory, PostgreSQL and a private MariaDB.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { failureKind, type Failure } from '../../src/failures/failure.js'
import { initCase } from '../../src/fp.js'
import { verifyAt } from '../../src/fp.js'
import type { CaseAt } from '../../src/adapters/case-store/store.js'
import { loadProfile } from '../../src/fp.js'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { advance } from '../../src/fp.js'
import type { AdvanceResult } from '../../src/commands/lifecycle-commands.js'
import { recordFeedback, startInvestigation } from '../../src/fp.js'
import { recordNote } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import type { ModelFn } from '../../src/investigation/model-fn.js'
import { writeWorld } from '../helpers/investigation.js'
import { investigationBrain } from '../helpers/model-endpoint.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const profile = right(await loadProfile(writeWorld(tempDir('races-world')))())
const research = createProjectResearch(profile)
const settings = right(settingsOf(profile))
const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []

const RETRYABLE = new Set(['GENERATION_CONFLICT', 'CASE_LOCKED', 'CASE_LEASED'])

/** A model that thinks for a while, then answers from the prompt. */
const slowModel =
  (ms: number): ModelFn =>
  async ({ prompt }) => {
    await new Promise((r) => setTimeout(r, ms))
    return investigationBrain(prompt)
  }

/** The documented retry policy: a retryable failure is re-read and retried; anything else is final. */
const withRetries = async <A>(
  call: () => Promise<E.Either<Failure, A>>,
  attempts = 50
): Promise<{ result: E.Either<Failure, A>; conflicts: string[] }> => {
  const conflicts: string[] = []
  for (let i = 1; ; i++) {
    const r = await call()
    if (E.isRight(r) || failureKind(r.left.code) !== 'retryable' || i >= attempts) return { result: r, conflicts }
    conflicts.push(r.left.code)
    await new Promise((res) => setTimeout(res, 5 + Math.random() * 20))
  }
}

type Where = 'directory' | 'postgres' | 'mariadb'
const caseIn = async (where: Where, id: string): Promise<CaseAt> => {
  let at: CaseAt
  if (where === 'directory') {
    const dir = path.join(tempDir('races'), id)
    right(await initCase({ dir, caseId: id })())
    at = dir
  } else {
    const t = where === 'postgres' ? await postgresStore('races') : await maria.store('races')
    made.push(t)
    await migrateStore(t.url, { environment: t.environment })
    const store = await openSqlStore(t.url, { environment: t.environment })
    opened.push(store)
    await store.create(id, { caseId: id })
    at = { store, caseId: id }
  }
  right(
    await prepareRevision(
      at,
      research,
      right(enrichmentConfig(profile)),
      { report: 'Quest 11117: wolpertingers vanish when netted.', entities: [{ type: 'quest', id: 11117 }] },
      {}
    )()
  )
  right(await startInvestigation(at, { settings })())
  return at
}

for (const where of ['directory', 'postgres', 'mariadb'] as const) {
  const test = suite(`races on a ${where} case`)

  test('two loops advance one case at once: the loser gets a retryable conflict, never a rule violation; retrying concludes; the case verifies', async () => {
    const seen = new Set<string>()
    for (let trial = 0; trial < 4; trial++) {
      const at = await caseIn(where, `case-race-${trial}`)
      const run = (ms: number): Promise<{ result: E.Either<Failure, AdvanceResult>; conflicts: string[] }> =>
        withRetries(() => advance(at, { model: slowModel(ms), research })())
      const [a, b] = await Promise.all([run(20 + trial * 7), run(25)])
      for (const r of [a, b]) {
        for (const c of r.conflicts) {
          assert.ok(RETRYABLE.has(c), c)
          seen.add(c)
        }
        assert.ok(E.isRight(r.result), JSON.stringify(E.isLeft(r.result) ? r.result.left : null))
        if (E.isRight(r.result)) assert.is(r.result.right.state, 'CONCLUDED')
      }
      const v = right(await verifyAt(at)())
      assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
    }
    assert.ok(seen.size > 0, 'the writers did race (at least one conflict over the trials)')
  })

  test('two operators record different feedback for one lab request at once: one wins, the other a retryable conflict; its retry is refused for what it is', async () => {
    const at = await caseIn(where, 'case-feedback')
    const model: ModelFn = async ({ phase }) =>
      phase === 'interpretation'
        ? investigationBrain('Phase: interpretation')
        : JSON.stringify({ next: { kind: 'lab_test', description: 'Net a wild wolpertinger on the test realm.' } })
    const r = right(await advance(at, { model, research })())
    assert.is(r.reason, 'AWAITING_TEST_FEEDBACK')
    const outcomes = await Promise.all(
      ['it despawns', 'it stays'].map((text, i) => recordFeedback(at, 'L1', text, { commandId: `feedback-op-${i}` })())
    )
    const wins = outcomes.filter(E.isRight)
    const losses = outcomes.filter(E.isLeft).map((o) => o.left)
    assert.is(wins.length, 1)
    assert.is(losses.length, 1)
    assert.ok(
      losses.every((f) => RETRYABLE.has(f.code) || f.code === 'LAB_FEEDBACK_RECORDED'),
      JSON.stringify(losses)
    )
    const retried = left(await recordFeedback(at, 'L1', 'it stays', { commandId: 'feedback-op-retry' })())
    assert.is(retried.code, 'LAB_FEEDBACK_RECORDED')
    assert.ok(right(await verifyAt(at)()).valid)
  })
  test.run()
}

const leases = suite('leases on store cases')
leases(
  "a controller's advance and an operator's note on a case a worker has leased: CASE_LEASED (retryable), nothing written",
  async () => {
    for (const kind of ['postgres', 'mariadb'] as const) {
      const at = await caseIn(kind, 'case-leased')
      if (typeof at === 'string') throw new Error('a store case')
      const store = at.store as SqlStore
      const lease = await store.leaseCase('case-leased', 'worker-a:1', 60_000)
      const before = (await store.verify('case-leased')).head
      const adv = left(await advance(at, { model: slowModel(1), research })())
      assert.is(adv.code, 'CASE_LEASED')
      assert.is(adv.data['worker'], 'worker-a:1')
      assert.is(failureKind(adv.code), 'retryable')
      assert.is(left(await recordNote(at, { text: 'while leased' })()).code, 'CASE_LEASED')
      assert.equal((await store.verify('case-leased')).head, before)
      // The holder writes under its lease; after the release everyone may.
      assert.is(right(await advance(at, { model: slowModel(1), research, lease, maxTurns: 1 })()).turns, 1)
      assert.ok(await store.release(lease))
      assert.is(right(await advance(at, { model: slowModel(1), research })()).state, 'CONCLUDED')
    }
  }
)

leases.after(async () => {
  for (const s of opened) await s.close()
  for (const t of made) await t.drop()
  await research.close()
  await maria.stop()
})

leases.run()
