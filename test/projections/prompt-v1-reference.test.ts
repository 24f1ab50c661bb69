/**
 * Property: the frozen v1 prompt renderer (src/projections/prompt-v1/render.ts, split by section in
 * commit c8a4eab) renders every state as the renderer before that split did (the copy in
 * test/reference), text, stable part and cut notes, on 500 random states (seeded: VBA_TEST_SEED
 * replays a run): every lifecycle state and phase, 0-8 hypotheses, 0-70 evidence entries of
 * source reads of 1-400 lines, each kind of latest outcome, rejections, a pending plan, reports and
 * facts of any size and prompt limits from 1,500 to 60,000 characters (so the guard cuts each
 * payload in turn).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { initCaseState, type CaseState } from '../../src/domain/case-state.js'
import type { Capture } from '../../src/events/capture.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { renderPromptV1 } from '../../src/projections/prompt-v1/render.js'
import { renderPromptV1 as referenceRender } from '../reference/prompt-v1-render-c8a4eab.js'
import { SEED, seededRandom, withSeed } from '../helpers/seed.js'

const STATES = 500

const digest = (i: number): string => `sha256:${i.toString(16).padStart(64, '0')}`
const pick = <A>(r: () => number, list: readonly A[]): A => list[Math.floor(r() * list.length)] as A
const int = (r: () => number, lo: number, hi: number): number => lo + Math.floor(r() * (hi - lo + 1))

const TEXTS = ['', 'short', 'E4 and H2 <b>&', 'ünïcödé ✓', 'line one\nline two', 'because '.repeat(40)]

const readCapture = (lines: number, r: () => number): Capture => ({
  format: 'vba-capture',
  format_version: 1,
  schema: 'project-query-v1',
  kind: 'source.read',
  request: { kind: 'source.read', path: 'src/server/game/Big.cpp', start_line: 1, end_line: lines + 50 },
  origin: {
    type: 'git',
    url: 'u',
    commit: 'c'.repeat(40),
    files: [{ path: 'src/server/game/Big.cpp', blob: 'b'.repeat(40), sha256: 'e'.repeat(64), size: 1 }]
  },
  settings: {},
  settings_hash: digest(1),
  result: {
    path: 'src/server/game/Big.cpp',
    blob: 'b'.repeat(40),
    total_lines: 5000,
    start_line: 1,
    end_line: lines,
    lines: Array.from({ length: lines }, (_, i) => ({ line: i + 1, text: `${pick(r, TEXTS)} DoSomething(${i});` })),
    eof: false,
    truncated: r() < 0.5,
    next_start_line: lines + 1,
    requested_end_line: lines + 50,
    read_notice: `Returned lines 1-${lines}.`
  }
})

const randomCase = (r: () => number): { s: CaseState; inputs: Parameters<typeof renderPromptV1>[1] } => {
  const settings: InvestigationSettings = {
    prompt_version: 'investigation_project_v1',
    budget_total: int(r, 1, 40),
    action_costs: { 'project.query': int(r, 1, 3) },
    max_invalid_responses: int(r, 1, 5),
    retry_delay_ms: 1000,
    prompt_max_chars: pick(r, [1500, 3000, 6000, 12_000, 20_000, 60_000]),
    source_context: null,
    max_tokens: null,
    contract: null,
    count_refusals: false,
    answer_repeats_from_case: false,
    binding: null
  }
  const s = initCaseState()
  s.settings = settings
  s.state = pick(r, ['INTERPRETING', 'INVESTIGATING', 'INVESTIGATING', 'BLOCKED', 'CONCLUDED'] as const)
  s.turn = int(r, 0, 80)
  s.interpretation = r() < 0.3 ? null : pick(r, TEXTS)
  for (let i = 1, n = int(r, 0, 8); i <= n; i++)
    s.hypotheses.set(`H${i}`, {
      id: `H${i}`,
      statement: pick(r, TEXTS),
      status: pick(r, ['open', 'supported', 'refuted'] as const),
      evidence: [`E${int(r, 1, 9)}`]
    })
  const captures = new Map<string, Capture>()
  const evidence = int(r, 0, 70)
  for (let i = 1; i <= evidence; i++) {
    s.research.evidence.set(`E${i}`, {
      id: `E${i}`,
      digest: digest(100 + i),
      kind: 'source.read',
      first_seq: i * 3,
      repeats: int(r, 0, 2),
      origin: r() < 0.2 ? 'enrichment' : 'query',
      last_result_seq: i * 3,
      last_plan: r() < 0.5 ? null : `P${i}`
    })
    // some evidence has no readable capture (the prompt then says so)
    if (r() < 0.9) captures.set(digest(100 + i), readCapture(int(r, 1, i === evidence ? 400 : 20), r))
  }
  const outcome = r()
  if (evidence > 0 && outcome < 0.5)
    s.lastResult = {
      kind: 'capture',
      evidence_id: `E${evidence}`,
      digest: digest(100 + evidence),
      repeat: r() < 0.3,
      plan_id: `P${evidence}`,
      seq: evidence * 3,
      from_case: r() < 0.2
    }
  else if (outcome < 0.7)
    s.lastResult = {
      kind: 'failure',
      code: pick(r, ['TABLE_NOT_FOUND', 'SOURCE_TIMEOUT']),
      message: pick(r, TEXTS),
      plan_id: r() < 0.5 ? null : 'P2',
      arguments: r() < 0.5 ? null : { kind: 'database.count', table: 'quest_template', filters: [] },
      seq: 40
    }
  else if (outcome < 0.8) s.lastResult = { kind: 'cancelled', plan_id: 'P3', reason: pick(r, TEXTS), seq: 41 }
  if (r() < 0.3) s.lastRejection = { code: 'EVIDENCE_UNKNOWN', message: pick(r, TEXTS) }
  s.consecutiveInvalid = int(r, 0, 3)
  if (r() < 0.2)
    s.pendingPlan = {
      plan_id: `P${s.turn}`,
      arguments: { kind: 'source.search', text: 'x' },
      turn: s.turn,
      reservation: null
    }
  const facts = Array.from(
    { length: pick(r, [0, 3, 40, 400]) },
    (_, i) => `  F${i + 1} creature ${i} (creature_template): {"entry":${i},"name":"${pick(r, TEXTS)}"}`
  )
  const report = pick(r, TEXTS).repeat(pick(r, [1, 10, 200]))
  return { s, inputs: { report, facts, captures } }
}

test(`${STATES} random states: the v1 prompt is the reference's, byte for byte (seed ${SEED})`, () =>
  withSeed(() => {
    const r = seededRandom()
    let cut = 0
    for (let i = 0; i < STATES; i++) {
      const { s, inputs } = randomCase(r)
      const now = renderPromptV1(s, inputs)
      const then = referenceRender(s, inputs)
      if (now.text !== then.text || now.stable !== then.stable)
        assert.unreachable(`state ${i}: the prompt differs (${now.text.length} vs ${then.text.length} characters)`)
      assert.equal(now.cut, then.cut, `state ${i}: what the guard cut`)
      if (now.cut.length > 0) cut++
    }
    assert.ok(cut > STATES / 4 && cut < STATES, `the guard cut ${cut} of ${STATES} prompts`)
  }))

test.run()
