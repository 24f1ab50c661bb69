/**
 * The model's working memory on a whole investigation (issue 19), on the demo world: its core has
 * the source.context situation of a real AzerothCore-family core (a constant named alike in two
 * files, the wolpertinger's number on line 1039 of a long script, central script loaders, SQL
 * dumps). Prompts are checked turn by turn; the case verifies, and every recorded prompt renders
 * again byte for byte from the state before it. A model that only asks refused queries ends
 * BLOCKED; a re-ask is answered from the case.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { openVba } from '../../src/index.js'
import { forger } from '../../src/testing.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { caseReport } from '../../src/report/case-report.js'
import { lifecycleProjection, type LifecycleView } from '../../src/projections/lifecycle-view.js'
import { BREWFEST_HIT_LINE } from '../../src/demo/core-scripts.js'
import { initCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { initCaseState, type CaseState } from '../../src/domain/case-state.js'
import { evolve } from '../../src/domain/case-evolve.js'
import { FactsDocument } from '../../src/domain/facts-document.js'
import { Capture } from '../../src/events/capture.js'
import type { RecordedEvent } from '../../src/events/chain.js'
import { renderPrompt, type PromptInputs } from '../../src/projections/prompt.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { advance } from '../../src/fp.js'
import { resumeCase, startInvestigation } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { scriptedModel } from '../../src/investigation/scripted-model.js'
import { FEEDBACK, runScriptedInvestigation } from '../../scripts/lib/scripted-investigation.js'
import { right, tempDir } from '../helpers/fs.js'

const world = await writeDemoWorld(path.join(tempDir('wm-world'), 'world'))
const dir = path.join(tempDir('wm-case'), 'case')
const run = await runScriptedInvestigation(world.profile, dir)
const prompt = (turn: number): string => run.prompts[turn - 1] ?? ''

const memory = suite('the working memory of a whole investigation')

memory(
  'the scripted investigation concludes; every prompt stays under 20,000 characters and names the allowed tables',
  () => {
    assert.is(run.state, 'CONCLUDED')
    assert.is(run.prompts.length, 8)
    for (const [i, p] of run.prompts.entries()) {
      assert.ok(p.length < 20_000, `turn ${i + 1}: ${p.length}`)
      assert.match(
        p,
        '  world: creature_queststarter, creature_template, game_event, item_template, quest_template, smart_scripts, spell_script_names'
      )
      assert.match(p, 'source.read 80 lines (max_lines); database.rows 200 rows (max_rows)')
    }
  }
)

memory(
  'after source.context "23487" under src/server/: at most 8,000 characters, the wolpertinger lines around brewfest.cpp:1039, Garr\'s definition and registration',
  () => {
    const p = prompt(3)
    assert.ok(p.length <= 8000, `${p.length} characters`)
    assert.match(p, /^Latest result E3 \(answers plan P2\):$/m)
    assert.match(p, 'src/server/scripts/Events/brewfest.cpp (blob')
    for (let line = BREWFEST_HIT_LINE - 8; line <= BREWFEST_HIT_LINE + 8; line++)
      assert.match(p, new RegExp(`^[ >+~]${line}\\| `, 'm'), `brewfest.cpp:${line}`)
    assert.match(p, `>${BREWFEST_HIT_LINE}|         if (!target || target->GetEntry() != 23487) // Wild Wolpertinger`)
    assert.match(p, '>  18|     SPELL_SEPARATION_ANXIETY        = 23487,')
    assert.match(p, '+  51| void AddSC_boss_garr()\n   52| {\n   53|     RegisterMoltenCoreCreatureAI(boss_garr);')
    // loader declarations one line each; the other constant of the same name never as the alias
    assert.match(p, '+   9| void AddSC_boss_garr();\n     ⋮\n+  71|     AddSC_boss_garr();\n')
    assert.not.match(p, /^[ +]\s*8\| void AddSC_/m, 'no window around loader lines')
    assert.match(p, '~  16|     SPELL_SEPARATION_ANXIETY        = 21094,')
    assert.match(
      p,
      '~ the same name in another file is another symbol: SPELL_SEPARATION_ANXIETY = 21094 (boss_majordomo_executus.cpp:16)'
    )
    assert.not.match(p, 'hits without context')
  }
)

memory('a refused table: the refusal names the allowed tables and counts; it is gone after the next decision', () => {
  const refused = prompt(6)
  assert.match(
    refused,
    'Your last query (plan P5) was refused (TABLE_NOT_ALLOWED): table spell_dbc is not on the allowlist of world'
  )
  assert.match(
    refused,
    'Ask one of the allowed tables of world: creature_queststarter, creature_template, game_event, item_template, quest_template, smart_scripts, spell_script_names.'
  )
  assert.match(refused, 'Refused or repeated queries in a row: 1 of 3')
  assert.not.match(prompt(7), 'was refused')
  assert.not.match(prompt(8), 'was refused')
})

memory(
  'lab work is in the prompt: the request while it waits is not asked, and the feedback with its request id after',
  () => {
    assert.match(
      prompt(7),
      `  L1 [feedback recorded] Net three wild wolpertingers on the test realm and watch the bags and the combat log.\n    feedback on L1: ${JSON.stringify(FEEDBACK)}`
    )
    assert.not.equal(
      prompt(7).replace(/Turn \d+/, ''),
      prompt(6).replace(/Turn \d+/, ''),
      'the feedback changes more than the turn number'
    )
  }
)

memory(
  'at the conclusion turn the code lines and rows the open hypothesis cites are shown, and the lab feedback',
  () => {
    const p = prompt(8)
    assert.match(p, /^ {2}H1 \[open\] .* \(evidence: E3, E4, E5\)$/m)
    assert.match(p, /^E3 \(cited by H1\):$/m)
    assert.match(
      p,
      /^E4 \(cited by H1\):\nsource\.read src\/server\/scripts\/Events\/brewfest\.cpp \(blob \w+\) @ commit \w+: lines 1028-1058 of \d+$/m
    )
    assert.match(p, '1048|             wolpertinger->DespawnOrUnsummon();')
    assert.match(
      p,
      /^E5 \(cited by H1\):\n.*\nspell_id \(INT\)\|ScriptName \(VARCHAR\(64\)\)\n41621\|spell_wolpertinger_net$/m
    )
    assert.match(p, `feedback on L1: ${JSON.stringify(FEEDBACK)}`)
    assert.match(
      p,
      /^ {2}E1 database\.rows creature_template where entry = 23487: 1 row, complete \(preparation, \d+ chars\)$/m,
      'the enrichment evidence one line each'
    )
  }
)

memory(
  'the case verifies, and every recorded prompt renders again byte for byte from the state before it (the renderer is a pure projection)',
  async () => {
    assert.ok(right(await verifyCase(dir)()).valid)
    const object = (ref: { digest: string }): Buffer =>
      readFileSync(path.join(dir, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)))
    const inputsOf = (s: CaseState): PromptInputs => {
      const doc = s.facts === null ? null : FactsDocument.decode(JSON.parse(object(s.facts).toString('utf8')))
      const captures = new Map<string, Capture>()
      for (const [d, ref] of s.research.evidenceRefs) {
        const c = Capture.decode(JSON.parse(object(ref).toString('utf8')))
        if (E.isRight(c)) captures.set(d, c.right)
      }
      return {
        report: s.report === null ? '' : object(s.report).toString('utf8'),
        facts: doc === null || E.isLeft(doc) ? [] : doc.right.facts,
        captures
      }
    }
    let turns = 0
    const check = {
      name: 'rerender',
      version: 1,
      init: initCaseState,
      view: () => null,
      evolve: (s: CaseState, e: RecordedEvent): CaseState => {
        if (e.type === 'ModelRequested') {
          assert.is(e.data.prompt_version, 'investigation_project_v2')
          const again = renderPrompt(s, inputsOf(s)).text
          assert.ok(Buffer.from(again, 'utf8').equals(object(e.data.prompt)), `turn ${e.data.turn}`)
          assert.is(again, prompt(e.data.turn))
          turns++
        }
        return evolve(s, e)
      }
    }
    right(await replayCase(dir, [check])())
    assert.is(turns, 8)
  }
)

memory(
  'verify --against re-derives every capture of the investigation, the ranked source.context included; one of the earlier chain is not asked again, and says why',
  async () => {
    const client = await openVba({ profile: world.profile })
    try {
      const r = await client.cases.verify(dir, { against: true })
      assert.ok(r.valid, JSON.stringify(r.findings))
      assert.is(r.evidence?.mismatched, 0)
      assert.is(r.evidence?.not_rechecked, 0)
      // a copy whose source.context capture records no code paths (as the earlier chain wrote them)
      const old = path.join(tempDir('wm-old'), 'case')
      cpSync(dir, old, { recursive: true })
      const f = forger(old)
      const event = f
        .envelopes()
        .find((e) => e.type === 'CaptureRecorded' && (e.data as { kind: string }).kind === 'source.context')
      if (event === undefined) throw new Error('no source.context capture')
      const ref = (event.data as { capture: { digest: string } }).capture
      const capture = JSON.parse(
        readFileSync(path.join(old, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)), 'utf8')
      ) as { settings: { source_analysis: Record<string, unknown> } }
      delete capture.settings.source_analysis['code_path_prefixes']
      const forged = f.object(Buffer.from(right(canonicalJson(capture)), 'utf8'), 'application/vnd.vba.capture+json')
      f.rewrite(event.seq, (d) => ({ ...(d as Record<string, unknown>), capture: forged }))
      const again = await client.cases.verify(old, { against: true })
      assert.is(again.evidence?.not_rechecked, 1)
      assert.is(again.evidence?.mismatched, 0)
      assert.match(
        again.findings.find((x) => x.code === 'EVIDENCE_NOT_RECHECKED')?.message ?? '',
        'the earlier source.context chain'
      )
    } finally {
      await client.close()
    }
  }
)

memory.run()

/** A prepared and started case on the demo world. */
const started = async (): Promise<{ dir: string; research: ReturnType<typeof createProjectResearch> }> => {
  const profile = right(await loadProfile(world.profile)())
  const research = createProjectResearch(profile, { openSource: openSourceResearch })
  const d = path.join(tempDir('wm'), 'case')
  right(await initCase({ dir: d })())
  right(
    await prepareRevision(d, research, right(enrichmentConfig(profile)), {
      report: 'The wild wolpertinger vanishes when netted.',
      entities: [{ type: 'creature', id: 23487 }]
    })()
  )
  right(await startInvestigation(d, { settings: right(settingsOf(profile)) })())
  return { dir: d, research }
}
const INTERPRET = JSON.stringify({ interpretation: { summary: 'netted wolpertingers vanish' } })
const asks = (args: Record<string, unknown>): string =>
  JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: args } })

