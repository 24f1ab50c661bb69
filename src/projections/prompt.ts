/**
 * The prompt view, version investigation_project_v1: the next model prompt, rendered
 * deterministically from the folded lifecycle and the payloads it selects. The stable part (role,
 * answer contract, tool contract, settings) comes first and is byte-identical across turns, so
 * model providers can cache it. The case part leaves out the input inventory and duplicate earlier
 * results, keeps only ids and provenance of evidence (payloads only for the latest result), and
 * says what it selected and why. A hard guard keeps the prompt under prompt_max_chars and says what
 * was cut; it is never exceeded silently.
 */
import type { Capture } from '../events/capture.js'
import { remainingBudget, type CaseState } from '../domain/case-state.js'

export const PROMPT_VERSION = 'investigation_project_v1'

export interface PromptInputs {
  readonly report: string
  /** Compact lines describing the revision's facts (with their ids). */
  readonly facts: readonly string[]
  /** Captures by object digest (the latest result must be present to be shown). */
  readonly captures: ReadonlyMap<string, Capture>
}

export interface RenderedPrompt {
  readonly text: string
  /** The stable part the text starts with (byte-identical across the turns of one investigation). */
  readonly stable: string
  readonly version: typeof PROMPT_VERSION
  readonly cut: readonly string[]
}

const KINDS = [
  'source.files {text, path_prefix?}', 'source.search {text, path_prefix?}', 'source.symbol {symbol, path_prefix?}',
  'source.registration {symbol, path_prefix?}', 'source.schema {text}', 'source.read {path, start_line, end_line}',
  'database.tables {text?, database?}', 'database.schema {table, database?}',
  'database.rows {table, columns, filters, offset, limit, order_by?, database?}', 'database.count {table, filters, database?}'
]

/** The stable part: identical for every turn of one investigation. */
export const stablePart = (s: CaseState): string => {
  const st = s.settings
  const ctx = st?.source_context ?? null
  const kinds = ctx === null ? KINDS : [...KINDS, 'source.context {text, path_prefix?}']
  return [
    `=== ${PROMPT_VERSION} ===`,
    'You investigate a bug report of a TrinityCore-family game server (C++ core, MySQL world database).',
    'Answer with exactly one JSON object and nothing else.',
    'Interpretation phase: {"interpretation": {"summary": "..."}}',
    'Investigation phase, one of:',
    '  {"next": {"kind": "tool", "operation": "project.query", "arguments": {"kind": "...", ...}}}',
    '  {"next": {"kind": "hypothesis", "action": "propose", "statement": "...", "evidence": ["E1"]}}',
    '  {"next": {"kind": "hypothesis", "action": "update", "hypothesis_id": "H1", "status": "supported|refuted|open", "evidence": ["E2"], "note": "..."}}',
    '  {"next": {"kind": "lab_test", "description": "..."}}',
    '  {"next": {"kind": "conclusion", "summary": "...", "hypotheses": ["H1"], "evidence": ["E1"]}}',
    'project.query kinds (read-only; the pinned commit and the allow-listed world tables only):',
    ...kinds.map((k) => `  - ${k}`),
    'database filters: {column, operator: eq|ne|lt|le|gt|ge|contains|in, value}; joined with AND.',
    'A lexical hit proves neither a definition, a registration nor an executed call. Equal numbers may name different things.',
    ...(ctx === null ? [] : [
      `source.context is enabled (context_lines ${ctx.context_lines}, max_searches ${ctx.max_searches}, max_matches ${ctx.max_matches}, max_files ${ctx.max_files}, max_blocks ${ctx.max_blocks}, max_total_lines ${ctx.max_total_lines}, registration_prefixes ${ctx.registration_prefixes.join(',')}).`,
      'Use source.context before separate source.search and source.read calls.'
    ]),
    `Budget: ${st?.budget_total ?? 0} units; project.query costs ${st?.action_costs['project.query'] ?? 1}.`,
    `=== end of contract ===`
  ].join('\n')
}

const bounded = (text: string, max: number): { text: string; cut: boolean } =>
  text.length <= max ? { text, cut: false } : { text: `${text.slice(0, max)}…`, cut: true }

/** The continuation data of a result, shown even when its JSON is cut. */
const continuation = (c: Capture): string | null => {
  const r = c.result
  const keys = ['next_start_line', 'requested_range_complete', 'truncated', 'eof', 'has_more', 'next_offset', 'complete_filtered_rows', 'complete', 'limits_reached', 'completeness']
  const parts = keys.filter((k) => k in r).map((k) => `${k}=${JSON.stringify(r[k])}`)
  return parts.length === 0 ? null : parts.join(' ')
}

