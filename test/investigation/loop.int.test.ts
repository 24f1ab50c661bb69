/**
 * Whole investigations driven by a scripted model (no network, no paid calls) against a real
 * SQLite world snapshot and a real repository.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, rmSync } from 'node:fs'
import * as path from 'node:path'

import { initCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import type { Profile } from '../../src/adapters/config/profile.js'
import { loadProfile } from '../../src/fp.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { lifecycleProjection, type LifecycleView } from '../../src/projections/lifecycle-view.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { advance, nextPrompt } from '../../src/fp.js'
import { recordFeedback, resumeCase, startInvestigation } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { latestEvidence, scriptedModel } from '../../src/investigation/scripted-model.js'
import { sqliteProfile } from '../helpers/world.js'
import { buildTestRepo } from '../helpers/git-repo.js'
import { repoRoot, right, left, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import { limitExceeded } from '../helpers/clock.js'

const repo = buildTestRepo()
const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
const profileFile = sqliteProfile(
  `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n${adapter}\n[loop]\nmax_invalid_responses = 2\nretry_delay_ms = 3600000\n[budget]\ntotal = 6\n`
)
const profile: Profile = right(await loadProfile(profileFile)())
const research = createProjectResearch(profile, { openSource: openSourceResearch })

const QUERY_STARTER = JSON.stringify({
  next: {
    kind: 'tool',
    operation: 'project.query',
    arguments: {
      kind: 'database.rows',
      table: 'creature_queststarter',
      columns: ['id', 'quest'],
      filters: [{ column: 'quest', operator: 'eq', value: 11117 }],
      offset: 0,
      limit: 5
    }
  }
})
const INTERPRET = JSON.stringify({
  interpretation: { summary: 'Quest 11117 cannot be completed: the wolpertingers are not caught.' }
})

/** A prepared case (revision 1 enriched) with the investigation started. */
const startedCase = async (env = fixedEnv('2026-11-30T10:00:00.000Z', 'lp')): Promise<string> => {
  const dir = path.join(tempDir('inv'), 'case')
  right(await initCase({ dir, caseId: 'case-loop', env })())
  right(
    await prepareRevision(
      dir,
      research,
      right(enrichmentConfig(profile)),
      { report: 'Players cannot catch wild wolpertingers for quest 11117.', entities: [{ type: 'quest', id: 11117 }] },
      { env }
    )()
  )
  right(await startInvestigation(dir, { settings: right(settingsOf(profile)), env })())
  return dir
}
const lifecycle = async (dir: string): Promise<LifecycleView> =>
  right(await replayCase(dir, [lifecycleProjection])()).views['lifecycle']?.view as LifecycleView

const loop = suite('the investigation loop')

