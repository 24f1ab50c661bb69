/**
 * The rules of a case: every recorded event is checked against the state before it, so that a
 * case which verifies is a case the library's own deciders could have produced. A forger with
 * write access to a case directory can keep the hash chain intact, but not these.
 *
 * Verify, replay, open and the writer all run the same fold ({@link ruleFold}): `feed` checks an
 * event and folds it into the case state; command boundaries (a change of `command_id`) check
 * that each command is a whole decision (a capture with its consumption, a start with its
 * checkpoint, a model answer with exactly one decision). Checks that need object contents (a
 * capture decodes as a capture of its kind; facts point into captures) are returned as
 * obligations for whoever reads objects: {@link checkObligations} is pure over a `read` function.
 *
 * Every violation names its family (the finding code) and its rule (listed in
 * case-format/SPEC.md). Pure: no IO.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../events/chain.js'
import type { Actor } from '../events/codecs.js'
import type { Binding, EventType } from '../events/catalog.js'
import type { RuleCode } from '../events/findings.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { Capture } from '../events/capture.js'
import { decodeQuery } from './query.js'
import { evidenceFor } from './research-decider.js'
import { resolvePointer, type EntityRef } from './enrichment-config.js'
import { continuationOf, partialMarkers } from './partial.js'
import { answerableFromCase, fromCaseProblem, stallBlockAllowed, stallBlockOwed } from './rules-repeats.js'
import { checkTime } from './rules-time.js'
import { memberProblem } from './rules-commands.js'
import { unknownMember } from '../events/strict.js'
import { decisionProblem, type DecisionObligation } from './rules-derivation.js'
import { factsProblem } from './rules-facts.js'
import { bindingInForce, cloneCaseState, evolve, initCaseState, queryCost, remainingBudget, budgetTotal, heldBudget, tokensSpent, type CaseState, type ObjectRefLite } from './case-state.js'

export interface RuleViolation {
  readonly code: RuleCode
  /** The rule, e.g. `budget.overdrawn` (case-format/SPEC.md lists them all). */
  readonly rule: string
  readonly message: string
  readonly seq: number
}

/** Who may write each event type: the actor the deciders write it as. */
export const ALLOWED_ACTORS: { readonly [K in EventType]: readonly Actor[] } = {
  NoteRecorded: ['operator', 'controller'],
  AttachmentAdded: ['operator', 'controller'],
  BudgetReserved: ['controller'],
  CaptureRecorded: ['system'],
  BudgetConsumed: ['system'],
  BudgetReleased: ['system', 'operator'],
  ResearchFailed: ['system'],
  InputsRecorded: ['operator', 'controller'],
  EnrichmentCaptured: ['system'],
  RevisionCompleted: ['system'],
  InvestigationStarted: ['controller', 'operator'],
  CheckpointRecorded: ['system'],
  ModelRequested: ['controller'],
  ModelResponded: ['model'],
  ModelFailed: ['system'],
  ModelResponseRejected: ['system'],
  InterpretationRecorded: ['model'],
  PlanConfirmed: ['model'],
  HypothesisProposed: ['model'],
  HypothesisUpdated: ['model'],
  LabTestRequested: ['model'],
  LabFeedbackRecorded: ['operator'],
  ConclusionRecorded: ['model'],
  PlanCancelled: ['operator'],
  BudgetToppedUp: ['operator'],
  QueryAnsweredFromCase: ['system']
}

/** Block reasons the deciders write, with the state a block of that reason resumes into. */
const BLOCK_REASONS = new Set(['INVALID_LLM_RESPONSES', 'MODEL_UNAVAILABLE', 'AWAITING_TEST_FEEDBACK', 'RESEARCH_UNAVAILABLE'])
/** Blocks that end by time or by an operator's manual retry. */
const TIMED_BLOCKS = new Set(['INVALID_LLM_RESPONSES', 'MODEL_UNAVAILABLE'])

/** The events that are a model's decided answer (exactly one follows each ModelResponded). */
const DECISIONS = new Set<string>(['InterpretationRecorded', 'ModelResponseRejected', 'PlanConfirmed', 'HypothesisProposed', 'HypothesisUpdated', 'LabTestRequested', 'ConclusionRecorded'])

// --- object obligations -------------------------------------------------------------------------

export type Obligation =
  | { readonly kind: 'capture'; readonly seq: number; readonly ref: ObjectRefLite; readonly queryKind: string; readonly requestDigest: string }
  | {
    readonly kind: 'facts'
    readonly seq: number
    readonly ref: ObjectRefLite
    readonly revision: number
    readonly factCount: number
    readonly complete: boolean
    /** The revision's enrichment captures (behind its coverage). */
    readonly captures: readonly ObjectRefLite[]
    /** Every capture of the case recorded before the facts (what provenance may point into). */
    readonly known: readonly ObjectRefLite[]
    /** The revision's entities and its recorded enrichment settings (null: version 1), to derive the facts again. */
    readonly entities: readonly EntityRef[]
    readonly enrichment: ObjectRefLite | null
  }

  | DecisionObligation
  /** Captures and the binding in force when they were recorded: their origins must match it. */
  | { readonly kind: 'binding'; readonly seq: number; readonly binding: Binding; readonly captures: readonly ObjectRefLite[] }
  /** A recorded prompt, to be rendered again from the state before it (checked by src/projections/prompt-derivation.ts). */
  | { readonly kind: 'prompt'; readonly seq: number; readonly ref: ObjectRefLite; readonly turn: number; readonly version: string; readonly state: CaseState }

