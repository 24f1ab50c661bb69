/** The frozen v1 prompt guard (investigation_project_v1), on a case whose prompt would be 60,000 characters. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCaseState, type CaseState } from '../../src/domain/case-state.js'
import { evolve } from '../../src/domain/case-evolve.js'
import { FactsDocument } from '../../src/domain/facts-document.js'
import { Capture as CaptureCodec } from '../../src/events/capture.js'
import type { RecordedEvent } from '../../src/events/chain.js'
import { factLinesV1 } from '../../src/projections/prompt-v1/facts.js'
import { replayCase } from '../../src/fp.js'
import { repoRoot, right } from '../helpers/fs.js'
import {
  renderPromptV1 as renderPrompt,
  type PromptInputsV1 as PromptInputs
} from '../../src/projections/prompt-v1/render.js'
import type { Capture } from '../../src/events/capture.js'
import type { InvestigationSettings } from '../../src/events/settings.js'

const settings: InvestigationSettings = {
  prompt_version: 'investigation_project_v1',
  budget_total: 20,
  action_costs: { 'project.query': 1 },
  max_invalid_responses: 3,
  retry_delay_ms: 1000,
  prompt_max_chars: 20_000,
  source_context: null,
  max_tokens: null,
  contract: null,
  count_refusals: false,
  answer_repeats_from_case: false,
  binding: null
}
const digest = (i: number): string => `sha256:${i.toString(16).padStart(64, '0')}`

const readCapture = (lines: number): Capture => ({
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
    lines: Array.from({ length: lines }, (_, i) => ({
      line: i + 1,
      text: `    DoSomethingWith(creature, ${i}); // a line of typical length for C++ code`
    })),
    eof: false,
    truncated: true,
    next_start_line: lines + 1,
    requested_end_line: lines + 50,
    read_notice: `Returned lines 1-${lines} of the requested 1-${lines + 50}; to continue, read from ${lines + 1} keeping end_line ${lines + 50}.`
  }
})

/** A case in INVESTIGATING with a long report, 400 facts, 60 evidence entries, a 600-line latest result and a rejection. */
const bigCase = (): { s: CaseState; inputs: PromptInputs } => {
  const s = initCaseState()
  s.settings = settings
  s.state = 'INVESTIGATING'
  s.turn = 61
  s.interpretation = 'Netted wolpertingers despawn without giving the item.'
  for (let i = 1; i <= 3; i++)
    s.hypotheses.set(`H${i}`, {
      id: `H${i}`,
      statement: `hypothesis ${i}: ${'because '.repeat(20)}`,
      status: 'open',
      evidence: [`E${i}`]
    })
  const captures = new Map<string, Capture>()
  for (let i = 1; i <= 60; i++) {
    s.research.evidence.set(`E${i}`, {
      id: `E${i}`,
      digest: digest(100 + i),
      kind: 'source.read',
      first_seq: i * 3,
      repeats: 0,
      origin: 'query',
      last_result_seq: i * 3,
      last_plan: null
    })
    captures.set(digest(100 + i), readCapture(2))
  }
  const latest = readCapture(600)
  captures.set(digest(999), latest)
  s.research.evidence.set('E61', {
    id: 'E61',
    digest: digest(999),
    kind: 'source.read',
    first_seq: 500,
    repeats: 0,
    origin: 'query',
    last_result_seq: 500,
    last_plan: 'P61'
  })
  s.lastResult = {
    kind: 'capture',
    evidence_id: 'E61',
    digest: digest(999),
    repeat: false,
    plan_id: 'P61',
    seq: 501,
    from_case: false
  }
  s.lastRejection = { code: 'EVIDENCE_UNKNOWN', message: 'unknown evidence ids: E99' }
  s.consecutiveInvalid = 1
  const facts = Array.from(
    { length: 400 },
    (_, i) => `  F${i + 1} creature ${i} (creature_template): {"entry":${i},"name":"Generated creature number ${i}"}`
  )
  return { s, inputs: { report: 'The wolpertinger vanishes. '.repeat(200), facts, captures } }
}

const guard = suite('the v1 prompt guard')