loop('happy path: interpretation, a query, a hypothesis citing it, a conclusion', async () => {
  const dir = await startedCase()
  const script = scriptedModel([
    INTERPRET,
    QUERY_STARTER,
    (p) =>
      JSON.stringify({
        next: {
          kind: 'hypothesis',
          action: 'propose',
          statement: 'Driz starts the quest; the net spell script is the suspect.',
          evidence: [latestEvidence(p)]
        }
      }),
    (p) =>
      JSON.stringify({
        next: {
          kind: 'conclusion',
          summary: 'The starter is configured; investigate the net spell script next.',
          hypotheses: ['H1'],
          evidence: [latestEvidence(p)]
        }
      })
  ])
  const r = right(await advance(dir, { model: script.model, research })())
  assert.is(r.state, 'CONCLUDED')
  assert.is(r.turns, 4)
  const v = await lifecycle(dir)
  assert.is(v.hypotheses[0]?.id, 'H1')
  assert.equal(v.budget, { total: 6, topped_up: 0, reserved: 1, consumed: 1, released: 0, held: 0, remaining: 5 })
  assert.ok(v.conclusion !== null)
  // every exchange is recorded: prompts and raw answers as objects, with the prompt version
  const summary = right(await replayCase(dir, defaultProjections())()).views['summary']?.view as {
    events_by_type: Record<string, number>
  }
  assert.is(summary.events_by_type['ModelRequested'], 4)
  assert.is(summary.events_by_type['ModelResponded'], 4)
  assert.ok(right(await verifyCase(dir)()).valid)
  // the stable part of the prompt is byte-identical across turns
  const stable = (p: string) => p.slice(0, p.indexOf('=== end of contract ===') + 23)
  assert.ok(script.prompts.every((p) => stable(p) === stable(script.prompts[0] ?? '')))
  assert.match(script.prompts[0] ?? '', 'Facts of the prepared revision')
  // stored prompts are the exact bytes the model received, with their version
  const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(
      (l) =>
        JSON.parse(l) as { type: string; data: { prompt?: { digest: string; size: number }; prompt_version?: string } }
    )
  const requests = events.filter((e) => e.type === 'ModelRequested')
  for (const [i, e] of requests.entries()) {
    const ref = e.data.prompt
    if (ref === undefined) throw new Error('prompt ref')
    const hex = ref.digest.slice(7)
    assert.is(
      readFileSync(path.join(dir, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), 'utf8'),
      script.prompts[i]
    )
    assert.is(e.data.prompt_version, 'investigation_project_v2')
  }
  assert.match(script.prompts[2] ?? '', /Latest result E\d+ \(answers plan P2\):/)
  // the hypothesis cites it: at the conclusion turn its rows are still shown
  assert.match(
    script.prompts[3] ?? '',
    /Latest result E\d+ \(answers plan P2; cited by H1\):\n.*\nid \(INT UNSIGNED\)\|quest \(INT UNSIGNED\)\n23486\|11117/
  )
})

loop(
  'invalid answers up to the block; retry_not_before holds; an operator resume returns to exactly the stored state',
  async () => {
    const dir = await startedCase()
    right(await advance(dir, { model: scriptedModel([INTERPRET]).model, research, maxTurns: 1 })())
    const before = await lifecycle(dir)
    const bad = scriptedModel([
      'not json',
      JSON.stringify({ next: { kind: 'tool', operation: 'shell.exec', arguments: {} } })
    ])
    const r = right(await advance(dir, { model: bad.model, research })())
    assert.is(r.state, 'BLOCKED')
    assert.is(r.reason, 'INVALID_LLM_RESPONSES')
    const blocked = await lifecycle(dir)
    assert.is(blocked.resume_state, 'INVESTIGATING')
    assert.ok(blocked.retry_not_before !== null)
    assert.equal(blocked.budget, before.budget, 'a technical rejection changes no budget')
    assert.equal(blocked.hypotheses, before.hypotheses)
    // advancing without manual retry is refused while retry_not_before holds (RETRY_NOT_YET, nothing written)
    const idle = left(await advance(dir, { model: scriptedModel([]).model, research })())
    assert.is(idle.code, 'RETRY_NOT_YET')
    assert.is(idle.data['retry_not_before'], blocked.retry_not_before)
    assert.is(left(await resumeCase(dir, { manualRetry: false })()).code, 'RETRY_NOT_YET')
    assert.is(left(await resumeCase(dir, { manualRetry: true, expectedGeneration: 1 })()).code, 'GENERATION_CONFLICT')
    const gen = right(await replayCase(dir, [])()).generation
    const resumed = right(await resumeCase(dir, { manualRetry: true, expectedGeneration: gen })())
    assert.is(resumed.state, 'INVESTIGATING')
    const after = await lifecycle(dir)
    assert.equal(after.budget, before.budget, 'resume resets no budget')
    assert.is(after.consecutive_invalid_responses, 0)
  }
)

