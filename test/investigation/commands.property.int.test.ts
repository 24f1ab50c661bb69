/**
 * Property: whatever sequence of typed commands a controller or an operator sends (valid or not,
 * in any order, with a model that answers anything or fails), every case the library writes
 * verifies with no finding at all, under --strict: the deciders only ever produce what the rules allow,
 * and every rule applies to what they write.
 * Commands may be refused (a coded failure); none may throw or break the case.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { openCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { queryInCase } from '../../src/fp.js'
import { advance } from '../../src/fp.js'
import { recordFeedback, resumeCase, startInvestigation } from '../../src/fp.js'
import { addAttachment, cancelPlan, recordNote, topUpBudget } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import type { ModelFn } from '../../src/investigation/loop.js'
import { isFailure } from '../../src/failures/failure.js'
import { writeWorld, SMART_QUERY } from '../helpers/investigation.js'
import { right, tempDir } from '../helpers/fs.js'

const profile = right(await loadProfile(writeWorld(tempDir('prop-world')))())
const research = createProjectResearch(profile)
const settings = right(settingsOf(profile))
const config = right(enrichmentConfig(profile))

/** Answers a model might give; `E?` is replaced by an evidence id the prompt shows (or E99). */
const ANSWERS = [
  JSON.stringify({ interpretation: { summary: 'netted creatures vanish' } }),
  JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: SMART_QUERY } }),
  JSON.stringify({
    next: {
      kind: 'tool',
      operation: 'project.query',
      arguments: { kind: 'database.count', table: 'quest_template', filters: [] }
    }
  }),
  JSON.stringify({
    next: {
      kind: 'tool',
      operation: 'project.query',
      arguments: {
        kind: 'database.rows',
        table: 'account_secrets',
        columns: ['secret'],
        filters: [],
        offset: 0,
        limit: 1
      }
    }
  }),
  JSON.stringify({
    next: { kind: 'hypothesis', action: 'propose', statement: 'the SmartAI despawns first', evidence: ['E?'] }
  }),
  JSON.stringify({
    next: {
      kind: 'hypothesis',
      action: 'update',
      hypothesis_id: 'H1',
      status: 'supported',
      evidence: ['E?'],
      note: 'n'
    }
  }),
  JSON.stringify({ next: { kind: 'lab_test', description: 'net one on the test realm' } }),
  JSON.stringify({ next: { kind: 'conclusion', summary: 'done', hypotheses: ['H1'], evidence: ['E?'] } }),
  JSON.stringify({ next: { kind: 'conclusion', summary: 'done', hypotheses: [], evidence: [] } }),
  'not json at all',
  '{"next": {"kind": "tool", "operation": "shell.exec", "arguments": {}}}',
  '{"interpretation": {"summary": "\\ud800"}}',
  'THROW'
] as const

const modelOf = (picks: readonly number[]): ModelFn => {
  let i = 0
  return async ({ prompt }) => {
    const answer = ANSWERS[(picks[i++ % Math.max(1, picks.length)] ?? 0) % ANSWERS.length] as string
    if (answer === 'THROW') throw new Error('provider returned 503')
    const shown = /Latest result (E\d+)/.exec(prompt)?.[1] ?? /\b(E\d+) /.exec(prompt)?.[1] ?? 'E99'
    return answer.replace('E?', shown)
  }
}

type Command =
  | { readonly kind: 'note'; readonly author: 'operator' | 'controller' }
  | { readonly kind: 'attachment' }
  | { readonly kind: 'prepare'; readonly quest: number }
  | { readonly kind: 'start' }
  | { readonly kind: 'advance'; readonly picks: readonly number[]; readonly manualRetry: boolean }
  | { readonly kind: 'query'; readonly id: number; readonly which: number }
  | { readonly kind: 'feedback'; readonly request: string }
  | { readonly kind: 'resume'; readonly manualRetry: boolean }
  | { readonly kind: 'cancel' }
  | { readonly kind: 'top-up'; readonly amount: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('note' as const),
    author: fc.constantFrom('operator' as const, 'controller' as const)
  }),
  fc.constant({ kind: 'attachment' as const }),
  fc.record({ kind: fc.constant('prepare' as const), quest: fc.constantFrom(11117, 424242) }),
  fc.constant({ kind: 'start' as const }),
  fc.record({
    kind: fc.constant('advance' as const),
    picks: fc.array(fc.nat(ANSWERS.length - 1), { minLength: 1, maxLength: 6 }),
    manualRetry: fc.boolean()
  }),
  fc.record({ kind: fc.constant('query' as const), id: fc.nat(3), which: fc.nat(2) }),
  fc.record({ kind: fc.constant('feedback' as const), request: fc.constantFrom('L1', 'L2', 'X') }),
  fc.record({ kind: fc.constant('resume' as const), manualRetry: fc.boolean() }),
  fc.constant({ kind: 'cancel' as const }),
  fc.record({ kind: fc.constant('top-up' as const), amount: fc.integer({ min: -1, max: 3 }) })
)