export const renderPrompt = (s: CaseState, inputs: PromptInputs): RenderedPrompt => {
  const max = s.settings?.prompt_max_chars ?? 20_000
  const cut: string[] = []
  const stable = stablePart(s)
  const phase = s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'
  const sections: Array<{ name: string; lines: string[]; droppable: boolean }> = []
  const report = bounded(inputs.report, 3000)
  if (report.cut) cut.push(`report cut to 3000 of ${inputs.report.length} characters`)
  sections.push({ name: 'report', droppable: false, lines: ['=== case ===', `Phase: ${phase}. Turn ${s.turn + 1}.`, 'Report:', report.text] })
  sections.push({ name: 'facts', droppable: true, lines: ['Facts of the prepared revision (technical context with provenance, not a diagnosis):', ...inputs.facts] })
  if (s.interpretation !== null) sections.push({ name: 'interpretation', droppable: false, lines: [`Interpretation: ${s.interpretation}`] })
  if (s.hypotheses.size > 0) {
    sections.push({ name: 'hypotheses', droppable: false, lines: ['Hypotheses (ids and evidence ids only):', ...[...s.hypotheses.values()].map((h) => `  ${h.id} [${h.status}] ${h.statement} (evidence: ${h.evidence.join(', ') || 'none'})`)] })
  }
  const evidence = [...s.research.evidence.values()].sort((a, b) => a.first_seq - b.first_seq)
  if (evidence.length > 0) {
    sections.push({ name: 'evidence', droppable: true, lines: ['Evidence (ids and provenance; payloads are not repeated):', ...evidence.map((e) => {
      const c = inputs.captures.get(e.digest)
      const origin = c === undefined ? '' : c.origin.type === 'git' ? ` @ ${c.origin.commit.slice(0, 12)}` : ` @ ${c.origin.database}/${c.origin.snapshot_id}`
      return `  ${e.id} ${e.kind}${origin} ${c === undefined ? '' : JSON.stringify(c.request).slice(0, 160)}${e.repeats > 0 ? ` (repeated ${e.repeats}x)` : ''}`
    })] })
  }
  const last = s.lastResult
  if (last?.kind === 'capture') {
    const c = inputs.captures.get(last.digest)
    if (last.repeat) sections.push({ name: 'latest', droppable: false, lines: [`Latest result: ${last.evidence_id} again (identical to earlier evidence; not shown twice, not new evidence).`] })
    else if (c !== undefined) {
      const cont = continuation(c)
      sections.push({ name: 'latest', droppable: false, lines: [`Latest result ${last.evidence_id} (selected: it answers the last confirmed plan):`, ...(cont === null ? [] : [`Continuation: ${cont}`]), JSON.stringify(c.result)] })
    }
  } else if (last?.kind === 'failure') {
    sections.push({ name: 'latest', droppable: false, lines: [`Your last query${last.plan_id === null ? '' : ` (plan ${last.plan_id})`} was refused (${last.code}): ${last.message}`, `Request: ${JSON.stringify(last.arguments).slice(0, 400)}`, 'No evidence was recorded for it.'] })
  } else if (last?.kind === 'cancelled') {
    sections.push({ name: 'latest', droppable: false, lines: [`An operator cancelled your last plan${last.plan_id === null ? '' : ` ${last.plan_id}`}: ${last.reason}`] })
  }
  if (s.lastRejection !== null) sections.push({ name: 'rejection', droppable: false, lines: [`Your last answer was rejected (${s.lastRejection.code}): ${s.lastRejection.message}`] })
  sections.push({ name: 'closing', droppable: false, lines: [`Budget remaining: ${remainingBudget(s)}.`, phase === 'interpretation' ? 'Answer with the interpretation.' : 'Answer with the next action.'] })

  const assemble = (): string => [stable, ...sections.map((x) => x.lines.join('\n'))].join('\n')
  let text = assemble()
  // The guard: drop droppable sections, then shorten the latest result, saying what was cut.
  for (const name of ['facts', 'evidence']) {
    if (text.length <= max) break
    const sec = sections.find((x) => x.name === name)
    if (sec !== undefined) {
      cut.push(`${name} section (${sec.lines.length - 1} lines) left out to stay under ${max} characters`)
      sec.lines = [`[${name} left out: the prompt limit is ${max} characters]`]
      text = assemble()
    }
  }
  if (text.length > max) {
    const sec = sections.find((x) => x.name === 'latest')
    const json = sec?.lines[sec.lines.length - 1]
    if (sec !== undefined && json !== undefined) {
      const room = Math.max(0, json.length - (text.length - max) - 200)
      sec.lines[sec.lines.length - 1] = `${json.slice(0, room)} [cut: ${json.length - room} of ${json.length} characters of this result; continuation data above]`
      cut.push(`latest result cut to ${room} of ${json.length} characters`)
      text = assemble()
    }
  }
  if (text.length > max) {
    text = `${text.slice(0, max - 120)}\n[cut: the prompt exceeded ${max} characters by ${text.length - max + 120}; the end was removed]`
    cut.push('the end of the prompt')
  }
  if (cut.length > 0) {
    const guard = `\n[prompt guard: ${cut.join('; ')}]`.slice(0, 1000)
    text = `${text.slice(0, Math.max(0, max - guard.length))}${guard}`
  }
  return { text, stable, version: PROMPT_VERSION, cut }
}
