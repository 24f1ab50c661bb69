/**
 * What the loop makes of a real model client's outcomes, against a local OpenAI-compatible
 * endpoint: answers recorded with their provenance and usage; a flaky provider survived by the
 * client's retries; failures that say why; the controller's abort recorded as nothing; RETRY_NOT_YET;
 * a manual retry for the block at the start only; Retry-After carried into the block; the token
 * budget; an oversized command answer rejected and kept; maxTurns validated.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { advance, type AdvanceStep } from '../../src/fp.js'
import { startInvestigation } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { httpModel } from '../../src/investigation/http-model.js'
import { commandModel } from '../../src/investigation/models.js'
import { scriptedModel } from '../../src/investigation/scripted-model.js'
import { lifecycleProjection, type LifecycleView } from '../../src/projections/lifecycle-view.js'
import { appendCommand } from '../../src/testing.js'
import { openCase } from '../../src/fp.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { INVESTIGATION_PROFILE } from '../helpers/investigation.js'
import Database from 'better-sqlite3'
import { writeWorldSqliteWith } from '../../src/demo/world-sqlite.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { startModelEndpoint, type Behaviour } from '../helpers/model-endpoint.js'
import { writeFileSync } from 'node:fs'
import { sha256Digest } from '../../src/events/canonical.js'

const worldDir = tempDir('outcomes-world')
writeWorldSqliteWith(Database, path.join(worldDir, 'world.sqlite'))
writeFileSync(
  path.join(worldDir, 'project.toml'),
  INVESTIGATION_PROFILE.replace('[budget]\ntotal = 4', '[budget]\ntotal = 10')
)
const profile = right(await loadProfile(path.join(worldDir, 'project.toml'))())
const research = createProjectResearch(profile)
const baseSettings = right(settingsOf(profile))

const startedCase = async (settings: InvestigationSettings = baseSettings): Promise<string> => {
  const dir = path.join(tempDir('outcomes'), 'case')
  right(await initCase({ dir, caseId: 'case-outcomes' })())
  right(
    await prepareRevision(
      dir,
      research,
      right(enrichmentConfig(profile)),
      { report: 'Quest 11117: wolpertingers vanish when netted.', entities: [{ type: 'quest', id: 11117 }] },
      {}
    )()
  )
  right(await startInvestigation(dir, { settings })())
  return dir
}
const events = (dir: string): Array<{ type: string; data: Record<string, unknown>; at: string }> =>
  readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown>; at: string })
const lifecycle = async (dir: string): Promise<LifecycleView> =>
  right(await replayCase(dir, [lifecycleProjection])()).views['lifecycle']?.view as LifecycleView
const valid = async (dir: string): Promise<void> => {
  const r = right(await verifyCase(dir)())
  assert.ok(r.valid, JSON.stringify(r.findings.slice(0, 3)))
}

const test = suite('model outcomes in the loop')

test('a flaky provider (429 with Retry-After, 500, garbage) is survived; every answer records the served model, its usage and latency', async () => {
  // Every third request misbehaves, in turn.
  const bad: Behaviour[] = [
    { kind: 'status', status: 429, headers: { 'retry-after': '0' } },
    { kind: 'status', status: 500 },
    { kind: 'garbage' }
  ]
  const ep = await startModelEndpoint((r) =>
    r.n % 3 === 0 ? (bad[(r.n / 3 - 1) % 3] as Behaviour) : { kind: 'answer' }
  )
  try {
    const dir = await startedCase()
    const r = right(
      await advance(dir, { model: httpModel({ url: ep.url, model: 'wolf-7b', backoffMs: 5 }), research })()
    )
    assert.is(r.state, 'CONCLUDED')
    assert.is(r.model, 'wolf-7b-2026-11-01')
    assert.ok(Object.keys(ep.served).length > 1, JSON.stringify(ep.served))
    const answers = events(dir).filter((e) => e.type === 'ModelResponded')
    assert.is(answers.length, r.turns)
    let total = 0
    for (const a of answers) {
      const p = a.data['provenance'] as {
        model: string
        endpoint: string
        usage: { total_tokens: number }
        latency_ms: number
        attempts: number
        finish_reason: string
      }
      assert.is(p.model, 'wolf-7b-2026-11-01')
      assert.is(p.endpoint, ep.url.replace(/\/v1$/, ''))
      assert.ok(p.usage.total_tokens > 0)
      assert.ok(p.latency_ms >= 0)
      assert.is(p.finish_reason, 'stop')
      total += p.usage.total_tokens
    }
    assert.ok(
      answers.some((a) => (a.data['provenance'] as { attempts: number }).attempts > 1),
      'some answer needed a retry'
    )
    assert.is(r.tokens, total)
    const v = await lifecycle(dir)
    assert.equal(v.model, { kind: 'http', name: 'wolf-7b-2026-11-01', endpoint: ep.url.replace(/\/v1$/, '') })
    assert.is(v.tokens.total, total)
    await valid(dir)
  } finally {
    await ep.close()
  }
})

test("the controller's abort is its own outcome: nothing recorded, the case stays as it was, the next call asks again", async () => {
  const ep = await startModelEndpoint((r) => (r.n === 2 ? { kind: 'hang' } : { kind: 'answer' }))
  try {
    const dir = await startedCase()
    right(await advance(dir, { model: httpModel({ url: ep.url, model: 'm' }), research, maxTurns: 1 })())
    const before = await lifecycle(dir)
    const stop = new AbortController()
    setTimeout(() => stop.abort(), 300)
    const r = right(
      await advance(dir, { model: httpModel({ url: ep.url, model: 'm' }), research, signal: stop.signal })()
    )
    assert.ok(r.cancelled)
    assert.is(r.state, 'INVESTIGATING')
    assert.is(r.last_model_failure, null)
    assert.not.ok(
      events(dir).some((e) => e.type === 'ModelFailed'),
      'a cancelled call is not an outage'
    )
    assert.is((await lifecycle(dir)).state, before.state)
    await valid(dir)
    const done = right(await advance(dir, { model: httpModel({ url: ep.url, model: 'm' }), research })())
    assert.is(done.state, 'CONCLUDED')
    await valid(dir)
  } finally {
    await ep.close()
  }
})

test("the controller's abort abandons a model function that ignores the signal: advance returns at once, recording what an honouring one leaves; the late answer or rejection is ignored", async () => {
  const unhandled: unknown[] = []
  const onUnhandled = (e: unknown): void => {
    unhandled.push(e)
  }
  process.on('unhandledRejection', onUnhandled)
  try {
    const types = (dir: string): string[] => events(dir).map((e) => e.type)
    // A model that honours the signal: what a cancelled turn records.
    const honours = await startedCase()
    const stop1 = new AbortController()
    setTimeout(() => stop1.abort(), 50)
    const r1 = right(
      await advance(honours, {
        model: ({ signal }) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')))),
        research,
        signal: stop1.signal
      })()
    )
    assert.ok(r1.cancelled)
    // Deaf models: one answers (validly) long after the abort, one rejects long after it.
    const settled: Array<Promise<void>> = []
    for (const settle of ['answer', 'reject'] as const) {
      const dir = await startedCase()
      const stop = new AbortController()
      setTimeout(() => stop.abort(), 50)
      const began = Date.now()
      const r = right(
        await advance(dir, {
          model: () =>
            new Promise((resolve, reject) => {
              settled.push(
                new Promise((done) =>
                  setTimeout(() => {
                    if (settle === 'answer') resolve('{"interpretation": {"summary": "too late"}}')
                    else reject(new Error('too late'))
                    done()
                  }, 800)
                )
              )
            }),
          research,
          signal: stop.signal
        })()
      )
      assert.ok(Date.now() - began < 500, `advance returned ${Date.now() - began} ms after it began`)
      assert.ok(r.cancelled, settle)
      assert.is(r.state, 'INTERPRETING')
      assert.is(r.last_model_failure, null)
      assert.equal(types(dir), types(honours), settle)
    }
    await Promise.all(settled)
    await new Promise((r) => setTimeout(r, 20))
    assert.equal(unhandled, [])
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
})

test('a provider that keeps failing: the case waits as MODEL_UNAVAILABLE with why; advancing early is RETRY_NOT_YET; a manual retry covers the block at the start only', async () => {
  const ep = await startModelEndpoint(() => ({
    kind: 'status',
    status: 404,
    body: JSON.stringify({ error: { message: 'model not found' } })
  }))
  try {
    const dir = await startedCase()
    const model = httpModel({ url: ep.url, model: 'gone' })
    const r = right(await advance(dir, { model, research })())
    assert.is(r.state, 'BLOCKED')
    assert.is(r.reason, 'MODEL_UNAVAILABLE')
    assert.is(r.last_model_failure?.code, 'MODEL_HTTP_ERROR')
    assert.match(r.last_model_failure?.message ?? '', 'HTTP 404: model not found')
    assert.match((await lifecycle(dir)).last_model_failure?.message ?? '', 'HTTP 404')
    const early = left(await advance(dir, { model, research })())
    assert.is(early.code, 'RETRY_NOT_YET')
    assert.is(early.data['retry_not_before'], r.retry_not_before)
    const n = events(dir).length
    const again = right(await advance(dir, { model, research, manualRetry: true, maxTurns: 20 })())
    assert.is(again.state, 'BLOCKED')
    assert.is(again.turns, 1, 'one manual resume, one failed call, then the new block holds')
    const added = events(dir)
      .slice(n)
      .map(
        (e) =>
          `${e.type}${e.type === 'CheckpointRecorded' ? `:${String(e.data['state'])}:${String(e.data['manual_retry'])}` : ''}`
      )
    assert.equal(added, [
      'CheckpointRecorded:INTERPRETING:true',
      'ModelRequested',
      'ModelFailed',
      'CheckpointRecorded:BLOCKED:false'
    ])
    await valid(dir)
  } finally {
    await ep.close()
  }
})

test("a Retry-After longer than the backoff sets the block's retry time", async () => {
  const ep = await startModelEndpoint(() => ({ kind: 'status', status: 429, headers: { 'retry-after': '3600' } }))
  try {
    const dir = await startedCase()
    const r = right(await advance(dir, { model: httpModel({ url: ep.url, model: 'm', maxAttempts: 1 }), research })())
    assert.is(r.reason, 'MODEL_UNAVAILABLE')
    const failed = events(dir).find((e) => e.type === 'ModelFailed')
    assert.ok(failed !== undefined)
    assert.ok(
      Date.parse(r.retry_not_before ?? '') - Date.parse(failed.at) >= 3_600_000 - 5,
      `${String(r.retry_not_before)} vs ${failed.at}`
    )
    await valid(dir)
  } finally {
    await ep.close()
  }
})

test('the token budget: once the recorded usage reaches [budget] max_tokens the case is EXHAUSTED (TOKEN_BUDGET_EXHAUSTED); a forged request past it breaks budget.tokens', async () => {
  const ep = await startModelEndpoint(() => ({
    kind: 'answer',
    usage: { prompt_tokens: 900, completion_tokens: 100, total_tokens: 1000 }
  }))
  try {
    const dir = await startedCase({ ...baseSettings, max_tokens: 1500 })
    const r = right(await advance(dir, { model: httpModel({ url: ep.url, model: 'm' }), research })())
    assert.is(r.state, 'EXHAUSTED')
    assert.is(r.reason, 'TOKEN_BUDGET_EXHAUSTED')
    assert.is(r.tokens, 2000)
    assert.is(ep.requests.length, 2, 'no model is asked once the limit is reached')
    const v = await lifecycle(dir)
    assert.equal(v.tokens, { prompt: 1800, completion: 200, total: 2000, answers_with_usage: 2, limit: 1500 })
    await valid(dir)
    // A writer past the limit: a model request is refused by the rules, nothing written.
    const dir2 = await startedCase({ ...baseSettings, max_tokens: 1500 })
    right(await advance(dir2, { model: httpModel({ url: ep.url, model: 'm' }), research, maxTurns: 2 })())
    const h = right(await openCase(dir2)())
    const prompt = Buffer.from('forged prompt')
    const refused = left(
      await appendCommand(h, {
        commandId: 'forged-request',
        expectedGeneration: h.cursor.seq,
        objects: [prompt],
        events: [
          {
            type: 'ModelRequested',
            actor: 'controller',
            data: {
              turn: h.cursor.state.turn + 1,
              phase: 'investigation',
              prompt: { digest: sha256Digest(prompt), size: prompt.length, media_type: 'text/plain' },
              prompt_version: 'investigation_project_v1',
              prompt_chars: prompt.length
            }
          }
        ]
      })()
    )
    assert.is(refused.code, 'RULE_VIOLATION')
    assert.match(refused.message, 'budget.tokens')
  } finally {
    await ep.close()
  }
})

test('a command answering more than it may is an invalid answer, kept cut (not an outage); the program and exit status are recorded', async () => {
  const dir = await startedCase()
  const r = right(
    await advance(dir, {
      model: commandModel('yes "{\\"x\\": 1}" | head -c 3000000', { maxAnswerBytes: 300_000 }),
      research,
      maxTurns: 1
    })()
  )
  assert.is(r.state, 'INTERPRETING')
  const log = events(dir)
  const rejected = log.find((e) => e.type === 'ModelResponseRejected')
  assert.is(rejected?.data['code'], 'MODEL_ANSWER_TOO_LARGE')
  const answer = log.find((e) => e.type === 'ModelResponded')
  assert.is((answer?.data['raw'] as { size: number }).size, 300_000, 'the first maxAnswerBytes are kept')
  const p = answer?.data['provenance'] as {
    kind: string
    program: string
    finish_reason: string
    exit_status: number | null
  }
  assert.equal([p.kind, p.program, p.finish_reason, p.exit_status], ['command', 'yes', 'length', null])
  const ok = right(
    await advance(dir, {
      model: commandModel('printf \'{"interpretation": {"summary": "ok"}}\''),
      research,
      maxTurns: 1
    })()
  )
  assert.is(ok.state, 'INVESTIGATING')
  const last = events(dir)
    .filter((e) => e.type === 'ModelResponded')
    .pop()
  assert.equal(
    [
      (last?.data['provenance'] as { program: string }).program,
      (last?.data['provenance'] as { exit_status: number }).exit_status
    ],
    ['printf', 0]
  )
  await valid(dir)
})

test("a model function's oversized answer is stored cut at 1 MiB (finish reason length), at a character's boundary, and rejected as too large as before", async () => {
  const dir = await startedCase()
  const huge = [
    'x'.repeat(3 << 20),
    `{${'é'.repeat(1 << 20)}`, // 2 bytes each, cut after the opening brace: at a character's boundary
    `\ud800${'x'.repeat(3 << 20)}` // a lone surrogate: stored as UTF-16LE
  ]
  const model = async ({ turn }: { turn: number }) => huge[turn - 1] ?? ''
  const outcomes: string[] = []
  const onStep = (s: AdvanceStep): void => {
    if (s.kind === 'turn') outcomes.push(s.outcome)
  }
  // Two invalid answers in a row block the case (max_invalid_responses = 2); a manual retry asks the third.
  const r = right(await advance(dir, { model, research, onStep })())
  assert.equal([r.turns, r.reason], [2, 'INVALID_LLM_RESPONSES'])
  right(await advance(dir, { model, research, manualRetry: true, maxTurns: 1, onStep })())
  // The recorded rejection counts the stored prefix; the operator is told the size the model gave.
  assert.equal(outcomes, [
    `rejected (MODEL_ANSWER_TOO_LARGE): the answer has ${1 << 20} characters, over 200000; the model's whole answer has ${3 << 20} characters (${3 << 20} bytes); only its first ${1 << 20} characters are stored`,
    `rejected (MODEL_ANSWER_TOO_LARGE): the answer has ${1 << 19} characters, over 200000; the model's whole answer has ${(1 << 20) + 1} characters (${(2 << 20) + 1} bytes); only its first ${1 << 19} characters are stored`,
    `rejected (MODEL_ANSWER_TOO_LARGE): the answer has ${1 << 19} characters, over 200000; the model's whole answer has ${(3 << 20) + 1} characters (${((3 << 20) + 1) * 2} bytes); only its first ${1 << 19} characters are stored`
  ])
  const log = events(dir)
  const rejected = log.filter((e) => e.type === 'ModelResponseRejected').map((e) => e.data['code'])
  assert.equal(rejected, ['MODEL_ANSWER_TOO_LARGE', 'MODEL_ANSWER_TOO_LARGE', 'MODEL_ANSWER_TOO_LARGE'])
  const answers = log.filter((e) => e.type === 'ModelResponded')
  const stored = answers.map((a) => a.data['raw'] as { size: number; media_type: string; digest: string })
  assert.equal(
    stored.map((s) => s.size),
    [1 << 20, (1 << 20) - 1, 1 << 20]
  )
  assert.is(stored[2]?.media_type, 'text/plain; charset=utf-16le')
  for (const a of answers) assert.is((a.data['provenance'] as { finish_reason: string }).finish_reason, 'length')
  const hex = (stored[1]?.digest ?? '').slice('sha256:'.length)
  const second = readFileSync(path.join(dir, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), 'utf8')
  assert.ok(second.startsWith('{é') && !second.includes('\ufffd'), 'no character is split')
  await valid(dir)
})

test('maxTurns is a whole number from 1 (0, -1, 1.5 and NaN are refused before anything runs)', async () => {
  const dir = await startedCase()
  for (const maxTurns of [0, -1, 1.5, Number.NaN, 10_001]) {
    const f = left(await advance(dir, { model: scriptedModel([]).model, research, maxTurns })())
    assert.is(f.code, 'INVALID_ARGUMENT', String(maxTurns))
  }
  assert.is(events(dir).filter((e) => e.type === 'ModelRequested').length, 0)
})

test.run()