const QUERIES = [
  SMART_QUERY,
  { kind: 'database.count', table: 'creature_template', filters: [] },
  { kind: 'database.rows', table: 'account_secrets', columns: ['secret'], filters: [], offset: 0, limit: 1 }
]

const run = async (dir: string, c: Command, env: ReturnType<typeof fixedEnv>): Promise<E.Either<unknown, unknown>> => {
  switch (c.kind) {
    case 'note':
      return recordNote(dir, { text: 'a note', author: c.author, env })()
    case 'attachment':
      return addAttachment(dir, { name: 'log.txt', bytes: Buffer.from('log line\n'), env })()
    case 'prepare':
      return prepareRevision(
        dir,
        research,
        config,
        { report: `quest ${c.quest} is broken`, entities: [{ type: 'quest', id: c.quest }] },
        { env }
      )()
    case 'start':
      return startInvestigation(dir, { settings, env })()
    case 'advance':
      return advance(dir, {
        model: modelOf(c.picks),
        research,
        env,
        maxTurns: c.picks.length,
        manualRetry: c.manualRetry
      })()
    case 'query':
      return queryInCase(dir, research, QUERIES[c.which], `q-${c.id}`, { env })()
    case 'feedback':
      return recordFeedback(dir, c.request, 'observed on the test realm', { env })()
    case 'resume':
      return resumeCase(dir, { manualRetry: c.manualRetry, env })()
    case 'cancel':
      return cancelPlan(dir, { reason: 'the operator stops this query', env })()
    case 'top-up':
      return topUpBudget(dir, { amount: c.amount, reason: 'more room', env })()
    default: {
      const _never: never = c
      return _never
    }
  }
}

const property = suite('typed commands in any order')

property('always leave a case that verifies with no finding; refusals are coded failures', async () => {
  let cases = 0
  let refused = 0
  const states = new Set<string>()
  // Most runs begin as a controller would (prepare, start, advance); the rest in any order.
  const begin = fc.oneof(
    { weight: 1, arbitrary: fc.constant<Command[]>([]) },
    {
      weight: 3,
      arbitrary: fc.constant<Command[]>([
        { kind: 'prepare', quest: 11117 },
        { kind: 'start' },
        { kind: 'advance', picks: [0], manualRetry: false }
      ])
    }
  )
  await fc.assert(
    fc.asyncProperty(begin, fc.array(command, { minLength: 1, maxLength: 14 }), async (prefix, rest) => {
      const commands = [...prefix, ...rest]
      const dir = path.join(tempDir('prop'), 'case')
      const env = fixedEnv('2026-11-30T12:00:00.000Z', 'p')
      right(await initCase({ dir, env })())
      for (const c of commands) {
        const r = await run(dir, c, env)
        if (E.isLeft(r)) {
          refused++
          assert.ok(isFailure(r.left), `a refusal is a coded failure: ${JSON.stringify(r.left)}`)
          assert.not.ok(
            ['RULE_VIOLATION', 'INTERNAL_ERROR', 'CASE_CORRUPT'].includes((r.left as { code: string }).code),
            `${c.kind}: ${JSON.stringify(r.left)}`
          )
        }
      }
      // Under --strict: every rule applied to every event (no version or missing binding in the way).
      const report = right(await verifyCase(dir, { strict: true })())
      assert.equal(report.findings, [], JSON.stringify(commands))
      cases++
      states.add(right(await openCase(dir)()).cursor.state.state)
    }),
    fcOptions(Number(process.env['PROP_RUNS'] ?? 60))
  )
  assert.ok(cases >= 60)
  assert.ok(refused > 0, 'the runs include refused commands')
  assert.ok(states.size >= 5, `the runs reach several lifecycle states: ${[...states].join(', ')}`)
})

property.after(async () => research.close())
property.run()