const loop = suite('refusals and repeats in the loop')

loop(
  'a model that only asks refused queries ends BLOCKED / INVALID_LLM_RESPONSES at max_invalid_responses, budget untouched, and resumes',
  async () => {
    const { dir: d, research } = await started()
    const refused = (n: number): string =>
      asks({
        kind: 'database.rows',
        table: `account_secrets_${n}`,
        columns: ['secret'],
        filters: [],
        offset: 0,
        limit: 1
      })
    const r = right(
      await advance(d, {
        model: scriptedModel([INTERPRET, ...Array.from({ length: 24 }, (_, i) => refused(i))]).model,
        research,
        maxTurns: 25
      })()
    )
    assert.is(r.state, 'BLOCKED')
    assert.is(r.reason, 'INVALID_LLM_RESPONSES')
    assert.is(r.turns, 4, 'the interpretation and three refused queries')
    assert.match(readFileSync(path.join(d, 'events.jsonl'), 'utf8'), '"reason":"INVALID_LLM_RESPONSES"')
    assert.not.match(
      readFileSync(path.join(d, 'events.jsonl'), 'utf8'),
      '"type":"BudgetConsumed"',
      'refusals cost nothing'
    )
    const view = right(await replayCase(d, [lifecycleProjection])()).views['lifecycle']?.view as LifecycleView
    assert.is(view.stalled_queries, 3)
    assert.ok(right(await verifyCase(d)()).valid)
    const resumed = right(await resumeCase(d, { manualRetry: true })())
    assert.is(resumed.state, 'INVESTIGATING')
    await research.close()
  }
)

