/**
 * The investigation's own tools for an agent over MCP: the interpretation (while the case is
 * interpreting), hypothesis_propose, hypothesis_update, lab_test_request and conclude (while it is
 * investigating). A call is one turn of the loop, decided the loop's way: the prompt of the state
 * the call is decided on is rendered by the loop's renderer and recorded (ModelRequested), then the
 * call as the answer of the loop's contract (ModelResponded, with the agent as its provenance:
 * kind mcp and the name and version of its initialize request), decided by the same answer
 * decider. So the same rules refuse it with the same codes (EVIDENCE_UNKNOWN, HYPOTHESIS_UNKNOWN),
 * a refusal is a recorded rejection that counts toward max_invalid_responses, and the turn counts
 * where the loop's turns count. The input schemas are generated from the answer codecs.
 *
 * Several servers on one case: each call's command ids carry a digest of the call and its client
 * (another server's decision is never taken for this one's outcome), and a turn another writer
 * requested but has not answered is answered as it stands; a call that loses the race is decided
 * again on the state the winner left (session.ts), so it is told CASE_NOT_ADVANCEABLE or recorded
 * as the next turn.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../failures/failure.js'
import type * as t from 'io-ts'
import { MAX_ANSWER_CHARS, NEXT_ANSWERS, InterpretationAnswer } from '../domain/answer-decider.js'
import type { CaseState } from '../domain/case-state.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { EventDraft } from '../events/chain.js'
import type { Requester } from '../events/catalog.js'
import type { ModelProvenance } from '../events/model-provenance.js'
import { toJsonSchema, type JsonSchema } from '../events/json-schema.js'
import { describeErrors } from '../events/decode.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { Env } from '../adapters/env.js'
import { must } from '../failures/error.js'
import { decideAndAppend, deciding, openAt } from '../commands/run.js'
import { turnRequest } from '../investigation/turn-request.js'
import { refusalAnswer, type ToolAnswer } from './answers.js'
import { closedSchema, type ToolSpec } from './tools.js'

/** The decision tools, by name. */
export type DecisionName =
  | 'interpretation_record'
  | 'hypothesis_propose'
  | 'hypothesis_update'
  | 'lab_test_request'
  | 'conclude'

interface Decision {
  readonly name: DecisionName
  readonly title: string
  readonly phase: 'INTERPRETING' | 'INVESTIGATING'
  readonly description: string
  readonly schema: JsonSchema
  readonly notes: Readonly<Record<string, string>>
  /** The codec of the answer's decision (its `interpretation` or its `next`). */
  readonly codec: t.Mixed
  /** The members the tool fixes (kind, action). */
  readonly fixed: Readonly<Record<string, string>>
}

/** The loop's answer a call stands for. */
const answerOf = (d: Decision, args: Record<string, unknown>): unknown =>
  d.phase === 'INTERPRETING' ? { interpretation: args } : { next: { ...d.fixed, ...args } }

const EVIDENCE = 'evidence ids the case holds (E1, E2, …; case_status lists them)'

const DECISIONS: readonly Decision[] = [
  {
    name: 'interpretation_record',
    title: 'record the interpretation',
    phase: 'INTERPRETING',
    description:
      'Records your interpretation of the bug report (what it claims, in your words): the first decision of an investigation, before hypotheses. Offered while the case is INTERPRETING.',
    schema: toJsonSchema(InterpretationAnswer.props.interpretation),
    notes: { summary: 'what the report says is wrong, which entities it names, what would show it' },
    codec: InterpretationAnswer.props.interpretation,
    fixed: {}
  },
  {
    name: 'hypothesis_propose',
    title: 'propose a hypothesis',
    phase: 'INVESTIGATING',
    description:
      'Proposes a hypothesis about the cause, citing the evidence it rests on; it is recorded as H1, H2, … in order.',
    schema: toJsonSchema(NEXT_ANSWERS.propose),
    notes: { statement: 'the hypothesis, one or two sentences', evidence: EVIDENCE },
    codec: NEXT_ANSWERS.propose,
    fixed: { kind: 'hypothesis', action: 'propose' }
  },
  {
    name: 'hypothesis_update',
    title: 'update a hypothesis',
    phase: 'INVESTIGATING',
    description: 'Marks a hypothesis open, supported or refuted, with the evidence and a note saying why.',
    schema: toJsonSchema(NEXT_ANSWERS.update),
    notes: { hypothesis_id: 'H1, H2, … (case_status lists them)', evidence: EVIDENCE, note: 'why, in a sentence' },
    codec: NEXT_ANSWERS.update,
    fixed: { kind: 'hypothesis', action: 'update' }
  },
  {
    name: 'lab_test_request',
    title: 'ask for a lab test',
    phase: 'INVESTIGATING',
    description:
      'Asks a person to try something on a test server; the case is BLOCKED until they record the feedback (vba case feedback), then the investigation goes on.',
    schema: toJsonSchema(NEXT_ANSWERS.lab_test),
    notes: { description: 'what to do on the test server and what to report back' },
    codec: NEXT_ANSWERS.lab_test,
    fixed: { kind: 'lab_test' }
  },
  {
    name: 'conclude',
    title: 'conclude the investigation',
    phase: 'INVESTIGATING',
    description:
      'Concludes the investigation: the summary of the cause, the hypotheses and the evidence it rests on. The case is CONCLUDED: no more research or decisions.',
    schema: toJsonSchema(NEXT_ANSWERS.conclusion),
    notes: {
      summary: 'the cause and where it is, citing evidence ids',
      hypotheses: 'the hypothesis ids the conclusion rests on',
      evidence: EVIDENCE
    },
    codec: NEXT_ANSWERS.conclusion,
    fixed: { kind: 'conclusion' }
  }
]