loop('a research outage mid-plan blocks the case; the plan and its reservation survive and resume', async () => {
  const dir = await startedCase()
  right(await advance(dir, { model: scriptedModel([INTERPRET]).model, research, maxTurns: 1 })())
  const broken = sqliteProfile()
  rmSync(path.join(path.dirname(broken), 'world.sqlite'))
  const down = createProjectResearch(right(await loadProfile(broken)()))
  const r = right(await advance(dir, { model: scriptedModel([QUERY_STARTER]).model, research: down })())
  assert.is(r.state, 'BLOCKED')
  assert.is(r.reason, 'RESEARCH_UNAVAILABLE')
  const v = await lifecycle(dir)
  assert.is(v.pending_plan, 'P2')
  assert.is(v.budget?.held, 1, 'the reservation is held')
  assert.is(left(await resumeCase(dir, { manualRetry: true })()).code, 'CASE_RESEARCH_BLOCKED')
  assert.ok(v.retry_not_before !== null, 'the outage names when to retry')
  // before the retry time nothing runs (no research, no model turn): RETRY_NOT_YET
  assert.is(left(await advance(dir, { model: scriptedModel([]).model, research })()).code, 'RETRY_NOT_YET')
  assert.is(right(await replayCase(dir, [])()).generation, r.generation)
  // providers are back: the confirmed plan runs with its reservation, no new model turn first
  const back = scriptedModel([
    (p) =>
      JSON.stringify({ next: { kind: 'conclusion', summary: 'done', hypotheses: [], evidence: [latestEvidence(p)] } })
  ])
  const done = right(await advance(dir, { model: back.model, research, manualRetry: true })())
  assert.is(done.state, 'CONCLUDED')
  const after = await lifecycle(dir)
  assert.equal(after.budget, { total: 6, topped_up: 0, reserved: 1, consumed: 1, released: 0, held: 0, remaining: 5 })
  await down.close()
})

loop('a lab test waits for feedback; a manual retry does not unlock it', async () => {
  const dir = await startedCase()
  const r = right(
    await advance(dir, {
      model: scriptedModel([
        INTERPRET,
        JSON.stringify({
          next: { kind: 'lab_test', description: 'Use the net on a wild wolpertinger on the test realm.' }
        })
      ]).model,
      research
    })()
  )
  assert.is(r.reason, 'AWAITING_TEST_FEEDBACK')
  assert.is(left(await resumeCase(dir, { manualRetry: true })()).code, 'CASE_AWAITING_FEEDBACK')
  right(await recordFeedback(dir, 'L1', 'The wolpertinger despawns but no item is given.')())
  assert.is((await lifecycle(dir)).state, 'INVESTIGATING')
})

loop('an identical query is answered from the case: shown again as a repeat, no budget, not new evidence', async () => {
  const dir = await startedCase()
  const script = scriptedModel([
    INTERPRET,
    QUERY_STARTER,
    QUERY_STARTER,
    (p) => JSON.stringify({ next: { kind: 'conclusion', summary: 'x', hypotheses: [], evidence: [latestEvidence(p)] } })
  ])
  right(await advance(dir, { model: script.model, research })())
  const first = /Latest result (E\d+)/.exec(script.prompts[2] ?? '')?.[1]
  const prompt = script.prompts[3] ?? ''
  assert.match(
    prompt,
    `Latest result ${first ?? '?'} (answers plan P3 from the case: an identical query was asked before; a repeat, no budget used, not new evidence):`
  )
  assert.match(prompt, /^23486\|11117$/m, 'the rows are shown again')
  const research2 = right(await replayCase(dir, defaultProjections())()).views['research']?.view as {
    evidence: Array<{ repeats: number }>
    budget: { consumed: number; reserved: number }
  }
  assert.ok(research2.evidence.some((e) => e.repeats === 1))
  assert.is(research2.budget.reserved, 1, 'only the first ask reserved budget')
  assert.ok(right(await verifyCase(dir)()).valid)
})

