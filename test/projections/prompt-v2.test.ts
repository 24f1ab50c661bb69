/**
 * The version-2 prompt on cases built in memory: the working set and its order, the guard on a
 * prompt that would be 60,000 characters (what goes, in which order, with markers that describe
 * what is shown), the fixed parts and their bounds, the notices, and determinism.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { initCaseState, type CaseState, type Evidence } from '../../src/domain/case-state.js'
import type { Fact } from '../../src/domain/facts-document.js'
import type { Capture } from '../../src/events/capture.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { renderPrompt, stablePart, type PromptInputs } from '../../src/projections/prompt.js'
import { factsIndex, TEXT_MAX_CHARS, VALUE_MAX_CHARS } from '../../src/projections/prompt-v2/facts-index.js'

const settings: InvestigationSettings = {
  prompt_version: 'investigation_project_v2',
  budget_total: 20,
  action_costs: { 'project.query': 1 },
  max_invalid_responses: 3,
  retry_delay_ms: 1000,
  prompt_max_chars: 20_000,
  source_context: null,
  max_tokens: null,
  count_refusals: true,
  answer_repeats_from_case: true,
  binding: null,
  contract: {
    source: { code_path_prefixes: ['src/'] },
    databases: [{ name: 'world', allowed_tables: ['creature_template', 'smart_scripts'] }],
    limits: {
      max_lines: 80,
      max_rows: 200,
      max_result_bytes: 262144,
      max_matches: 200,
      max_files: 200,
      max_line_chars: 400,
      max_in_values: 100,
      max_filters: 16,
      max_columns: 64
    }
  }
}
const digest = (i: number): string => `sha256:${i.toString(16).padStart(64, '0')}`
const git = {
  type: 'git' as const,
  url: 'u',
  commit: 'c'.repeat(40),
  files: [{ path: 'src/server/game/Big.cpp', blob: 'b'.repeat(40), sha256: 'e'.repeat(64), size: 1 }]
}
const base = {
  format: 'vba-capture' as const,
  format_version: 1 as const,
  schema: 'project-query-v1' as const,
  settings: {},
  settings_hash: digest(1)
}

const readCapture = (lines: number, from = 1): Capture => ({
  ...base,
  kind: 'source.read',
  origin: git,
  request: { kind: 'source.read', path: 'src/server/game/Big.cpp', start_line: from, end_line: from + lines + 49 },
  result: {
    path: 'src/server/game/Big.cpp',
    blob: 'b'.repeat(40),
    total_lines: 5000,
    start_line: from,
    end_line: from + lines - 1,
    lines: Array.from({ length: lines }, (_, i) => ({
      line: from + i,
      text: `    DoSomethingWith(creature, ${from + i}); // a line of typical length for C++ code`
    })),
    eof: false,
    truncated: true,
    next_start_line: from + lines,
    requested_end_line: from + lines + 49,
    line_limit_exceeded: true,
    line_limit: lines,
    requested_line_count: lines + 50
  }
})

const rowsCapture = (rows: number, table = 'smart_scripts'): Capture => ({
  ...base,
  kind: 'database.rows',
  origin: { type: 'database', client: 'mysql2', database: 'world', snapshot_id: 'snap-1' },
  request: {
    kind: 'database.rows',
    table,
    columns: ['entryorguid', 'id', 'comment'],
    filters: [{ column: 'entryorguid', operator: 'eq', value: 23487 }],
    offset: 0,
    limit: rows
  },
  result: {
    table,
    columns: [
      { name: 'entryorguid', type: 'INT' },
      { name: 'id', type: 'INT' },
      { name: 'comment', type: 'TEXT' }
    ],
    offset: 0,
    limit: rows,
    row_count: rows,
    order: [{ column: 'id', direction: 'asc' }],
    order_source: 'primary_key',
    rows: Array.from({ length: rows }, (_, i) => ({
      entryorguid: 23487,
      id: i,
      comment: `Wild Wolpertinger - On Spellhit - action number ${i} of the script`
    })),
    has_more: true,
    next_offset: rows,
    complete_filtered_rows: false
  }
})

interface Case {
  s: CaseState
  inputs: PromptInputs
}

/** Evidence E1..En from captures, recorded at increasing seqs; `results` answered plans. */
const withEvidence = (
  s: CaseState,
  captures: Map<string, Capture>,
  list: Array<{ capture: Capture; result: boolean; enrichment?: boolean }>
): void => {
  list.forEach((x, i) => {
    const id = `E${i + 1}`
    const d = digest(100 + i)
    const e: Evidence = {
      id,
      digest: d,
      kind: x.capture.kind,
      first_seq: 10 + i * 3,
      repeats: 0,
      origin: x.enrichment === true ? 'enrichment' : 'query',
      last_result_seq: x.result ? 10 + i * 3 : null,
      last_plan: x.result ? `P${i + 2}` : null
    }
    s.research.evidence.set(id, e)
    s.research.evidenceRefs.set(d, { digest: d, size: 1 })
    captures.set(d, x.capture)
  })
}