loop(
  'an enrichment capture can be cited, and its identical query is answered from the case (its rows shown, no budget)',
  async () => {
    const { dir: d, research } = await started()
    const same = asks({
      kind: 'database.rows',
      table: 'smart_scripts',
      columns: [
        'entryorguid',
        'source_type',
        'id',
        'link',
        'event_type',
        'event_param1',
        'action_type',
        'action_param1',
        'comment'
      ],
      filters: [
        { column: 'entryorguid', operator: 'eq', value: 23487 },
        { column: 'source_type', operator: 'eq', value: 0 }
      ],
      offset: 0,
      limit: 100
    })
    const script = scriptedModel([
      INTERPRET,
      same,
      JSON.stringify({
        next: { kind: 'hypothesis', action: 'propose', statement: 'SmartAI despawns it.', evidence: ['E1'] }
      }),
      JSON.stringify({ next: { kind: 'conclusion', summary: 'x', hypotheses: ['H1'], evidence: ['E2'] } })
    ])
    const r = right(await advance(d, { model: script.model, research })())
    assert.is(r.state, 'CONCLUDED')
    assert.match(
      script.prompts[2] ?? '',
      /^Latest result E2 \(answers plan P2 from the case: an identical query was asked before; a repeat, no budget used, not new evidence; from the case preparation\):$/m
    )
    assert.match(script.prompts[2] ?? '', /^23487\|0\|1\|0\|8\|41621\|56\|32906\|/m, 'the rows nobody showed before')
    assert.match(
      script.prompts[3] ?? '',
      /^E1 \(cited by H1; from the case preparation\):$/m,
      'a cited enrichment capture is shown with its payload'
    )
    assert.match(script.prompts[3] ?? '', 'Budget remaining: 8 (', 'the demo budget (8) untouched')
    assert.ok(right(await verifyCase(d)()).valid)
    assert.match(
      await caseReport(d),
      'plan P2 answered from the case: evidence <a href="#E2">E2</a> again (an identical query; a repeat, no budget used)',
      'the case report shows it'
    )
    await research.close()
  }
)

loop.run()