/** The objects an obligation reads. */
export const obligationRefs = (ob: Obligation): readonly ObjectRefLite[] =>
  ob.kind === 'capture' || ob.kind === 'decision'
    ? [ob.ref]
    : ob.kind === 'binding'
      ? ob.captures
      : ob.kind === 'prompt'
      ? [ob.ref, ...(ob.state.report === null ? [] : [ob.state.report]), ...(ob.state.facts === null ? [] : [ob.state.facts]), ...ob.state.research.evidenceRefs.values()]
      : [ob.ref, ...ob.captures, ...ob.known, ...(ob.enrichment === null ? [] : [ob.enrichment])]

/** Reads an object's bytes by reference; undefined when it is not there (reported elsewhere). */
export type ReadObject = (ref: ObjectRefLite) => Uint8Array | undefined

// --- the fold -------------------------------------------------------------------------------------

interface Expectation {
  readonly seq: number
  readonly code: RuleCode
  readonly rule: string
  readonly message: string
  readonly met: (e: RecordedEvent) => boolean
}

interface CommandContext {
  readonly commandId: string
  readonly events: RecordedEvent[]
  expectations: Expectation[]
  /** A command that records a model's answer: the answer and the state before it, derived again at its end. */
  answer?: { readonly seq: number; readonly ref: ObjectRefLite & { readonly media_type?: string }; readonly turn: number; readonly at: string; readonly state: CaseState }
}

export interface RuleFold {
  readonly state: () => CaseState
  /** Checks `e` in the state before it, then folds it in. A new command_id ends the previous command. */
  readonly feed: (e: RecordedEvent) => RuleViolation[]
  /** Ends the current command: what it still owed is a violation. Call at the end of the log. */
  readonly end: () => RuleViolation[]
  /** Object checks collected so far (see {@link checkObligations}). */
  readonly obligations: () => readonly Obligation[]
}

export interface RuleFoldOptions {
  /** The case's creation time (its declaration): no event is dated before it. */
  readonly createdAt?: string
  /** The verification time (epoch ms): no event is dated after it. */
  readonly notAfter?: number
}

/** The rule fold, starting from `initial` (a fresh case by default). */
export const ruleFold = (initial: CaseState = initCaseState(), options: RuleFoldOptions = {}): RuleFold => {
  const s = initial
  if (options.createdAt !== undefined) s.createdAt = options.createdAt
  const notAfter = options.notAfter ?? null
  let cmd: CommandContext | null = null
  const obligations: Obligation[] = []
  const end = (): RuleViolation[] => {
    const owed = cmd === null ? [] : cmd.expectations.map((x) => ({ code: x.code, rule: x.rule, message: x.message, seq: x.seq }))
    if (cmd?.answer !== undefined) obligations.push({ kind: 'decision', ...cmd.answer, decided: cmd.events.slice(1).map((e) => ({ type: e.type, actor: e.actor, data: e.data })) })
    cmd = null
    return owed
  }
  return {
    state: () => s,
    obligations: () => obligations,
    end,
    feed: (e) => {
      const out = cmd !== null && cmd.commandId !== e.command_id ? end() : []
      cmd ??= { commandId: e.command_id, events: [], expectations: [] }
      cmd.expectations = cmd.expectations.filter((x) => !x.met(e))
      out.push(...checkTime(s, e, cmd.events[0]?.at ?? null, notAfter).map((v) => ({ code: 'RULE_TIME' as const, rule: v.rule, message: v.message, seq: e.seq })))
      out.push(...checkEvent(s, cmd, e, obligations))
      if (e.type === 'ModelResponded' && cmd.events.length === 0) cmd.answer = { seq: e.seq, ref: e.data.raw, turn: e.data.turn, at: e.at, state: cloneCaseState(s) }
      if (e.type === 'ModelRequested') obligations.push({ kind: 'prompt', seq: e.seq, ref: e.data.prompt, turn: e.data.turn, version: e.data.prompt_version, state: cloneCaseState(s) })
      cmd.events.push(e)
      evolve(s, e)
      return out
    }
  }
}

// --- the rules --------------------------------------------------------------------------------------

const digestOf = (value: unknown): string | null => {
  const text = canonicalJson(value)
  return E.isRight(text) ? sha256Digest(text.right) : null
}

const inCommand = (cmd: CommandContext, pred: (e: RecordedEvent) => boolean): boolean => cmd.events.some(pred)

const isStallBlock = (x: RecordedEvent): boolean => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'INVALID_LLM_RESPONSES'

const isTerminal = (s: CaseState): boolean => s.state === 'CONCLUDED' || s.state === 'EXHAUSTED'

