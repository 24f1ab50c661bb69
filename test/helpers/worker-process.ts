/**
 * A fleet worker for the queue tests (run as a child with node):
 *   node worker-process.js STORE_URL PROFILE WORKER LEASE_MS TURN_DELAY_MS
 * Runs `work()` over the store until nothing is runnable, with a model that answers by turn
 * (interpretation, one database query, a hypothesis citing it, a conclusion) after TURN_DELAY_MS.
 * Prints one line per worker event: `<epoch ms> <kind> <case id> [code]`; exits 0 when idle.
 */
import { writeSync } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { work } from '../../src/investigation/worker.js'
import { latestEvidence } from '../../src/investigation/scripted-model.js'
import type { ModelFn } from '../../src/investigation/loop.js'
import { SMART_QUERY } from './investigation.js'

const [url, profileFile, worker, leaseText, delayText] = process.argv.slice(2)
if (url === undefined || profileFile === undefined || worker === undefined) {
  process.stderr.write('usage: worker-process.js STORE_URL PROFILE WORKER LEASE_MS TURN_DELAY_MS\n')
  process.exit(2)
}
const delay = Number(delayText ?? '0')

/**
 * Answers from what the prompt shows (not the turn number: a worker killed mid-turn leaves a turn
 * without an answer), so one model serves every case: the interpretation, a query until there is
 * evidence, a hypothesis citing it, then the conclusion.
 */
export const fleetModel =
  (delayMs: number): ModelFn =>
  async ({ prompt, phase }) => {
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs))
    if (phase === 'interpretation')
      return JSON.stringify({
        interpretation: { summary: 'Netting a wild wolpertinger should give an item; the creature despawns instead.' }
      })
    const evidence = latestEvidence(prompt)
    if (evidence === null)
      return JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: SMART_QUERY } })
    if (!/^ {2}H1 \[/m.test(prompt))
      return JSON.stringify({
        next: {
          kind: 'hypothesis',
          action: 'propose',
          statement: 'The SmartAI of creature 23487 despawns it on the net spell hit.',
          evidence: [evidence]
        }
      })
    return JSON.stringify({
      next: {
        kind: 'conclusion',
        summary: 'The despawn races the item reward.',
        hypotheses: ['H1'],
        evidence: [evidence]
      }
    })
  }

const profile = await loadProfile(profileFile)()
if (E.isLeft(profile)) {
  process.stderr.write(`profile: ${JSON.stringify(profile.left)}\n`)
  process.exit(1)
}
const settings = settingsOf(profile.right)
if (E.isLeft(settings)) process.exit(1)
const store = await openSqlStore(url, { poolSize: 3 })
const research = createProjectResearch(profile.right)
const line = (text: string): void => {
  writeSync(1, `${Date.now()} ${text}\n`)
}
const summary = await work({
  store,
  model: fleetModel(delay),
  research,
  worker,
  leaseMs: Number(leaseText ?? '5000'),
  pollMs: 100,
  settings: settings.right,
  untilIdle: true,
  failureBackoffMs: 2000,
  onEvent: (e) => {
    if (e.kind === 'claimed' || e.kind === 'released') line(`${e.kind} ${e.case_id}`)
    else if (e.kind === 'failed') line(`failed ${e.case_id} ${e.code}`)
    else if (e.kind === 'step' && e.step.kind === 'turn') line(`turn ${e.case_id} ${e.step.turn}`)
  }
})
line(`summary ${summary.claims} ${summary.advanced} ${summary.failures.length}`)
await research.close()
await store.close()
process.exit(0)