guard(
  'a prompt that would be 60,000 characters stays under the limit; stable part, state, rejection and closing survive; payloads are cut oldest first, and the prompt says so',
  () => {
    const { s, inputs } = bigCase()
    const unlimited = renderPrompt({ ...s, settings: { ...settings, prompt_max_chars: 2_000_000 } }, inputs)
    assert.ok(unlimited.text.length > 60_000, `the uncut prompt has ${unlimited.text.length} characters`)
    assert.equal(
      unlimited.cut.filter((c) => !c.startsWith('report shortened')),
      []
    )
    const p = renderPrompt(s, inputs)
    assert.ok(p.text.length <= 20_000, `length ${p.text.length}`)
    // The stable part, told apart without the function that builds it: what the uncut prompt of the
    // same case starts with, unchanged by another report, and free of the turn's state.
    assert.is(p.stable, unlimited.stable, 'the guard leaves the stable part whole')
    assert.ok(p.text.startsWith(p.stable), 'the stable part is first')
    assert.ok(unlimited.text.startsWith(p.stable))
    assert.is(renderPrompt(s, { ...inputs, report: 'Another report entirely.' }).stable, p.stable)
    assert.ok(p.stable.startsWith('=== investigation_project_v1 ===\n'), p.stable.slice(0, 80))
    for (const turnState of [
      'Budget remaining',
      'wolpertinger vanishes',
      'EVIDENCE_UNKNOWN',
      'Interpretation:',
      'H1 ['
    ])
      assert.not.ok(p.stable.includes(turnState), `the stable part holds no ${turnState}`)
    assert.ok(
      p.text.endsWith('Budget remaining: 20 (a query costs 1).\nAnswer with the next action.'),
      'the closing instruction is whole and last'
    )
    assert.match(p.text, 'Your last answer was rejected (EVIDENCE_UNKNOWN): unknown evidence ids: E99')
    assert.match(p.text, 'Interpretation: Netted wolpertingers despawn')
    for (const h of ['H1', 'H2', 'H3']) assert.match(p.text, `  ${h} [open] hypothesis`)
    // the latest result keeps its header and every marker, and says how much of it was left out
    assert.match(p.text, 'Latest result E61 (selected: it answers the last confirmed plan):')
    assert.match(
      p.text,
      'source.read src/server/game/Big.cpp (blob bbbbbbbbbbbb) @ commit cccccccccccc: lines 1-600 of 5000'
    )
    assert.match(p.text, 'truncated: continue with start_line 601 and end_line 650')
    assert.match(p.text, 'notice: Returned lines 1-600 of the requested 1-650')
    // payloads, oldest first: the facts go before the evidence index, the oldest evidence before the newest
    assert.match(p.text, /\[\d+ of 400 lines of the facts left out/)
    assert.equal(
      p.cut.filter((c) => !c.startsWith('report shortened')).map((c) => c.split(':')[0]),
      ['facts', 'evidence', 'latest'],
      'the oldest payloads first, the latest result last'
    )
    const evidenceCut = /\[(\d+) of 61 lines of the evidence left out \(the oldest\)/.exec(p.text)
    assert.ok(evidenceCut !== null, 'the evidence index says what it left out')
    assert.not.match(p.text, '  E1 source.read')
    // with a little more room the newest evidence stays and the oldest goes
    const roomier = renderPrompt({ ...s, settings: { ...settings, prompt_max_chars: 60_000 } }, inputs)
    assert.match(roomier.text, '  E61 source.read')
    assert.match(roomier.text, /\[\d+ of 400 lines of the facts left out/)
    assert.match(
      p.text,
      /\[prompt guard: report shortened to 3000 of 5400 characters; facts: 400 of 400 lines left out; evidence: \d+ of 61 lines left out; latest: \d+ of 600 lines left out\]/
    )
  }
)

guard('a small limit: the guard still keeps the stable part and the closing, and cuts the report last', () => {
  const { s, inputs } = bigCase()
  const p = renderPrompt({ ...s, settings: { ...settings, prompt_max_chars: 6000 } }, inputs)
  assert.ok(p.text.length <= 6000, `length ${p.text.length}`)
  const uncut = renderPrompt({ ...s, settings: { ...settings, prompt_max_chars: 2_000_000 } }, inputs)
  assert.ok(p.text.startsWith(uncut.stable), 'the stable part of the uncut prompt, whole')
  assert.ok(p.text.endsWith('Answer with the next action.'))
  assert.match(p.text, 'Your last answer was rejected (EVIDENCE_UNKNOWN)')
  assert.ok(p.cut.length >= 3, p.cut.join(' | '))
})

guard('nothing is cut when it fits, and the same state renders the same bytes', () => {
  const { s, inputs } = bigCase()
  const small = {
    report: 'short report',
    facts: inputs.facts.slice(0, 3),
    captures: new Map([[digest(999), readCapture(5)]])
  }
  const a = renderPrompt(s, small)
  assert.equal(a.cut, [])
  assert.not.match(a.text, '[prompt guard')
  assert.is(renderPrompt(s, small).text, a.text)
})

guard.run()

const recorded = suite('recorded v1 prompts')

recorded(
  'every prompt of the frozen v1 investigation renders again byte for byte from the state before it',
  async () => {
    const dir = path.join(repoRoot(), 'case-format', 'examples', 'valid', 'written-with-v1-prompts')
    const object = (ref: { digest: string }): Buffer =>
      readFileSync(path.join(dir, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)))
    const inputsOf = (s: CaseState): PromptInputs => {
      const doc = s.facts === null ? null : FactsDocument.decode(JSON.parse(object(s.facts).toString('utf8')))
      if (doc !== null && E.isLeft(doc)) throw new Error('facts')
      const captures = new Map<string, Capture>()
      for (const [digest, ref] of s.research.evidenceRefs) {
        const c = CaptureCodec.decode(JSON.parse(object(ref).toString('utf8')))
        if (E.isRight(c)) captures.set(digest, c.right)
      }
      return {
        report: s.report === null ? '' : object(s.report).toString('utf8'),
        facts: factLinesV1(doc === null ? [] : doc.right.facts),
        captures
      }
    }
    const compared: string[] = []
    const rerender = {
      name: 'rerender',
      version: 1,
      init: initCaseState,
      view: () => null,
      evolve: (s: CaseState, e: RecordedEvent): CaseState => {
        if (e.type === 'ModelRequested') {
          assert.is(e.data.prompt_version, 'investigation_project_v1')
          const again = renderPrompt(s, inputsOf(s))
          assert.ok(Buffer.from(again.text, 'utf8').equals(object(e.data.prompt)), `turn ${e.data.turn}`)
          compared.push(`turn ${e.data.turn}`)
        }
        return evolve(s, e)
      }
    }
    right(await replayCase(dir, [rerender])())
    assert.equal(compared, ['turn 1', 'turn 2', 'turn 3', 'turn 4'])
  }
)

recorded.run()