loop(
  'portable resume: copied mid-investigation, replayed without providers, the same next prompt byte for byte',
  async () => {
    const dir = await startedCase()
    right(await advance(dir, { model: scriptedModel([INTERPRET, QUERY_STARTER]).model, research, maxTurns: 2 })())
    const elsewhere = path.join(tempDir('moved'), 'case')
    cpSync(dir, elsewhere, { recursive: true })
    const a = right(await nextPrompt(dir)())
    const b = right(await nextPrompt(elsewhere)())
    assert.is(b.text, a.text)
    const done = right(
      await advance(elsewhere, {
        model: scriptedModel([
          (p) =>
            JSON.stringify({
              next: { kind: 'conclusion', summary: 'moved and done', hypotheses: [], evidence: [latestEvidence(p)] }
            })
        ]).model,
        research
      })()
    )
    assert.is(done.state, 'CONCLUDED')
  }
)

loop('the prompt guard keeps every prompt under the limit and says what was cut', async () => {
  const dir = await startedCase()
  right(await advance(dir, { model: scriptedModel([INTERPRET, QUERY_STARTER]).model, research, maxTurns: 2 })())
  const { openCase } = await import('../../src/fp.js')
  const s = right(await openCase(dir)()).cursor.state
  const { renderPrompt } = await import('../../src/projections/prompt.js')
  if (s.settings === null) throw new Error('settings')
  const full = right(await nextPrompt(dir)()).text
  const small = renderPrompt(
    { ...s, settings: { ...s.settings, prompt_max_chars: 8000 } },
    { report: 'r '.repeat(2500), facts: [], captures: new Map() }
  )
  assert.ok(small.text.length <= 8000, `length ${small.text.length}`)
  assert.ok(small.cut.includes('report shown to 3000 of 5000 characters'), small.cut.join(' | '))
  assert.match(small.text, '…[cut at 3000 of 5000 characters]')
  assert.ok(full.length <= 20_000)
})

loop('source.context is refused when the investigation started without it', async () => {
  const plain = sqliteProfile(
    `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "u"\ncommit = "${repo.commit}"\n\n${adapter.replace('enabled = true', 'enabled = false')}`
  )
  const p = right(await loadProfile(plain)())
  const dir = path.join(tempDir('noctx'), 'case')
  right(await initCase({ dir })())
  assert.is(
    left(await startInvestigation(dir, { settings: right(settingsOf(p)) })()).code,
    'CASE_NOT_PREPARED',
    'no investigation without a completed revision'
  )
  right(
    await prepareRevision(dir, research, right(enrichmentConfig(profile)), {
      report: 'The net does nothing.',
      entities: [{ type: 'quest', id: 11117 }]
    })()
  )
  right(await startInvestigation(dir, { settings: right(settingsOf(p)) })())
  const script = scriptedModel([
    INTERPRET,
    JSON.stringify({
      next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.context', text: '23487' } }
    })
  ])
  right(await advance(dir, { model: script.model, research, maxTurns: 2 })())
  const v = await lifecycle(dir)
  assert.is(v.consecutive_invalid_responses, 1)
  assert.not.match(script.prompts[1] ?? '', 'source.context is enabled')
})

loop('a source.context answer computed with other settings than the started context is refused', async () => {
  const dir = await startedCase()
  const other = sqliteProfile(
    `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n${adapter.replace('context_lines = 8', 'context_lines = 3')}`
  )
  const changed = createProjectResearch(right(await loadProfile(other)()), { openSource: openSourceResearch })
  const script = scriptedModel([
    INTERPRET,
    JSON.stringify({
      next: {
        kind: 'tool',
        operation: 'project.query',
        arguments: { kind: 'source.context', text: 'NPC_WILD_WOLPERTINGER' }
      }
    })
  ])
  right(await advance(dir, { model: script.model, research: changed, maxTurns: 2 })())
  const research2 = right(await replayCase(dir, defaultProjections())()).views['research']?.view as {
    last_failure: { code: string } | null
    budget: { released: number }
  }
  assert.is(research2.last_failure?.code, 'CONTEXT_SETTINGS_DIFFER')
  assert.is(research2.budget.released, 1)
  await changed.close()
})