const facts = (n: number): Fact[] =>
  Array.from({ length: n }, (_, i) => ({
    fact_id: `F${i + 1}`,
    type: 'entity',
    entity_type: 'creature',
    id: 100 + i,
    source: 'input',
    table: 'creature_template',
    values: { entry: 100 + i, name: `Generated creature number ${i}` },
    texts: {},
    provenance: { capture: digest(100), pointer: `/result/rows/${i}` }
  }))

/** INVESTIGATING, H1 citing E1 (200 rows) and E2 (a 300-line read), results E3..E8 (reads), the latest E8. */
const bigCase = (): Case => {
  const s = initCaseState()
  s.settings = settings
  s.state = 'INVESTIGATING'
  s.turn = 20
  s.interpretation = 'Netted wolpertingers despawn without giving the item.'
  const captures = new Map<string, Capture>()
  withEvidence(s, captures, [
    { capture: rowsCapture(200), result: false, enrichment: true },
    { capture: readCapture(300, 1000), result: true },
    ...Array.from({ length: 6 }, (_, i) => ({ capture: readCapture(60 + i * 10, 2000 + i * 100), result: true }))
  ])
  s.hypotheses.set('H1', {
    id: 'H1',
    statement: 'The net despawns the creature first.',
    status: 'open',
    evidence: ['E1', 'E2']
  })
  s.hypotheses.set('H2', { id: 'H2', statement: 'A refuted idea.', status: 'refuted', evidence: ['E3'] })
  s.lastResult = {
    kind: 'capture',
    evidence_id: 'E8',
    digest: digest(107),
    repeat: false,
    plan_id: 'P9',
    seq: 31,
    from_case: false
  }
  s.lastDecisionSeq = 30
  return { s, inputs: { report: 'The wolpertinger vanishes. '.repeat(40), facts: facts(20), captures } }
}

const at = (c: Case, max: number): ReturnType<typeof renderPrompt> =>
  renderPrompt({ ...c.s, settings: { ...settings, prompt_max_chars: max } }, c.inputs)

const set = suite('the working set')

set(
  'cited evidence first (by open hypotheses), then the latest results newest first, each once; the rest one line each',
  () => {
    const p = at(bigCase(), 2_000_000)
    const order = [...p.text.matchAll(/^(?:Latest result )?(E\d+) \(([^)]*)\):$/gm)].map((m) => m[1])
    assert.equal(
      order,
      ['E1', 'E2', 'E8', 'E7', 'E6'],
      'cited E1 E2; then the three latest results E8 E7 E6 (E3 is cited only by a refuted hypothesis)'
    )
    assert.match(p.text, 'Latest result E8 (answers plan P9):')
    assert.match(p.text, 'E1 (cited by H1; from the case preparation):')
    assert.match(
      p.text,
      /^ {2}E3 source\.read src\/server\/game\/Big\.cpp lines 2000-2109: lines 2000-2059 of src\/server\/game\/Big\.cpp \(5000 lines\) \(\d+ chars\)$/m
    )
    assert.match(p.text, /^ {2}E5 source\.read /m)
    assert.not.match(p.text, /^ {2}E(1|2|6|7|8) /m, 'a payload is not listed again')
  }
)