const byName = new Map(DECISIONS.map((d) => [d.name, d]))

/** Whether `name` is a decision tool. */
export const isDecision = (name: string): name is DecisionName => byName.has(name as DecisionName)

/**
 * Why the input schema of decision `name` refuses `args` (a message that starts with its code), or
 * null: a JSON object, only the members the tool names, each of its type.
 */
export const decisionArgsFailure = (name: DecisionName, args: unknown): string | null => {
  const d = byName.get(name)
  if (d === undefined) return `INVALID_ARGUMENT: unknown decision ${name}`
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    return 'INVALID_ARGUMENT: the arguments are a JSON object'
  const known = Object.keys((d.schema['properties'] ?? {}) as object).filter((k) => k !== 'kind' && k !== 'action')
  const unknown = Object.keys(args).filter((k) => !known.includes(k))
  if (unknown.length > 0)
    return `INVALID_ARGUMENT: unknown members ${unknown
      .map((k) => JSON.stringify(k.slice(0, 40)))
      .join(', ')
      .slice(0, 200)}; ${name} takes ${known.join(', ')}`
  const decoded = d.codec.decode({ ...d.fixed, ...args })
  if (E.isLeft(decoded)) return `INVALID_ARGUMENT: ${describeErrors(decoded.left).slice(0, 400)}`
  // An answer the decider would refuse for its size is refused here, before it is recorded: a
  // refused answer is kept whole in the case, and a call may carry up to the message limit.
  const raw = canonicalJson(answerOf(d, args as Record<string, unknown>))
  if (E.isRight(raw) && raw.right.length > MAX_ANSWER_CHARS)
    return `INVALID_ARGUMENT: the decision has ${raw.right.length} characters as an answer, over ${MAX_ANSWER_CHARS}: nothing was recorded; say it in fewer words`
  return null
}

/** The decision tools a case in `state` offers. */
export const decisionSpecs = (state: CaseState['state'], caseId: string): ToolSpec[] =>
  DECISIONS.filter((d) => d.phase === state || (d.phase === 'INTERPRETING' && state === 'NOT_STARTED')).map((d) => ({
    name: d.name,
    title: d.title,
    description: `${d.description} Decided as a turn of case ${caseId} by the same rules as a model's answer and recorded with your client's name and version; a refusal is recorded as a rejected answer and starts with its code (${DECISION_CODES}). Changes the case, not the game server.`,
    inputSchema: closedSchema(d.schema, d.notes, ['kind', 'action']),
    outputSchema: DECISION_SCHEMA,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    kind: null
  }))

const DECISION_CODES = 'EVIDENCE_UNKNOWN, HYPOTHESIS_UNKNOWN, MODEL_ANSWER_INVALID'

/** The structured content of a decision. */
export const DECISION_SCHEMA = {
  type: 'object',
  properties: {
    turn: { type: 'integer', description: 'the turn the decision was recorded as' },
    decided: { type: 'string', description: 'what was recorded (hypothesis H2 proposed, conclusion, …)' },
    state: { type: 'string', description: 'the state of the case after it' }
  },
  required: ['turn', 'decided', 'state']
} as const