loop('vba status and vba resume', async () => {
  const dir = await startedCase()
  right(await advance(dir, { model: scriptedModel([INTERPRET, 'nope', 'still nope']).model, research })())
  const st = vba(['status', dir])
  assert.is(st.code, 0, st.stderr)
  assert.match(st.stdout, 'BLOCKED / INVALID_LLM_RESPONSES')
  const gen = Number(/generation (\d+)/.exec(st.stdout)?.[1])
  assert.is(vba(['resume', dir, '--manual-retry', '--expect-generation', String(gen + 5)]).code, 4)
  const ok = vba(['resume', dir, '--manual-retry', '--expect-generation', String(gen)])
  assert.is(ok.code, 0, ok.stderr)
  assert.match(ok.stdout, 'INVESTIGATING')
  assert.match(vba(['status', dir]).stdout, 'INVESTIGATING')
})

loop(
  'a refused query is shown as refused (code, message, request), and a long read keeps its continuation in the prompt',
  async () => {
    const dir = await startedCase()
    const secret = JSON.stringify({
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
    })
    const longRead = JSON.stringify({
      next: {
        kind: 'tool',
        operation: 'project.query',
        arguments: { kind: 'source.read', path: 'src/server/game/Long.cpp', start_line: 1, end_line: 200 }
      }
    })
    const script = scriptedModel([
      INTERPRET,
      secret,
      longRead,
      JSON.stringify({ next: { kind: 'conclusion', summary: 'x', hypotheses: [], evidence: [] } })
    ])
    right(await advance(dir, { model: script.model, research })())
    const afterRefusal = script.prompts[2] ?? ''
    assert.match(
      afterRefusal,
      'Your last query (plan P2) was refused (TABLE_NOT_ALLOWED): table account_secrets is not on the allowlist of world'
    )
    assert.match(afterRefusal, 'Request: database.rows account_secrets [secret] offset 0 limit 1')
    assert.match(afterRefusal, 'Ask one of the allowed tables of world: creature_queststarter, creature_template,')
    assert.not.match(afterRefusal, 'Latest result')
    const afterRead = script.prompts[3] ?? ''
    assert.match(afterRead, 'source.read src/server/game/Long.cpp')
    assert.match(afterRead, 'lines 1-80 of 430')
    assert.match(afterRead, 'continue with start_line 81 and end_line 200 (line limit 80: 200 lines were asked for)')
    assert.is(afterRead.split('continue with start_line').length, 2, 'one continuation line')
    assert.match(afterRead, ' 1|     // line 1 of the long file')
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

loop(
  'a timeout is an answer about the query: recorded as failed, budget released, shown; the case goes on',
  async () => {
    const dir = await startedCase()
    const slowFile = sqliteProfile(
      `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n${adapter}\n`
    )
    // The time limit is read from the research's clock: one that passes any limit between two readings.
    const slow = createProjectResearch(right(await loadProfile(slowFile)()), {
      openSource: (p, o) => openSourceResearch(p, { ...o, now: limitExceeded() })
    })
    const search = JSON.stringify({
      next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.search', text: 'Wolpertinger' } }
    })
    const script = scriptedModel([
      INTERPRET,
      search,
      JSON.stringify({ next: { kind: 'conclusion', summary: 'too slow', hypotheses: [], evidence: [] } })
    ])
    const r = right(await advance(dir, { model: script.model, research: slow })())
    await slow.close()
    assert.is(r.state, 'CONCLUDED', 'a timeout does not block the case')
    assert.match(script.prompts[2] ?? '', 'was refused (SOURCE_TIMEOUT)')
    const v = await lifecycle(dir)
    assert.equal(v.budget, { total: 6, topped_up: 0, reserved: 1, consumed: 0, released: 1, held: 0, remaining: 6 })
  }
)

loop(
  'a research outage backs off: each retry that fails again renews the block with a doubled retry time',
  async () => {
    const env = fixedEnv('2026-11-30T11:00:00.000Z', 'bo')
    const dir = await startedCase(env)
    right(await advance(dir, { model: scriptedModel([INTERPRET]).model, research, maxTurns: 1, env })())
    const broken = sqliteProfile()
    rmSync(path.join(path.dirname(broken), 'world.sqlite'))
    const down = createProjectResearch(right(await loadProfile(broken)()))
    right(await advance(dir, { model: scriptedModel([QUERY_STARTER]).model, research: down, env })())
    const first = await lifecycle(dir)
    right(await advance(dir, { model: scriptedModel([]).model, research: down, env, manualRetry: true })())
    const second = await lifecycle(dir)
    await down.close()
    assert.is(second.state, 'BLOCKED')
    assert.is(second.reason, 'RESEARCH_UNAVAILABLE')
    const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map(
        (l) => JSON.parse(l) as { type: string; at: string; data: { retry_not_before?: string | null; state?: string } }
      )
    const blocks = events.filter((e) => e.type === 'CheckpointRecorded' && e.data.state === 'BLOCKED')
    assert.is(blocks.length, 2)
    const wait = (e: (typeof blocks)[number]): number => Date.parse(e.data.retry_not_before ?? '') - Date.parse(e.at)
    assert.ok(Math.abs(wait(blocks[0] as (typeof blocks)[number]) - 30_000) < 50, String(first.retry_not_before))
    assert.ok(Math.abs(wait(blocks[1] as (typeof blocks)[number]) - 60_000) < 50, String(second.retry_not_before))
    assert.is(second.pending_plan, 'P2', 'the plan and its reservation stay')
    assert.equal(
      blocks.map((b) => (b.data as { manual_retry?: boolean }).manual_retry),
      [false, true],
      'the early retry the operator asked for is recorded as a manual retry'
    )
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

loop(
  'a model function that throws is recorded (ModelFailed), the case waits as MODEL_UNAVAILABLE, and resumes',
  async () => {
    const dir = await startedCase()
    const env = fixedEnv('2026-11-30T12:00:00.000Z', 'mf')
    const r = right(
      await advance(dir, {
        model: scriptedModel([INTERPRET, new Error('provider answered 503 Service Unavailable')]).model,
        research,
        env
      })()
    )
    assert.is(r.state, 'BLOCKED')
    assert.is(r.reason, 'MODEL_UNAVAILABLE')
    assert.ok(r.retry_not_before !== null)
    const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; data: { code?: string; message?: string } })
    const failed = events.find((e) => e.type === 'ModelFailed')
    assert.is(failed?.data.code, 'MODEL_CALL_FAILED')
    assert.match(failed?.data.message ?? '', '503 Service Unavailable')
    assert.is(
      events.filter((e) => e.type === 'ModelRequested').length,
      events.filter((e) => e.type === 'ModelResponded' || e.type === 'ModelFailed').length,
      'no request is left without its answer or failure'
    )
    // before the retry time nothing runs (RETRY_NOT_YET); a manual retry resumes and asks again
    assert.is(left(await advance(dir, { model: scriptedModel([]).model, research, env })()).code, 'RETRY_NOT_YET')
    const again = right(
      await advance(dir, {
        model: scriptedModel([
          JSON.stringify({ next: { kind: 'conclusion', summary: 'ok', hypotheses: [], evidence: [] } })
        ]).model,
        research,
        env,
        manualRetry: true
      })()
    )
    assert.is(again.state, 'CONCLUDED')
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

loop('an answer with lone surrogates is kept byte for byte (UTF-16LE) and rejected as invalid', async () => {
  const dir = await startedCase()
  const raw = '{"interpretation": {"summary": "broken \ud800 text"}}'
  right(await advance(dir, { model: scriptedModel([raw]).model, research, maxTurns: 1 })())
  const v = await lifecycle(dir)
  assert.is(v.consecutive_invalid_responses, 1)
  const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; data: { raw?: { digest: string; media_type?: string } } })
  const answered = events.find((e) => e.type === 'ModelResponded')?.data.raw
  assert.is(answered?.media_type, 'text/plain; charset=utf-16le')
  const hex = answered?.digest.slice(7) ?? ''
  assert.is(readFileSync(path.join(dir, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2))).toString('utf16le'), raw)
  assert.ok(right(await verifyCase(dir)()).valid)
})

loop.after(async () => research.close())
loop.run()