/** Checks one event against the state before it; may add expectations to the command and obligations. */
const checkEvent = (s: CaseState, cmd: CommandContext, e: RecordedEvent, obligations: Obligation[]): RuleViolation[] => {
  const out: RuleViolation[] = []
  const bad = (code: RuleCode, rule: string, message: string): void => {
    out.push({ code, rule, message, seq: e.seq })
  }
  const expect = (code: RuleCode, rule: string, message: string, met: (x: RecordedEvent) => boolean): void => {
    cmd.expectations.push({ seq: e.seq, code, rule, message, met })
  }
  const allowed = ALLOWED_ACTORS[e.type]
  if (!allowed.includes(e.actor)) bad('RULE_ACTOR', 'actor.allowed', `${e.type} is written by ${allowed.join(' or ')}, not by ${e.actor}`)
  const leader = cmd.events[0]
  const foreign = leader === undefined ? null : memberProblem(leader.type, e.type)
  if (foreign !== null) bad('RULE_COMMAND', 'command.members', foreign)

  const decision = (answerTurn?: number): void => {
    const first = cmd.events[0]
    if (first?.type !== 'ModelResponded' || first.data.turn !== s.turn) {
      bad('RULE_TURN', 'turn.decision', `${e.type} is a model decision: it is recorded with the model's answer of the current turn (${s.turn})`)
      return
    }
    if (cmd.events.some((x) => DECISIONS.has(x.type))) bad('RULE_TURN', 'turn.decision', `one answer makes one decision; ${e.type} is a second one`)
    if (answerTurn !== undefined && answerTurn !== first.data.turn) bad('RULE_TURN', 'turn.decision', `${e.type} names turn ${answerTurn}, but answers turn ${first.data.turn}`)
  }
  const investigating = (): void => {
    if (s.state !== 'INVESTIGATING') bad('RULE_LIFECYCLE', 'lifecycle.phase', `${e.type} is an investigation action; the case is ${s.state}`)
  }
  const knownEvidence = (ids: readonly string[]): void => {
    const unknown = ids.filter((id) => !s.research.evidence.has(id))
    if (unknown.length > 0) bad('RULE_REFERENCE', 'reference.evidence', `${e.type} cites evidence that does not exist: ${unknown.slice(0, 5).join(', ')}`)
  }
  const evidenceId = (digest: string, id: string, repeat: boolean): void => {
    const want = evidenceFor(s.research, digest)
    if (want.id !== id || want.repeat !== repeat) {
      bad('RULE_RESEARCH', 'research.evidence-id', want.repeat
        ? `this capture was recorded before as ${want.id}: it is a repeat of ${want.id}, not ${repeat ? 'a repeat of ' : 'new evidence '}${id}`
        : `new evidence is numbered ${want.id}, not ${id}${repeat ? ' (and it repeats nothing)' : ''}`)
    }
  }

  switch (e.type) {
    case 'NoteRecorded':
    case 'AttachmentAdded':
      return out

    case 'InputsRecorded': {
      const d = e.data
      if (d.revision !== s.revisions.length + 1) bad('RULE_REVISION', 'revision.number', `revision ${d.revision} follows revision ${s.revisions.length}; it must be ${s.revisions.length + 1}`)
      const digest = digestOf({ report: d.report, entities: d.entities, attachments: d.attachments })
      if (digest !== d.inputs_digest) bad('RULE_REVISION', 'revision.inputs-digest', 'inputs_digest is not the digest of the recorded inputs index')
      const same = s.revisions.find((r) => r.inputs_digest === d.inputs_digest)
      if (same !== undefined) bad('RULE_REVISION', 'revision.inputs-digest', `revision ${same.revision} holds these inputs already; the same inputs make no new revision`)
      return out
    }

    case 'EnrichmentCaptured': {
      const d = e.data
      const r = s.revisions.find((x) => x.revision === d.revision)
      const latest = s.revisions[s.revisions.length - 1]
      if (r === undefined || r.completed || r !== latest) bad('RULE_REVISION', 'revision.open', `revision ${d.revision} is ${r === undefined ? 'unknown' : r.completed ? 'completed already' : 'not the latest'}; enrichment belongs to the latest open revision`)
      evidenceId(d.capture.digest, d.evidence_id, d.repeat)
      obligations.push({ kind: 'capture', seq: e.seq, ref: d.capture, queryKind: d.kind, requestDigest: d.request_digest })
      expect('RULE_COMMAND', 'command.whole', `enrichment of revision ${d.revision} is recorded in the command that completes the revision`, (x) => x.type === 'RevisionCompleted' && x.data.revision === d.revision)
      return out
    }

    case 'RevisionCompleted': {
      const d = e.data
      const r = s.revisions.find((x) => x.revision === d.revision)
      if (r === undefined || r.completed) bad('RULE_REVISION', 'revision.open', `revision ${d.revision} is ${r === undefined ? 'unknown' : 'completed already'}`)
      const captured = cmd.events.filter((x): x is Extract<RecordedEvent, { type: 'EnrichmentCaptured' }> => x.type === 'EnrichmentCaptured' && x.data.revision === d.revision)
      if (captured.length !== d.queries) bad('RULE_REVISION', 'revision.queries', `the revision says ${d.queries} queries, its enrichment recorded ${captured.length}`)
      obligations.push({
        kind: 'facts', seq: e.seq, ref: d.facts, revision: d.revision, factCount: d.fact_count, complete: d.complete,
        captures: captured.map((x) => ({ digest: x.data.capture.digest, size: x.data.capture.size })),
        known: [...s.research.evidenceRefs.values()],
        entities: r?.entities ?? [],
        enrichment: d.enrichment
      })
      if (d.binding !== null) obligations.push({ kind: 'binding', seq: e.seq, binding: d.binding, captures: captured.map((x) => ({ digest: x.data.capture.digest, size: x.data.capture.size })) })
      return out
    }

    case 'InvestigationStarted': {
      if (s.state !== 'NOT_STARTED' || s.settings !== null) bad('RULE_LIFECYCLE', 'lifecycle.start-once', 'the investigation has started already')
      const done = s.revisions.filter((r) => r.completed)
      const latest = done[done.length - 1]
      if (latest === undefined) bad('RULE_LIFECYCLE', 'lifecycle.start-revision', 'an investigation starts from a completed revision; there is none')
      else if (e.data.revision !== latest.revision) bad('RULE_LIFECYCLE', 'lifecycle.start-revision', `the investigation starts from revision ${e.data.revision}, but the latest completed revision is ${latest.revision}`)
      const committed = s.research.consumed + heldBudget(s.research)
      if (committed > e.data.settings.budget_total) bad('RULE_BUDGET', 'budget.overdrawn', `${committed} units are committed already, more than the budget of ${e.data.settings.budget_total}`)
      expect('RULE_COMMAND', 'command.whole', 'a start is recorded with its INTERPRETING checkpoint', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'INTERPRETING')
      return out
    }

    case 'CheckpointRecorded': {
      const d = e.data
      if (d.generation !== s.checkpoint + 1) bad('RULE_LIFECYCLE', 'lifecycle.generation', `checkpoint generation ${d.generation} follows ${s.checkpoint}; it must be ${s.checkpoint + 1}`)
      const problem = transitionProblem(s, cmd, e)
      if (problem !== null) bad(problem.rule.startsWith('budget.') ? 'RULE_BUDGET' : 'RULE_LIFECYCLE', problem.rule, problem.message)
      return out
    }

    case 'ModelRequested': {
      const d = e.data
      if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING') bad('RULE_TURN', 'turn.request', `no model turn while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}`)
      else if (d.phase !== (s.state === 'INTERPRETING' ? 'interpretation' : 'investigation')) bad('RULE_TURN', 'turn.request', `a ${d.phase} prompt while the case is ${s.state}`)
      if (d.turn !== s.turn + 1) bad('RULE_TURN', 'turn.request', `turn ${d.turn} follows turn ${s.turn}; it must be ${s.turn + 1}`)
      if (s.pendingPlan?.reservation != null) bad('RULE_TURN', 'turn.request', `plan ${s.pendingPlan.plan_id} waits to be carried out before the model is asked again`)
      if (tokensSpent(s)) bad('RULE_BUDGET', 'budget.tokens', `${s.tokens.total} model tokens are spent, the limit is ${String(s.settings?.max_tokens)}: no model is asked again`)
      return out
    }

    case 'ModelResponded':
    case 'ModelFailed': {
      const d = e.data
      if (s.openTurn === null || s.openTurn.turn !== d.turn) bad('RULE_TURN', 'turn.answer', `${e.type} of turn ${d.turn} answers no open request (${s.openTurn === null ? 'none is open' : `turn ${s.openTurn.turn} is open`})`)
      else if (s.state !== 'INTERPRETING' && s.state !== 'INVESTIGATING') bad('RULE_TURN', 'turn.answer', `${e.type} while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}: no model is asked then`)
      if (cmd.events.length > 0) bad('RULE_TURN', 'turn.answer', `${e.type} begins the command that records the answer`)
      if (e.type === 'ModelResponded') {
        expect('RULE_COMMAND', 'command.whole', `the answer of turn ${d.turn} is recorded with what it means (one decision)`, (x) => DECISIONS.has(x.type) || (x.type === 'CheckpointRecorded' && x.data.state === 'EXHAUSTED'))
      } else {
        expect('RULE_COMMAND', 'command.whole', 'a failed model call blocks the case as MODEL_UNAVAILABLE in the same command', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'MODEL_UNAVAILABLE')
      }
      return out
    }

    case 'ModelResponseRejected': {
      decision(e.data.turn)
      if (e.data.consecutive !== s.consecutiveInvalid + 1) bad('RULE_TURN', 'turn.rejection-count', `rejection ${e.data.consecutive} in a row follows ${s.consecutiveInvalid}; it must be ${s.consecutiveInvalid + 1}`)
      const limit = s.settings?.max_invalid_responses ?? 3
      if (e.data.consecutive >= limit) {
        expect('RULE_COMMAND', 'command.whole', `the ${limit}th invalid answer in a row blocks the case as INVALID_LLM_RESPONSES in the same command`, (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'INVALID_LLM_RESPONSES')
      }
      return out
    }

    case 'InterpretationRecorded':
      decision(e.data.turn)
      if (s.state !== 'INTERPRETING') bad('RULE_LIFECYCLE', 'lifecycle.phase', `an interpretation while the case is ${s.state}`)
      expect('RULE_COMMAND', 'command.whole', 'an interpretation is recorded with its INVESTIGATING checkpoint', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'INVESTIGATING')
      return out

    case 'PlanConfirmed': {
      const d = e.data
      decision(d.turn)
      investigating()
      if (s.pendingPlan !== null) bad('RULE_TURN', 'turn.plan', `plan ${s.pendingPlan.plan_id} is still pending`)
      if (d.plan_id !== `P${d.turn}`) bad('RULE_TURN', 'turn.ids', `the plan of turn ${d.turn} is P${d.turn}, not ${d.plan_id}`)
      const q = decodeQuery(d.arguments)
      if (E.isLeft(q)) bad('RULE_TURN', 'turn.plan', `the plan is not a valid project.query: ${q.left.message}`)
      else if (q.right.kind === 'source.context' && s.settings?.source_context === null) bad('RULE_TURN', 'turn.plan', 'source.context is not part of this investigation\'s contract')
      expect('RULE_COMMAND', 'command.whole', `plan ${d.plan_id} is recorded with its budget reservation (or its answer from the case)`, (x) => (x.type === 'BudgetReserved' || x.type === 'QueryAnsweredFromCase') && x.data.plan_id === d.plan_id)
      return out
    }

    case 'HypothesisProposed': {
      decision()
      investigating()
      const want = `H${s.hypotheses.size + 1}`
      if (e.data.hypothesis_id !== want) bad('RULE_TURN', 'turn.ids', `the next hypothesis is ${want}, not ${e.data.hypothesis_id}`)
      knownEvidence(e.data.evidence)
      return out
    }

    case 'HypothesisUpdated':
      decision()
      investigating()
      if (!s.hypotheses.has(e.data.hypothesis_id)) bad('RULE_REFERENCE', 'reference.hypothesis', `hypothesis ${e.data.hypothesis_id} does not exist`)
      knownEvidence(e.data.evidence)
      return out

    case 'LabTestRequested': {
      decision()
      investigating()
      const want = `L${s.labRequests.size + 1}`
      if (e.data.request_id !== want) bad('RULE_TURN', 'turn.ids', `the next lab test request is ${want}, not ${e.data.request_id}`)
      expect('RULE_COMMAND', 'command.whole', 'a lab test request blocks the case as AWAITING_TEST_FEEDBACK in the same command', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'AWAITING_TEST_FEEDBACK')
      return out
    }

    case 'ConclusionRecorded': {
      decision()
      investigating()
      const unknown = e.data.hypotheses.filter((h) => !s.hypotheses.has(h))
      if (unknown.length > 0) bad('RULE_REFERENCE', 'reference.hypothesis', `the conclusion cites hypotheses that do not exist: ${unknown.slice(0, 5).join(', ')}`)
      knownEvidence(e.data.evidence)
      expect('RULE_COMMAND', 'command.whole', 'a conclusion is recorded with its CONCLUDED checkpoint', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'CONCLUDED')
      return out
    }

    case 'LabFeedbackRecorded': {
      const r = s.labRequests.get(e.data.request_id)
      if (r === undefined) bad('RULE_REFERENCE', 'reference.lab', `lab test request ${e.data.request_id} does not exist`)
      else if (r.feedback !== null) bad('RULE_REFERENCE', 'reference.lab', `feedback for ${e.data.request_id} is recorded already`)
      return out
    }

    case 'BudgetReserved': {
      const d = e.data
      const r = s.research
      if (r.open.has(d.reservation_id) || r.closed.has(d.reservation_id)) bad('RULE_BUDGET', 'budget.reservation-unique', `reservation ${d.reservation_id} exists already`)
      if (isTerminal(s)) bad('RULE_LIFECYCLE', 'lifecycle.terminal', `no reservation once the investigation is ${s.state}`)
      if (s.settings !== null && r.consumed + heldBudget(r) + d.amount > budgetTotal(s)) {
        bad('RULE_BUDGET', 'budget.overdrawn', `reserving ${d.amount} leaves ${remainingBudget(s) - d.amount} of the budget (${r.consumed} consumed, ${heldBudget(r)} held, total ${budgetTotal(s)})`)
      }
      if (d.plan_id !== null) {
        const plan = s.pendingPlan
        if (plan === null || plan.plan_id !== d.plan_id || plan.reservation !== null || !inCommand(cmd, (x) => x.type === 'PlanConfirmed' && x.data.plan_id === d.plan_id)) {
          bad('RULE_BUDGET', 'budget.reservation-plan', `a plan's reservation is made in the command that confirms plan ${d.plan_id}`)
        }
        if (s.settings !== null && d.amount !== queryCost(s)) bad('RULE_BUDGET', 'budget.reservation-plan', `project.query costs ${queryCost(s)} in this investigation, not ${d.amount}`)
        if (d.requester !== null) bad('RULE_RESEARCH', 'research.requester', `plan ${d.plan_id} was asked for by the model of its turn, not by ${d.requester.protocol} client ${JSON.stringify(d.requester.name)}`)
        const known = plan === null ? null : answerableFromCase(s, plan.arguments, digestOf)
        if (known !== null) bad('RULE_RESEARCH', 'research.from-case', `plan ${d.plan_id} asks what ${known} answers: an identical query is answered from the case, not reserved and run again`)
      } else if (d.request_digest === null) {
        bad('RULE_RESEARCH', 'research.request', 'an operator query\'s reservation names the digest of its request')
      }
      return out
    }

    case 'BudgetConsumed':
    case 'BudgetReleased': {
      const d = e.data
      const open = s.research.open.get(d.reservation_id)
      if (open === undefined) bad('RULE_BUDGET', 'budget.settle-open', `reservation ${d.reservation_id} is not open`)
      else if (open.amount !== d.amount) bad('RULE_BUDGET', 'budget.settle-open', `reservation ${d.reservation_id} holds ${open.amount}, not ${d.amount}`)
      if (e.type === 'BudgetConsumed') {
        if (!inCommand(cmd, (x) => x.type === 'CaptureRecorded' && x.data.reservation_id === d.reservation_id)) bad('RULE_BUDGET', 'budget.settle-open', `budget is consumed by the capture of ${d.reservation_id}, in its command`)
      } else if (e.data.reason === 'refused') {
        if (e.actor !== 'system' || !inCommand(cmd, (x) => x.type === 'ResearchFailed' && x.data.reservation_id === d.reservation_id && !x.data.unavailable)) {
          bad('RULE_BUDGET', 'budget.release-reason', `a release as refused follows the failed query of ${d.reservation_id} (written by system)`)
        }
      } else if (e.actor !== 'operator' || !inCommand(cmd, (x) => x.type === 'PlanCancelled' && x.data.reservation_id === d.reservation_id)) {
        bad('RULE_BUDGET', 'budget.release-reason', `a release as cancelled follows an operator's PlanCancelled of ${d.reservation_id}`)
      }
      return out
    }

    case 'BudgetToppedUp':
      if (s.settings === null || isTerminal(s)) bad('RULE_BUDGET', 'budget.top-up', `a top-up needs a running investigation; the case is ${s.state}`)
      if (e.data.reason.trim() === '') bad('RULE_BUDGET', 'budget.top-up', 'a top-up gives its reason')
      return out

    case 'PlanCancelled': {
      const d = e.data
      const open = s.research.open.get(d.reservation_id)
      if (open === undefined) bad('RULE_RESEARCH', 'research.cancel', `reservation ${d.reservation_id} is not open`)
      else if (open.plan_id !== d.plan_id) bad('RULE_RESEARCH', 'research.cancel', `reservation ${d.reservation_id} belongs to ${open.plan_id ?? 'an operator query'}, not ${d.plan_id ?? 'an operator query'}`)
      if (d.reason.trim() === '') bad('RULE_RESEARCH', 'research.cancel', 'a cancellation gives its reason')
      expect('RULE_COMMAND', 'command.whole', `a cancellation releases ${d.reservation_id} as cancelled in the same command`, (x) => x.type === 'BudgetReleased' && x.data.reservation_id === d.reservation_id && x.data.reason === 'cancelled')
      return out
    }

    case 'ResearchFailed': {
      const d = e.data
      const open = s.research.open.get(d.reservation_id)
      if (open === undefined) bad('RULE_RESEARCH', 'research.reservation', `a failed query belongs to an open reservation; ${d.reservation_id} is not open`)
      if (stallBlockOwed(s, e)) expect('RULE_COMMAND', 'command.whole', 'a stalled query that reaches max_invalid_responses blocks the case as INVALID_LLM_RESPONSES in the same command', isStallBlock)
      if (!d.unavailable) {
        expect('RULE_COMMAND', 'command.whole', `a failed query releases ${d.reservation_id} (refused) in the same command`, (x) => x.type === 'BudgetReleased' && x.data.reservation_id === d.reservation_id && x.data.reason === 'refused')
      } else if (open?.plan_id != null && s.pendingPlan?.reservation === d.reservation_id) {
        expect('RULE_COMMAND', 'command.whole', 'an outage while carrying out a plan blocks the case as RESEARCH_UNAVAILABLE in the same command', (x) => x.type === 'CheckpointRecorded' && x.data.state === 'BLOCKED' && x.data.reason === 'RESEARCH_UNAVAILABLE')
      }
      return out
    }

    case 'QueryAnsweredFromCase': {
      const problem = fromCaseProblem(s, cmd.events, e, digestOf)
      if (problem !== null) bad('RULE_RESEARCH', 'research.from-case', problem)
      if (stallBlockOwed(s, e)) expect('RULE_COMMAND', 'command.whole', 'a stalled query that reaches max_invalid_responses blocks the case as INVALID_LLM_RESPONSES in the same command', isStallBlock)
      return out
    }

    case 'CaptureRecorded': {
      const d = e.data
      const bound = bindingInForce(s)
      if (bound !== null) obligations.push({ kind: 'binding', seq: e.seq, binding: bound, captures: [{ digest: d.capture.digest, size: d.capture.size }] })
      const open = s.research.open.get(d.reservation_id)
      if (open === undefined) bad('RULE_RESEARCH', 'research.reservation', `a capture belongs to an open reservation; ${d.reservation_id} is not open`)
      else if (open.plan_id !== null) {
        const plan = s.pendingPlan
        if (plan === null || plan.reservation !== d.reservation_id) bad('RULE_RESEARCH', 'research.request', `plan ${open.plan_id} of ${d.reservation_id} is not the pending plan`)
        else if (digestOf(plan.arguments) !== d.request_digest) bad('RULE_RESEARCH', 'research.request', `the capture answers another request than plan ${plan.plan_id} confirmed`)
      } else if (open.request_digest === null) bad('RULE_RESEARCH', 'research.request', `reservation ${d.reservation_id} names no request, so no capture can answer it`)
      else if (open.request_digest !== d.request_digest) bad('RULE_RESEARCH', 'research.request', `the capture answers another request than reservation ${d.reservation_id} was made for`)
      evidenceId(d.capture.digest, d.evidence_id, d.repeat)
      obligations.push({ kind: 'capture', seq: e.seq, ref: d.capture, queryKind: d.kind, requestDigest: d.request_digest })
      expect('RULE_COMMAND', 'command.whole', `a capture consumes its reservation ${d.reservation_id} in the same command`, (x) => x.type === 'BudgetConsumed' && x.data.reservation_id === d.reservation_id)
      return out
    }

    default: {
      const _never: never = e
      return _never
    }
  }
}

/** Why a checkpoint is not one the deciders write from the state before it, or null. */
const transitionProblem = (s: CaseState, cmd: CommandContext, e: Extract<RecordedEvent, { type: 'CheckpointRecorded' }>): { rule: string; message: string } | null => {
  const d = e.data
  const from = s.state
  const to = d.state
  const has = (pred: (x: RecordedEvent) => boolean): boolean => inCommand(cmd, pred)
  const transition = (why: string): { rule: string; message: string } => ({ rule: 'lifecycle.transition', message: `${from}${s.reason === null ? '' : ` / ${s.reason}`} → ${to}${d.reason === null ? '' : ` / ${d.reason}`}: ${why}` })
  if (from === 'CONCLUDED' || from === 'EXHAUSTED') return { rule: 'lifecycle.terminal', message: `no checkpoint after ${from}` }
  // the shape of the checkpoint
  if (to === 'BLOCKED') {
    if (d.reason === null || !BLOCK_REASONS.has(d.reason)) return { rule: 'lifecycle.block-reason', message: `BLOCKED needs one of the reasons ${[...BLOCK_REASONS].join(', ')} (got ${String(d.reason)})` }
    if (d.resume_state === null) return { rule: 'lifecycle.block-reason', message: 'a block names the state it resumes into' }
    if (TIMED_BLOCKS.has(d.reason) && (d.retry_not_before === null || Number.isNaN(Date.parse(d.retry_not_before)))) return { rule: 'lifecycle.block-reason', message: `${d.reason} names the time it may be retried (retry_not_before)` }
  } else {
    if (to === 'EXHAUSTED' ? d.reason !== 'BUDGET_EXHAUSTED' && d.reason !== 'TOKEN_BUDGET_EXHAUSTED' : d.reason !== null) return { rule: 'lifecycle.block-reason', message: `${to} has ${to === 'EXHAUSTED' ? 'the reason BUDGET_EXHAUSTED or TOKEN_BUDGET_EXHAUSTED' : 'no reason'} (got ${String(d.reason)})` }
    if (d.resume_state !== null || d.retry_not_before !== null) return { rule: 'lifecycle.block-reason', message: `only a block names a resume state and a retry time (${to} does)` }
  }
  if (d.manual_retry && !(from === 'BLOCKED' && s.reason !== null && (TIMED_BLOCKS.has(s.reason) || s.reason === 'RESEARCH_UNAVAILABLE'))) {
    return { rule: 'lifecycle.resume', message: `a manual retry resumes only a block for INVALID_LLM_RESPONSES, MODEL_UNAVAILABLE or RESEARCH_UNAVAILABLE (the case is ${from}${s.reason === null ? '' : ` / ${s.reason}`})` }
  }
  switch (from) {
    case 'NOT_STARTED':
      return to === 'INTERPRETING' && has((x) => x.type === 'InvestigationStarted') ? null : transition('an investigation begins with its start, into INTERPRETING')
    case 'INTERPRETING':
    case 'INVESTIGATING':
      switch (to) {
        case 'INVESTIGATING':
          return from === 'INTERPRETING' && has((x) => x.type === 'InterpretationRecorded') ? null : transition('INVESTIGATING follows an interpretation')
        case 'BLOCKED':
          if (d.reason === 'INVALID_LLM_RESPONSES') {
            const limit = s.settings?.max_invalid_responses ?? 3
            if (!has((x) => x.type === 'ModelResponseRejected' && x.data.consecutive >= limit) && !stallBlockAllowed(s, cmd.events)) return transition(`blocked after ${limit} invalid answers (or stalled queries) in a row, recorded in the same command`)
          } else if (d.reason === 'MODEL_UNAVAILABLE') {
            if (!has((x) => x.type === 'ModelFailed')) return transition('blocked by a failed model call, recorded in the same command')
          } else if (d.reason === 'AWAITING_TEST_FEEDBACK') {
            if (from !== 'INVESTIGATING' || !has((x) => x.type === 'LabTestRequested')) return transition('a lab test request, in the same command')
          } else if (from !== 'INVESTIGATING' || !has((x) => x.type === 'ResearchFailed' && x.data.unavailable)) return transition('a research outage, in the same command')
          if (d.resume_state !== from) return { rule: 'lifecycle.block-reason', message: `the block resumes into the state it interrupted (${from}), not ${String(d.resume_state)}` }
          return null
        case 'EXHAUSTED':
          if (d.reason === 'TOKEN_BUDGET_EXHAUSTED') {
            if (cmd.events.length > 0) return transition('a spent token budget is its own command, taken instead of the next model request')
            if (s.pendingPlan?.reservation != null) return transition(`plan ${s.pendingPlan.plan_id} waits to be carried out first`)
            return tokensSpent(s) ? null : { rule: 'budget.tokens', message: `${s.tokens.total} model tokens are spent, below the limit ${String(s.settings?.max_tokens)}` }
          }
          if (from !== 'INVESTIGATING' || !has((x) => x.type === 'ModelResponded')) return transition('EXHAUSTED is the decision on a model action the budget cannot pay')
          return remainingBudget(s) < queryCost(s) ? null : { rule: 'lifecycle.exhausted', message: `${remainingBudget(s)} units are left, enough for a query costing ${queryCost(s)}` }
        case 'CONCLUDED':
          return from === 'INVESTIGATING' && has((x) => x.type === 'ConclusionRecorded') ? null : transition('CONCLUDED follows a conclusion')
        default:
          return transition('not a transition the deciders make')
      }
    case 'BLOCKED': {
      const reason = s.reason ?? ''
      if (TIMED_BLOCKS.has(reason)) {
        if (to !== s.resumeState) return { rule: 'lifecycle.resume', message: `a ${reason} block resumes into ${String(s.resumeState)}, not ${to}` }
        if (!d.manual_retry && s.retryNotBefore !== null && Date.parse(e.at) < Date.parse(s.retryNotBefore)) return { rule: 'lifecycle.resume', message: `resumed at ${e.at}, before retry_not_before ${s.retryNotBefore}, without a manual retry` }
        return null
      }
      if (reason === 'AWAITING_TEST_FEEDBACK') {
        if (to !== s.resumeState || !has((x) => x.type === 'LabFeedbackRecorded')) return { rule: 'lifecycle.resume', message: 'only lab test feedback ends AWAITING_TEST_FEEDBACK (a manual retry never does)' }
        return null
      }
      if (reason === 'RESEARCH_UNAVAILABLE') {
        if (to === 'BLOCKED') return d.reason === 'RESEARCH_UNAVAILABLE' && has((x) => x.type === 'ResearchFailed' && x.data.unavailable) ? null : transition('a research block is renewed only by another outage')
        const blocked = s.researchBlockReservation
        if (to !== 'INVESTIGATING' || !has((x) => (x.type === 'CaptureRecorded' || x.type === 'BudgetReleased') && x.data.reservation_id === blocked)) return { rule: 'lifecycle.resume', message: `RESEARCH_UNAVAILABLE ends when the blocked plan's reservation (${String(blocked)}) is answered, refused or cancelled, in the same command` }
        return null
      }
      return transition('not a block the deciders write')
    }
    default: {
      const _never: never = from
      return _never
    }
  }
}

// --- object checks ------------------------------------------------------------------------------------

const Provenance = t.type({ capture: t.string, pointer: t.string })
const FactsDocument = t.type({ format: t.literal('vba-facts'), version: t.number, revision: t.number, facts: t.array(t.UnknownRecord) })

const parseJson = (bytes: Uint8Array): unknown => {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    return undefined
  }
}