set('the same state gives the same bytes; a copy of it too', () => {
  const c = bigCase()
  assert.is(at(c, 20_000).text, at(c, 20_000).text)
  assert.is(
    renderPrompt(structuredClone({ ...c.s, settings: { ...settings, prompt_max_chars: 20_000 } }), c.inputs).text,
    at(c, 20_000).text
  )
})

set.run()

const guard = suite('the guard, on a prompt that would be 60,000 characters')

guard(
  'at 20,000: fixed parts whole; payloads trimmed inside, largest first, none dropped; every marker says what is shown',
  () => {
    const c = bigCase()
    const whole = at(c, 2_000_000)
    assert.ok(whole.text.length > 60_000, `the uncut prompt has ${whole.text.length} characters`)
    assert.equal(whole.cut, [])
    const p = at(c, 20_000)
    assert.ok(p.text.length <= 20_000, `length ${p.text.length}`)
    assert.ok(p.text.startsWith(stablePart(c.s)))
    assert.ok(
      p.text.endsWith(
        'Budget remaining: 20 (a query costs 1; an identical query again costs nothing).\nAnswer with the next action.'
      )
    )
    // fixed parts: the report, every fact, the state
    assert.match(p.text, `Report:\n${c.inputs.report}`)
    for (let i = 1; i <= 20; i++)
      assert.match(
        p.text,
        `  F${i} creature ${99 + i} (creature_template): entry=${99 + i}, name=Generated creature number ${i - 1}`
      )
    assert.match(p.text, '  H1 [open] The net despawns the creature first. (evidence: E1, E2)')
    // trimmed, not dropped: every payload keeps its header
    for (const id of ['E1', 'E2', 'E8', 'E7', 'E6'])
      assert.match(p.text, new RegExp(`^(Latest result )?${id} \\(`, 'm'))
    assert.not.match(p.text, 'one-line summary')
    // the largest payloads lost the most: the 200 rows and the 300 lines are trimmed
    const rows = p.text.split('\n').filter((l) => /^23487\|\d+\|/.test(l)).length
    assert.ok(rows < 200 && rows >= 3, `${rows} rows shown`)
    assert.match(
      p.text,
      `[prompt limit: rows at offsets ${rows}-199 of this page are not shown]; continue with offset ${rows}`
    )
    assert.not.match(p.text, 'continue with offset 200', 'no continuation past what was shown')
    const e2 = p.text.slice(p.text.indexOf('E2 (cited by H1'), p.text.indexOf('Latest result E8'))
    const lines = e2.split('\n').filter((l) => /^\d{4}\| /.test(l)).length
    assert.ok(lines < 300, `${lines} of 300 lines of E2`)
    assert.match(
      e2,
      `[prompt limit: lines ${1000 + lines}-1299 are not shown]; continue with start_line ${1000 + lines} and end_line 1349`
    )
    // the guard says what it did, payload by payload
    assert.match(
      p.text,
      /\[prompt guard \(limit 20000 characters\): E1: rows \d+-200 not shown; E2: lines \d+-300 not shown/
    )
    assert.ok(
      p.cut.every((x) => / not shown$/.test(x)),
      p.cut.join(' | ')
    )
  }
)

guard(
  'at 8,000: payloads drop to one line in order (older results, then cited evidence, the latest result last); older evidence goes after that',
  () => {
    const c = bigCase()
    const p = at(c, 8000)
    assert.ok(p.text.length <= 8000, `length ${p.text.length}`)
    assert.ok(p.text.startsWith(stablePart(c.s)))
    const dropped = p.cut.filter((x) => x.endsWith('one-line summary')).map((x) => x.split(' ')[0] ?? '')
    assert.ok(dropped.length > 0, p.cut.join(' | '))
    const order = ['E6', 'E7', 'E2', 'E1', 'E8']
    assert.equal(
      [...dropped].sort((a, b) => order.indexOf(a) - order.indexOf(b)),
      order.slice(0, dropped.length),
      'dropped in the documented order'
    )
    assert.equal(dropped.length, 4)
    // the kept payload is trimmed again from whole, and its marker is true
    const kept = p.text.slice(p.text.indexOf('Latest result E8 (answers plan P9):'))
    const shown = kept.split('\n').filter((l) => /^\d{4}\| /.test(l)).length
    assert.ok(shown > 3, `${shown} lines of E8`)
    assert.match(
      kept,
      `[prompt limit: lines ${2500 + shown}-2609 are not shown]; continue with start_line ${2500 + shown} and end_line 2659`
    )
    assert.match(p.text, /^Latest result E8 \(answers plan P9\):$/m, 'the latest result keeps its payload longest')
    for (const id of dropped)
      assert.match(
        p.text,
        new RegExp(`^${id} \\([^\\n]*\\[its payload is not shown: the prompt limit; \\d+ characters\\]$`, 'm')
      )
  }
)

guard(
  'older evidence is left out only after every payload is a one-line summary, oldest first, with a marker naming it',
  () => {
    const c = bigCase()
    const many = new Map(c.inputs.captures)
    const s = structuredClone(c.s)
    withEvidence(s, many, [
      { capture: rowsCapture(200), result: false, enrichment: true },
      { capture: readCapture(300, 1000), result: true },
      ...Array.from({ length: 6 }, (_, i) => ({ capture: readCapture(60 + i * 10, 2000 + i * 100), result: true })),
      ...Array.from({ length: 120 }, (_, i) => ({
        capture: rowsCapture(2, `table_${i}`),
        result: false,
        enrichment: true
      }))
    ])
    const p = renderPrompt({ ...s, settings: { ...settings, prompt_max_chars: 8000 } }, { ...c.inputs, captures: many })
    assert.ok(p.text.length <= 8000, `length ${p.text.length}`)
    assert.equal(
      p.cut.filter((x) => x.endsWith('one-line summary')).length,
      5,
      'every payload became its summary first'
    )
    const marker =
      /\[E3–E(\d+): (\d+) older evidence entries are not listed \(the prompt limit\); asking their query again shows them\]/.exec(
        p.text
      )
    assert.ok(marker !== null, 'the marker names the left-out range')
    const next = /^ {2}E(\d+) /.exec(p.text.slice(p.text.indexOf(marker[0]) + marker[0].length + 1))
    assert.ok(next !== null && Number(next[1]) > Number(marker[1]), 'the entries after the range are listed')
    assert.match(p.text, '  E128 database.rows table_119 where entryorguid = 23487', 'the newest is listed')
  }
)

guard(
  'at 8,000 with fixed parts larger than the limit: the contract, state line, notices and closing stay whole; the rest shortens by whole entries with markers',
  () => {
    const c = bigCase()
    const s: CaseState = {
      ...c.s,
      settings: { ...settings, prompt_max_chars: 8000 },
      hypotheses: new Map(
        Array.from({ length: 12 }, (_, i) => [
          `H${i + 1}`,
          {
            id: `H${i + 1}`,
            statement: `hypothesis ${i + 1}: ${'because '.repeat(40)}`,
            status: 'open' as const,
            evidence: ['E1']
          }
        ])
      )
    }
    s.lastRejection = { code: 'EVIDENCE_UNKNOWN', message: 'unknown evidence ids: E99' }
    const p = renderPrompt(s, { ...c.inputs, report: 'The wolpertinger vanishes. '.repeat(200), facts: facts(400) })
    assert.ok(p.text.length <= 8000, `length ${p.text.length}`)
    assert.ok(p.text.startsWith(stablePart(s)))
    assert.ok(p.text.endsWith('Answer with the next action.'))
    assert.match(
      p.text,
      'Your last answer was rejected (EVIDENCE_UNKNOWN): unknown evidence ids: E99\nAnswer with one JSON object of the contract above.'
    )
    assert.match(p.text, 'Report:\nThe wolpertinger vanishes.', 'the report is never dropped')
    assert.match(p.text, /…\[cut at \d+ of 5400 characters\]/)
    assert.match(p.text, /the limit is too small for the fixed parts/)
    // every line is whole: no marker ends mid-line
    for (const l of p.text.split('\n'))
      if (l.includes('['))
        assert.ok(
          !/\[[^\]]*$/.test(l) || l.startsWith('  {"next"') || l.includes('"evidence": ['),
          `an unclosed marker: ${l}`
        )
  }
)

guard.run()

const fixed = suite('fixed parts and notices')

fixed(
  'facts: values and template texts whole up to their bound, then a marker with the full length outside the quotes',
  () => {
    const long = 'x'.repeat(VALUE_MAX_CHARS + 700)
    const text = 'Say it. '.repeat(500)
    const lines = factsIndex([
      {
        fact_id: 'F1',
        type: 'entity',
        entity_type: 'quest',
        id: 1,
        source: 'input',
        table: 'quest_template',
        values: { ID: 1, Note: long },
        texts: { QuestDescription: 'F2' },
        provenance: { capture: digest(1), pointer: '/result/rows/0' }
      },
      {
        fact_id: 'F2',
        type: 'project_description',
        entity_type: 'quest',
        id: 1,
        column: 'QuestDescription',
        role: 'quest giver text',
        text,
        describes: 'template_text',
        notice: 'n',
        provenance: { capture: digest(1), pointer: '/result/rows/0/QuestDescription' }
      }
    ]).join('\n')
    assert.match(lines, `Note=${'x'.repeat(VALUE_MAX_CHARS)}…[cut at ${VALUE_MAX_CHARS} of ${long.length} characters]`)
    assert.match(
      lines,
      `${JSON.stringify(text.slice(0, TEXT_MAX_CHARS))}…[cut at ${TEXT_MAX_CHARS} of ${text.length} characters]`
    )
    const many = factsIndex(facts(400))
    assert.match(
      many[many.length - 1] ?? '',
      /^ {2}\[facts F\d+–F400 \(\d+ of 400\) are not listed: the index shows 6000 characters/
    )
  }
)

fixed(
  'a refusal says what the model can change, only until its next decision; lab tests and feedback are shown',
  () => {
    const c = bigCase()
    const s: CaseState = {
      ...c.s,
      lastResult: {
        kind: 'failure',
        code: 'TABLE_NOT_ALLOWED',
        message: 'table spell_dbc is not on the allowlist of world',
        plan_id: 'P21',
        arguments: { kind: 'database.rows', table: 'spell_dbc', columns: ['ID'], filters: [], offset: 0, limit: 5 },
        seq: 40
      },
      lastDecisionSeq: 39,
      stalled: 1
    }
    s.labRequests.set('L1', { description: 'Net a wild wolpertinger.', feedback: 'It despawns; no item.' })
    s.labRequests.set('L2', { description: 'Net it twice.', feedback: null })
    const p = renderPrompt(s, c.inputs).text
    assert.match(
      p,
      'Your last query (plan P21) was refused (TABLE_NOT_ALLOWED): table spell_dbc is not on the allowlist of world'
    )
    assert.match(
      p,
      'No evidence was recorded and no budget was used. Ask one of the allowed tables of world: creature_template, smart_scripts.'
    )
    assert.match(
      p,
      'Refused or repeated queries in a row: 1 of 3 (at 3 the investigation blocks until an operator resumes it).'
    )
    assert.match(
      p,
      '  L1 [feedback recorded] Net a wild wolpertinger.\n    feedback on L1: "It despawns; no item."\n  L2 [waiting for feedback] Net it twice.'
    )
    const operator = renderPrompt(
      {
        ...s,
        lastResult: {
          kind: 'failure',
          code: 'TABLE_NOT_FOUND',
          message: 'table x is allowed but does not exist in world',
          plan_id: 'P21',
          arguments: null,
          seq: 40
        }
      },
      c.inputs
    ).text
    assert.match(operator, 'This cannot be fixed by asking differently: only the operator can change it')
    const stale = renderPrompt({ ...s, lastDecisionSeq: 41 }, c.inputs).text
    assert.not.match(stale, 'was refused', 'a decision after the refusal makes it stale')
  }
)

fixed('the contract names the databases, the allowed tables, the limits and where code lives', () => {
  const stable = stablePart(bigCase().s)
  assert.match(stable, '=== investigation_project_v2 ===')
  assert.match(stable, '  world: creature_template, smart_scripts')
  assert.match(stable, 'source.read 80 lines (max_lines); database.rows 200 rows (max_rows) and 262144 bytes')
  assert.match(
    stable,
    'Code is under src/; other paths may hold data dumps (.sql): path_prefix "src/" searches code only.'
  )
  assert.match(stable, 'Refused or repeated queries count like invalid answers: 3 in a row block the investigation.')
})

fixed.run()

const newest = suite('the newest result whole (newest_result_whole, recorded by starts since issue 30)')

/** bigCase with a fresh read of max_lines (80) lines as its latest result E8. */
const freshRead = (): Case => {
  const c = bigCase()
  const captures = new Map(c.inputs.captures)
  captures.set(digest(107), readCapture(80, 2500))
  return { s: c.s, inputs: { ...c.inputs, captures } }
}
const whole = (c: Case, max: number): ReturnType<typeof renderPrompt> =>
  renderPrompt({ ...c.s, settings: { ...settings, prompt_max_chars: max, newest_result_whole: true } }, c.inputs)
const shownLines = (text: string, id: string): number[] => {
  const from = text.indexOf(`${id} (`)
  const rest = text.slice(from + 1)
  const end = rest.search(/^(Latest result )?E\d+ \(|^Older evidence|^\[prompt guard/m)
  return [...(end < 0 ? rest : rest.slice(0, end)).matchAll(/^ ?(\d{4})\| /gm)].map((m) => Number(m[1]))
}

newest('a fresh read of max_lines lines is shown whole; without the setting the same prompt cuts it', () => {
  const c = freshRead()
  const old = at(c, 20_000)
  assert.ok(shownLines(old.text, 'E8').length < 80, 'the old guard trims the latest read (what issue 30 saw)')
  const p = whole(c, 20_000)
  assert.ok(p.text.length <= 20_000, `length ${p.text.length}`)
  assert.equal(
    shownLines(p.text, 'E8'),
    Array.from({ length: 80 }, (_, i) => 2500 + i),
    'lines 2500-2579, every one'
  )
  assert.not.match(p.text, /E8: lines \d+-80 not shown/)
  assert.ok(!p.cut.some((x) => x.startsWith('E8')), p.cut.join(' | '))
})

newest('older and uncited results give way before cited evidence; the latest stays whole while it fits', () => {
  const c = freshRead()
  const p = whole(c, 20_000)
  // E6 and E7 (uncited results) are at their floor before a cited payload loses more than they did
  const e7 = shownLines(p.text, 'E7').length
  const e2 = shownLines(p.text, 'E2').length
  assert.ok(e7 <= 3 || e2 === 300, `E7 shows ${e7} lines while cited E2 shows ${e2}`)
  for (const max of [16_000, 14_000]) {
    const q = whole(c, max)
    assert.ok(q.text.length <= max, `length ${q.text.length}`)
    assert.is(shownLines(q.text, 'E8').length, 80, `at ${max}: ${q.cut.join(' | ')}`)
  }
  // at 14,000 the others are one-line summaries, cited E1 and E2 too
  const q = whole(c, 14_000)
  for (const id of ['E1', 'E2', 'E6', 'E7'])
    assert.ok(q.cut.includes(`${id} shown as a one-line summary`), q.cut.join(' | '))
})

newest('a latest result larger than the room alone is fitted as before, within the limit', () => {
  const c = freshRead()
  const p = whole(c, 6000)
  assert.ok(p.text.length <= 6000, `length ${p.text.length}`)
  assert.ok(
    p.cut.some((x) => x.startsWith('E8')),
    p.cut.join(' | ')
  )
})

newest.run()

const wording = suite('exact wording (exact_wording, recorded by starts since issue 32)')

/** INVESTIGATING with one result E1, a source.files capture with one path, asked by an MCP client (no plan). */
const clientQuery = (): Case => {
  const s = initCaseState()
  s.settings = settings
  s.state = 'INVESTIGATING'
  s.turn = 2
  const files: Capture = {
    ...base,
    kind: 'source.files',
    origin: git,
    request: { kind: 'source.files', text: 'Big' },
    result: {
      text: 'Big',
      match_count: 1,
      files: [{ path: 'src/server/game/Big.cpp', kind: 'blob' }],
      truncated: false
    }
  }
  const captures = new Map<string, Capture>()
  withEvidence(s, captures, [{ capture: files, result: true }])
  s.lastResult = {
    kind: 'capture',
    evidence_id: 'E1',
    digest: digest(100),
    repeat: false,
    plan_id: null,
    seq: 10,
    from_case: false,
    requester: { protocol: 'mcp', name: 'test-agent', version: '1.2.3' }
  }
  s.lastDecisionSeq = 5
  return { s, inputs: { report: 'The wolpertinger vanishes.', facts: [], captures } }
}
const withWording = (c: Case, exact: boolean): string =>
  renderPrompt({ ...c.s, settings: { ...settings, ...(exact ? { exact_wording: true } : {}) } }, c.inputs).text

wording('counts agree with their nouns and a client query names its client; without the setting as recorded', () => {
  const c = clientQuery()
  const exact = withWording(c, true)
  assert.match(exact, 'Latest result E1 (answers a query of the MCP client "test-agent 1.2.3"):')
  assert.match(exact, ': 1 path matches\n')
  assert.not.match(exact, "an operator's query")
  const old = withWording(c, false)
  assert.match(old, "Latest result E1 (answers an operator's query):")
  assert.match(old, ': 1 paths match\n')
  assert.is(old.replace("an operator's query", '').length, old.length - "an operator's query".length)
})

wording('a refused client query says who asked; a refused operator query says an operator', () => {
  const c = clientQuery()
  const requester = { protocol: 'mcp' as const, name: 'test-agent', version: '1.2.3' }
  const refused = (r?: typeof requester): Case => ({
    s: {
      ...c.s,
      lastResult: {
        kind: 'failure',
        code: 'PATH_INVALID',
        message: 'no',
        plan_id: null,
        arguments: null,
        seq: 11,
        ...(r === undefined ? {} : { requester: r })
      }
    },
    inputs: c.inputs
  })
  assert.match(
    withWording(refused(requester), true),
    'The last query, asked by the MCP client "test-agent 1.2.3", was refused (PATH_INVALID): no'
  )
  assert.match(withWording(refused(), true), 'The last query, asked by an operator, was refused (PATH_INVALID)')
  assert.match(withWording(refused(requester), false), 'Your last query was refused (PATH_INVALID): no')
})

wording('the facts index counts exactly: 1 hit, 1 row, 1 query', () => {
  const prov = { capture: digest(100), pointer: '/result' }
  const list: Fact[] = [
    {
      fact_id: 'F1',
      type: 'source_symbol',
      relation: 'symbol_in_source',
      symbol: 'NPC_X',
      hits: 1,
      path_prefix: null,
      complete: true,
      provenance: prov
    } as unknown as Fact,
    {
      fact_id: 'F2',
      type: 'project_context_coverage',
      complete: true,
      queries_run: 1,
      identical_queries_reused: 0,
      left_out: [],
      cycles_cut: [],
      notice: '',
      provenance: prov
    } as unknown as Fact
  ]
  const exact = factsIndex(list, 6000, 'exact').join('\n')
  assert.match(exact, 'has 1 hit in the source')
  assert.match(exact, 'nothing left out (1 query)')
  const old = factsIndex(list, 6000, 'legacy').join('\n')
  assert.match(old, 'has 1 hits in the source')
  assert.match(old, 'nothing left out (1 queries)')
})

wording.run()
