/**
 * FROZEN: the prompt renderer of version investigation_project_v1: its output is byte for byte as
 * released (its exports were renamed, and its sections moved into helpers with the output compared
 * on 3,000 random states and every recorded v1 prompt; the answer contract prompt v2 shares is exported). Investigations started with that prompt
 * version keep it for their life, and their recorded prompts are re-rendered from it: what it
 * renders is never changed.
 *
 * The prompt view, version investigation_project_v1: the next model prompt, rendered
 * deterministically from the folded case state and the payloads it selects. The stable part
 * (role, answer contract, tool contract, settings) comes first and is byte-identical across
 * turns, so model providers can cache it. The case part leaves out the input inventory and
 * duplicate earlier results, keeps only ids and provenance of evidence (payloads only for the
 * latest result, rendered compactly), and says what it selected and why.
 *
 * The guard keeps the prompt under prompt_max_chars without ever cutting the stable part, the
 * current state (phase, interpretation, hypotheses), the outcome of the last plan, the rejection
 * notice or the closing instruction. Payloads are cut first, oldest first: the revision's facts,
 * then the evidence index (oldest entries first), then the latest result's body (its header and
 * markers stay), then the report; the prompt says what it cut.
 */
import type { Capture } from '../../events/capture.js'
import type { CaseState } from '../../domain/case-state.js'
import { remainingBudget, queryCost } from '../../domain/budget.js'
import { captureText, requestText } from './capture-text.js'

export const PROMPT_VERSION_V1 = 'investigation_project_v1'

export interface PromptInputsV1 {
  readonly report: string
  /** Compact lines describing the revision's facts (with their ids). */
  readonly facts: readonly string[]
  /** Captures by object digest (the latest result must be present to be shown). */
  readonly captures: ReadonlyMap<string, Capture>
}

/** A rendered prompt: the text, its stable prefix, the prompt version and what the guard cut. */
export interface RenderedPromptV1 {
  readonly text: string
  /** The stable part the text starts with (byte-identical across the turns of one investigation). */
  readonly stable: string
  readonly version: typeof PROMPT_VERSION_V1
  /** What the guard cut, in words (empty when nothing was cut). */
  readonly cut: readonly string[]
}

const KINDS = [
  'source.files {text, path_prefix?}',
  'source.search {text, path_prefix?}',
  'source.symbol {symbol, path_prefix?}',
  'source.registration {symbol, path_prefix?}',
  'source.schema {text}',
  'source.read {path, start_line, end_line}',
  'database.tables {text?, database?}',
  'database.schema {table, database?}',
  'database.rows {table, columns, filters, offset, limit, order_by?, database?}',
  'database.count {table, filters, database?}'
]

/** The role and the answer contract: what the model is and how it answers (prompt v2 says the same). */
export const ANSWER_CONTRACT: readonly string[] = [
  'You investigate a bug report of a TrinityCore-family game server (C++ core, MySQL world database).',
  'Answer with exactly one JSON object and nothing else.',
  'Interpretation phase: {"interpretation": {"summary": "..."}}',
  'Investigation phase, one of:',
  '  {"next": {"kind": "tool", "operation": "project.query", "arguments": {"kind": "...", ...}}}',
  '  {"next": {"kind": "hypothesis", "action": "propose", "statement": "...", "evidence": ["E1"]}}',
  '  {"next": {"kind": "hypothesis", "action": "update", "hypothesis_id": "H1", "status": "supported|refuted|open", "evidence": ["E2"], "note": "..."}}',
  '  {"next": {"kind": "lab_test", "description": "..."}}',
  '  {"next": {"kind": "conclusion", "summary": "...", "hypotheses": ["H1"], "evidence": ["E1"]}}'
]

/** The stable part: identical for every turn of one investigation. */
export const stablePartV1 = (s: CaseState): string => {
  const st = s.settings
  const ctx = st?.source_context ?? null
  const kinds = ctx === null ? KINDS : [...KINDS, 'source.context {text, path_prefix?}']
  return [
    `=== ${PROMPT_VERSION_V1} ===`,
    ...ANSWER_CONTRACT,
    'project.query kinds (read-only; the pinned commit and the allow-listed world tables only):',
    ...kinds.map((k) => `  - ${k}`),
    'database filters: {column, operator: eq|ne|lt|le|gt|ge|contains|in, value}; joined with AND.',
    'Results are shown compactly: source lines as "123| text" under their file (">" marks a hit), rows as "a|b" under the column names and types (NULL is NULL; quoted text is a JSON string).',
    'A lexical hit proves neither a definition, a registration nor an executed call. Equal numbers may name different things.',
    ...(ctx === null
      ? []
      : [
          `source.context is enabled (context_lines ${ctx.context_lines}, max_searches ${ctx.max_searches}, max_matches ${ctx.max_matches}, max_files ${ctx.max_files}, max_blocks ${ctx.max_blocks}, max_total_lines ${ctx.max_total_lines}, registration_prefixes ${ctx.registration_prefixes.join(',')}).`,
          'Use source.context before separate source.search and source.read calls.'
        ]),
    `Budget: ${st?.budget_total ?? 0} units; project.query costs ${st?.action_costs['project.query'] ?? 1}.`,
    `=== end of contract ===`
  ].join('\n')
}