/** Every {capture, pointer} object inside a fact, wherever it sits (provenance, from, to). */
const provenanceOf = (value: unknown, out: Array<t.TypeOf<typeof Provenance>> = []): Array<t.TypeOf<typeof Provenance>> => {
  if (Array.isArray(value)) for (const v of value) provenanceOf(v, out)
  else if (typeof value === 'object' && value !== null) {
    if (Provenance.is(value)) out.push(value)
    for (const v of Object.values(value)) provenanceOf(v, out)
  }
  return out
}

/**
 * Checks the obligations of a fold against object contents. Objects that cannot be read are
 * skipped: a missing object is a finding of its own (OBJECT_MISSING).
 */
/** Why a capture's origin is not what the binding names, or null. */
const bindingProblem = (b: Binding, c: Capture): string | null => {
  const o = c.origin
  if (o.type === 'git') {
    if (b.source === null) return `a source capture, but the case is bound to no repository`
    if (o.commit !== b.source.commit || o.url !== b.source.url) return `the capture is of ${o.url} at ${o.commit.slice(0, 12)}, the case is bound to ${b.source.url} at ${b.source.commit.slice(0, 12)}`
    return null
  }
  if (b.database === null) return 'a database capture, but the case is bound to no database'
  if (o.snapshot_id !== b.database.snapshot_id || o.client !== b.database.client || !b.database.databases.includes(o.database)) {
    return `the capture is of ${o.client} ${o.database} snapshot ${o.snapshot_id}, the case is bound to ${b.database.client} ${b.database.databases.join(', ')} snapshot ${b.database.snapshot_id}`
  }
  return null
}