/** What the events of an accepted decision recorded, in a few words. */
const decidedText = (events: readonly EventDraft[]): string => {
  for (const e of events) {
    const d = e.data as Record<string, unknown>
    if (e.type === 'InterpretationRecorded') return 'interpretation recorded; the case is INVESTIGATING'
    if (e.type === 'HypothesisProposed') return `hypothesis ${String(d['hypothesis_id'])} proposed`
    if (e.type === 'HypothesisUpdated') return `hypothesis ${String(d['hypothesis_id'])} ${String(d['status'])}`
    if (e.type === 'LabTestRequested')
      return `lab test ${String(d['request_id'])} requested; the case waits for its feedback`
    if (e.type === 'ConclusionRecorded') return 'conclusion recorded; the case is CONCLUDED'
  }
  return 'recorded'
}

const HINTS: Readonly<Record<string, string>> = {
  EVIDENCE_UNKNOWN: 'cite only evidence and hypothesis ids the case holds (case_status lists them)',
  HYPOTHESIS_UNKNOWN: 'update a hypothesis the case holds (H1, H2, …; case_status lists them)'
}

/** The agent's provenance: kind mcp, its name as the model, and the client as its requester. */
const agentProvenance = (requester: Requester, latencyMs: number): ModelProvenance => ({
  kind: 'mcp',
  model: requester.name,
  endpoint: null,
  parameters: null,
  usage: null,
  finish_reason: null,
  latency_ms: Math.max(0, Math.round(latencyMs)),
  attempts: 1,
  program: null,
  exit_status: null,
  requester
})

/**
 * Records the decision `name` with `args` (already checked against its input schema) as a turn of
 * the case at `at`, attributed to `requester`.
 */
export const recordDecision = async (
  at: CaseAt,
  name: DecisionName,
  args: Record<string, unknown>,
  requester: Requester,
  env: Env
): Promise<ToolAnswer> => {
  const d = byName.get(name)
  const handle = await openAt(at)
  const s = handle.cursor.state
  if (d === undefined || s.state !== d.phase)
    return refusalAnswer(
      failure(
        'CASE_NOT_ADVANCEABLE',
        `${name} is a decision of a case that is ${d?.phase ?? '?'}; case ${handle.declaration.case_id} is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`} (tools/list offers what it takes now)`,
        { state: s.state }
      )
    )
  const started = env.elapsed?.() ?? performance.now()
  // The command ids name this call (its decision and its client): another server's call on the
  // case is another command, never taken for this one's outcome.
  const key = sha256Digest(must(canonicalJson({ name, args, requester })))
    .slice('sha256:'.length)
    .slice(0, 16)
  // A turn another writer requested and did not get answered yet is answered as it stands (the
  // prompt it recorded is of the same state): so two servers racing never both wait for a turn.
  let turn = s.openTurn?.turn ?? 0
  if (s.openTurn === null) {
    const next = await turnRequest(handle, s)
    // The prompt is rendered from this exact state: a case that moved meanwhile is a conflict.
    await decideAndAppend(handle, `mcp-turn-${next.turn}-request-${key}`, next.decide, {
      env,
      expectedGeneration: handle.cursor.seq
    })
    if (handle.cursor.state.state !== s.state)
      return refusalAnswer(failure('CASE_CLOSED', `the case is ${handle.cursor.state.state}: nothing was decided`))
    turn = next.turn
  }
  const raw = must(canonicalJson(answerOf(d, args)))
  const bytes = Buffer.from(raw, 'utf8')
  const provenance = agentProvenance(requester, (env.elapsed?.() ?? performance.now()) - started)
  const recorded = await decideAndAppend(
    handle,
    `mcp-turn-${turn}-answer-${key}`,
    deciding('RecordAnswer', { turn, raw, rawRef: objectRefOf(bytes, 'text/plain'), provenance }, [bytes]),
    { env }
  )
  const after = handle.cursor.state
  const rejected = recorded.events.find((e) => e.type === 'ModelResponseRejected')
  if (rejected !== undefined) {
    const r = rejected.data as { code: string; message: string; consecutive: number }
    const limit = after.settings?.max_invalid_responses ?? 3
    const blocked = after.state === 'BLOCKED' ? ` The case is now BLOCKED (${String(after.reason)}).` : ''
    return {
      content: [
        {
          type: 'text',
          text: `${r.code}: ${r.message}\nRecorded in the case as a rejected decision of turn ${turn} (${r.consecutive} of at most ${limit} in a row).${blocked}\nWhat you can change: ${HINTS[r.code] ?? "the arguments, to match the tool's input schema"}.`
        }
      ],
      isError: true
    }
  }
  const decided = decidedText(recorded.events)
  return {
    content: [{ type: 'text', text: `turn ${turn}: ${decided} (case ${after.state})` }],
    structuredContent: { turn, decided, state: after.state }
  }
}