/** A part of the case section: fixed parts are never cut; payloads are, in `order`. */
interface Part {
  readonly name: string
  lines: string[]
  /** Cut order of a payload (lower first); undefined for fixed parts. */
  readonly order?: number
  /** Lines of a payload that are never cut (its header and markers). */
  readonly keepHead?: number
  readonly keepTail?: number
}

const REPORT_MAX = 3000
const STATEMENT_MAX = 300

const clip = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`

/** The current state part: the interpretation and the hypotheses (none when there is neither). */
const hypothesesPart = (s: CaseState): Part[] => {
  const stateLines: string[] = []
  if (s.interpretation !== null) stateLines.push(`Interpretation: ${clip(s.interpretation, 2000)}`)
  if (s.hypotheses.size > 0) {
    stateLines.push(
      'Hypotheses (ids and evidence ids only):',
      ...[...s.hypotheses.values()].map(
        (h) =>
          `  ${h.id} [${h.status}] ${clip(h.statement, STATEMENT_MAX)} (evidence: ${h.evidence.join(', ') || 'none'})`
      )
    )
  }
  return stateLines.length > 0 ? [{ name: 'hypotheses', lines: stateLines }] : []
}

/** The evidence index payload: ids, what was asked and where, oldest first (none without evidence). */
const evidencePart = (s: CaseState, inputs: PromptInputsV1): Part[] => {
  const evidence = [...s.research.evidence.values()].sort((a, b) => a.first_seq - b.first_seq)
  if (evidence.length === 0) return []
  return [
    {
      name: 'evidence',
      order: 1,
      keepHead: 1,
      lines: [
        'Evidence (ids and what was asked; payloads are not repeated):',
        ...evidence.map((e) => {
          const c = inputs.captures.get(e.digest)
          const asked = c === undefined ? e.kind : requestText(c.kind, c.request)
          const at =
            c === undefined
              ? ''
              : c.origin.type === 'git'
                ? ` @ ${c.origin.commit.slice(0, 12)}`
                : ` @ ${c.origin.database}/${c.origin.snapshot_id}`
          return `  ${e.id} ${clip(asked, 200)}${at}${e.repeats > 0 ? ` (repeated ${e.repeats}x)` : ''}`
        })
      ]
    }
  ]
}

/** The outcome of the last plan: the latest result, a repeat, a refusal or a cancellation (none otherwise). */
const outcomePart = (s: CaseState, inputs: PromptInputsV1): Part[] => {
  const parts: Part[] = []
  const last = s.lastResult
  if (last?.kind === 'capture') {
    const c = inputs.captures.get(last.digest)
    if (last.repeat)
      parts.push({
        name: 'outcome',
        lines: [
          `Latest result: ${last.evidence_id} again (identical to earlier evidence; not shown twice, not new evidence).`
        ]
      })
    else if (c !== undefined) {
      const t = captureText(c)
      const selected = `Latest result ${last.evidence_id} (selected: it answers the ${last.plan_id === null ? 'last query' : 'last confirmed plan'}):`
      parts.push({
        name: 'latest',
        order: 2,
        keepHead: 1 + t.head.length,
        keepTail: t.tail.length,
        lines: [selected, ...t.head, ...t.body, ...t.tail]
      })
    }
  } else if (last?.kind === 'failure') {
    parts.push({
      name: 'outcome',
      lines: [
        `Your last query${last.plan_id === null ? '' : ` (plan ${last.plan_id})`} was refused (${last.code}): ${clip(last.message, 500)}`,
        `Request: ${clip(last.arguments === null ? 'unknown' : requestText(String(last.arguments['kind']), last.arguments), 600)}`,
        'No evidence was recorded for it; you may ask a different or narrower query.'
      ]
    })
  } else if (last?.kind === 'cancelled') {
    parts.push({
      name: 'outcome',
      lines: [
        `An operator cancelled your last plan${last.plan_id === null ? '' : ` ${last.plan_id}`}: ${clip(last.reason, 500)}`
      ]
    })
  }
  return parts
}

/** The rejection notice of the last answer (none when it was not rejected). */
const rejectionPart = (s: CaseState): Part[] =>
  s.lastRejection === null
    ? []
    : [
        {
          name: 'rejection',
          lines: [
            `Your last answer was rejected (${s.lastRejection.code}): ${clip(s.lastRejection.message, 600)}`,
            'Answer with one JSON object of the contract above.'
          ]
        }
      ]

export const renderPromptV1 = (s: CaseState, inputs: PromptInputsV1): RenderedPromptV1 => {
  const max = s.settings?.prompt_max_chars ?? 20_000
  const cut: string[] = []
  const stable = stablePartV1(s)
  const phase = s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'
  const parts: Part[] = []
  parts.push({ name: 'state', lines: ['=== case ===', `Phase: ${phase}. Turn ${s.turn + 1}.`] })
  const report = inputs.report.length > REPORT_MAX ? `${inputs.report.slice(0, REPORT_MAX)}…` : inputs.report
  if (report !== inputs.report) cut.push(`report shortened to ${REPORT_MAX} of ${inputs.report.length} characters`)
  parts.push({ name: 'report', order: 4, keepHead: 1, lines: ['Report:', ...report.split('\n')] })
  if (inputs.facts.length > 0)
    parts.push({
      name: 'facts',
      order: 0,
      keepHead: 1,
      lines: ['Facts of the prepared revision (technical context with provenance, not a diagnosis):', ...inputs.facts]
    })
  parts.push(...hypothesesPart(s))
  parts.push(...evidencePart(s, inputs))
  parts.push(...outcomePart(s, inputs))
  parts.push(...rejectionPart(s))
  const closing = [
    `Budget remaining: ${remainingBudget(s)} (a query costs ${queryCost(s)}).`,
    phase === 'interpretation' ? 'Answer with the interpretation.' : 'Answer with the next action.'
  ]

  const assemble = (): string => {
    const guard = cut.length === 0 ? [] : [`[prompt guard: ${cut.join('; ')}]`.slice(0, 1200)]
    return [stable, ...parts.map((p) => p.lines.join('\n')), ...guard, ...closing].join('\n')
  }
  let text = assemble()
  // The guard: payloads in their order, each down to its kept lines, dropping body lines from the end.
  for (const p of parts.filter((x) => x.order !== undefined).sort((a, b) => (a.order ?? 0) - (b.order ?? 0))) {
    if (text.length <= max) break
    const head = p.keepHead ?? 0
    const tail = p.keepTail ?? 0
    const body = p.lines.slice(head, p.lines.length - tail)
    if (body.length === 0) continue
    const total = body.join('\n').length
    // Keep the body's first lines while they fit; oldest-first payloads (evidence) drop their oldest lines.
    const dropOldest = p.name === 'evidence'
    const kept: string[] = []
    let used = 0
    const over = text.length - max + 120
    const room = Math.max(0, total - over)
    const ordered = dropOldest ? [...body].reverse() : body
    for (const l of ordered) {
      if (used + l.length + 1 > room) break
      kept.push(l)
      used += l.length + 1
    }
    const keptLines = dropOldest ? kept.reverse() : kept
    const left = body.length - keptLines.length
    const marker = `[${left} of ${body.length} lines of ${p.name === 'latest' ? 'the latest result' : `the ${p.name}`} left out${dropOldest ? ' (the oldest)' : ''}: the prompt limit is ${max} characters${p.name === 'latest' ? '; the full capture is in the case' : ''}]`
    p.lines = [
      ...p.lines.slice(0, head),
      ...(dropOldest ? [marker, ...keptLines] : [...keptLines, marker]),
      ...p.lines.slice(p.lines.length - tail)
    ]
    cut.push(`${p.name}: ${left} of ${body.length} lines left out`)
    text = assemble()
  }
  if (text.length > max) {
    // Only fixed parts are left: say so and keep the stable part, the outcome and the closing.
    cut.push('the case state was shortened: the prompt limit is too small for it')
    const fixed = parts.filter((p) => p.order === undefined && p.name !== 'state')
    for (const p of fixed) p.lines = p.lines.map((l) => clip(l, 120))
    text = assemble()
    if (text.length > max) {
      const end = [...closing].join('\n')
      const room = Math.max(0, max - stable.length - end.length - 2)
      text = `${stable}\n${text.slice(stable.length + 1, stable.length + 1 + room)}\n${end}`.slice(0, max)
    }
  }
  return { text, stable, version: PROMPT_VERSION_V1, cut }
}