export const checkObligations = (obligations: readonly Obligation[], read: ReadObject): RuleViolation[] => {
  const out: RuleViolation[] = []
  const captures = new Map<string, Capture | null>()
  const captureOf = (ref: ObjectRefLite): Capture | null | undefined => {
    if (captures.has(ref.digest)) return captures.get(ref.digest)
    const bytes = read(ref)
    if (bytes === undefined) return undefined
    const parsed = parseJson(bytes)
    const decoded = Capture.decode(parsed)
    // A capture with members its format does not name is not a capture of this format.
    const c = E.isRight(decoded) && unknownMember(Capture, parsed) === null ? decoded.right : null
    captures.set(ref.digest, c)
    return c
  }
  for (const ob of obligations) {
    const bad = (code: RuleCode, rule: string, message: string): void => {
      out.push({ code, rule, message, seq: ob.seq })
    }
    if (ob.kind === 'prompt') continue
    if (ob.kind === 'binding') {
      for (const ref of ob.captures) {
        const c = captureOf(ref)
        const why = c === undefined || c === null ? null : bindingProblem(ob.binding, c)
        if (why !== null) bad('RULE_RESEARCH', 'research.binding', why)
      }
      continue
    }
    if (ob.kind === 'decision') {
      const bytes = read(ob.ref)
      const problem = bytes === undefined ? null : decisionProblem(ob, bytes)
      if (problem !== null) bad('RULE_TURN', 'turn.derived', problem)
      continue
    }
    if (ob.kind === 'capture') {
      const c = captureOf(ob.ref)
      if (c === undefined) continue
      if (c === null) bad('RULE_RESEARCH', 'research.capture-object', `object ${ob.ref.digest} is not a capture`)
      else if (c.kind !== ob.queryKind) bad('RULE_RESEARCH', 'research.capture-object', `the capture is a ${c.kind}, recorded as ${ob.queryKind}`)
      else if (digestOf(c.request) !== ob.requestDigest) bad('RULE_RESEARCH', 'research.capture-object', 'the capture\'s request does not have the recorded request digest')
      continue
    }
    const bytes = read(ob.ref)
    if (bytes === undefined) continue
    const doc = FactsDocument.decode(parseJson(bytes))
    if (E.isLeft(doc) || doc.right.revision !== ob.revision) {
      bad('RULE_REVISION', 'revision.facts', `object ${ob.ref.digest} is not the facts document of revision ${ob.revision}`)
      continue
    }
    const facts = doc.right.facts
    if (facts.length !== ob.factCount) bad('RULE_REVISION', 'revision.facts', `the revision says ${ob.factCount} facts, its document has ${facts.length}`)
    const known = new Map(ob.known.map((r) => [r.digest, r]))
    for (const r of ob.captures) known.set(r.digest, r)
    for (const p of facts.flatMap((f) => provenanceOf(f))) {
      const ref = known.get(p.capture)
      if (ref === undefined) {
        bad('RULE_REVISION', 'revision.provenance', `a fact points into ${p.capture.slice(0, 20)}…, which is not a capture of this case`)
        continue
      }
      const c = captureOf(ref)
      if (c != null && resolvePointer(c, p.pointer) === undefined) bad('RULE_REVISION', 'revision.provenance', `pointer ${p.pointer} does not resolve in capture ${p.capture.slice(0, 20)}…`)
    }
    const coverage = facts.filter((f) => f['type'] === 'project_context_coverage')
    const claimed = coverage[0]?.['complete']
    if (coverage.length !== 1 || typeof claimed !== 'boolean') {
      bad('RULE_REVISION', 'revision.facts', 'the facts hold exactly one project_context_coverage fact')
      continue
    }
    if (claimed !== ob.complete) bad('RULE_REVISION', 'revision.facts', `the revision says complete=${ob.complete}, its coverage fact says ${claimed}`)
    if (claimed) {
      const behind = ob.captures.map((r) => captureOf(r)).filter((c): c is Capture => c != null)
      const requests = new Set(behind.map((c) => digestOf(c.request)))
      for (const c of behind) {
        const markers = partialMarkers(c.result).filter((m) => {
          // a page with more rows is covered when the next page was captured too
          const next = c.result['next_offset']
          return !(m.startsWith('has_more') && typeof next === 'number' && requests.has(digestOf(continuationOf(c.request, next))))
        })
        if (markers.length > 0) bad('RULE_REVISION', 'revision.coverage', `the coverage says complete, but a ${c.kind} capture behind it is partial (${markers.join('; ')})`)
      }
    }
  }
  return out
}

/** The facts derivations of the obligations (async: enrichment runs again over the recorded captures). */
export const checkFactsDerivation = async (obligations: readonly Obligation[], read: ReadObject): Promise<RuleViolation[]> => {
  const out: RuleViolation[] = []
  for (const ob of obligations) {
    if (ob.kind !== 'facts') continue
    const problem = await factsProblem(ob, read)
    if (problem !== null) out.push({ code: 'RULE_REVISION', rule: 'revision.derived', message: problem, seq: ob.seq })
  }
  return out
}
