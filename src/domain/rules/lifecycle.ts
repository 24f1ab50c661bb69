/**
 * The lifecycle (family RULE_LIFECYCLE, and `budget.tokens` for a spent token budget): the start,
 * checkpoint generations, and every state change as the deciders make it: what causes each
 * transition in the same command, the shape of a block, how each block may end.
 */
import type { RecordedEvent } from '../../events/chain.js'
import { allowsManualRetry, BLOCK_REASONS, isBlockReason, namesRetryTime, resumesByTime } from '../blocks.js'
import type { CaseState } from '../case-state.js'
import { heldBudget, queryCost, remainingBudget, tokensSpent } from '../budget.js'
import { stallBlockAllowed } from './repeats.js'
import { inCommand, type CommandContext, type EventOf, type RuleContext } from './context.js'
import type { RuleId } from './ids.js'

export const isTerminal = (s: CaseState): boolean => s.state === 'CONCLUDED' || s.state === 'EXHAUSTED'

/** lifecycle.phase: an investigation action needs the case INVESTIGATING. */
export const investigating = (c: RuleContext): void => {
  if (c.s.state !== 'INVESTIGATING')
    c.bad('lifecycle.phase', `${c.e.type} is an investigation action; the case is ${c.s.state}`)
}

/** InvestigationStarted: once, from the latest completed revision, within what is committed already. */
export const checkStart = (c: RuleContext<EventOf<'InvestigationStarted'>>): void => {
  const { s, e } = c
  if (s.state !== 'NOT_STARTED' || s.settings !== null)
    c.bad('lifecycle.start-once', 'the investigation has started already')
  const done = s.revisions.filter((r) => r.completed)
  const latest = done[done.length - 1]
  if (latest === undefined)
    c.bad('lifecycle.start-revision', 'an investigation starts from a completed revision; there is none')
  else if (e.data.revision !== latest.revision)
    c.bad(
      'lifecycle.start-revision',
      `the investigation starts from revision ${e.data.revision}, but the latest completed revision is ${latest.revision}`
    )
  const committed = s.research.consumed + heldBudget(s.research)
  if (committed > e.data.settings.budget_total)
    c.bad(
      'budget.overdrawn',
      `${committed} units are committed already, more than the budget of ${e.data.settings.budget_total}`
    )
  c.expect(
    'command.whole',
    'a start is recorded with its INTERPRETING checkpoint',
    (x) => x.type === 'CheckpointRecorded' && x.data.state === 'INTERPRETING'
  )
}

/** CheckpointRecorded: the next generation, and a transition the deciders make. */
export const checkCheckpoint = (c: RuleContext<EventOf<'CheckpointRecorded'>>): void => {
  if (c.e.data.generation !== c.s.checkpoint + 1)
    c.bad(
      'lifecycle.generation',
      `checkpoint generation ${c.e.data.generation} follows ${c.s.checkpoint}; it must be ${c.s.checkpoint + 1}`
    )
  const problem = transitionProblem(c.s, c.cmd, c.e)
  if (problem !== null) c.bad(problem.rule, problem.message)
}

type Problem = { readonly rule: RuleId; readonly message: string } | null

/** The shape of a checkpoint: a block's reason, resume state and retry time; nothing of that on other states. */
const shapeProblem = (d: EventOf<'CheckpointRecorded'>['data']): Problem => {
  if (d.state === 'BLOCKED') {
    if (!isBlockReason(d.reason))
      return {
        rule: 'lifecycle.block-reason',
        message: `BLOCKED needs one of the reasons ${BLOCK_REASONS.join(', ')} (got ${String(d.reason)})`
      }
    if (d.resume_state === null)
      return { rule: 'lifecycle.block-reason', message: 'a block names the state it resumes into' }
    if (namesRetryTime(d.reason) && (d.retry_not_before === null || Number.isNaN(Date.parse(d.retry_not_before))))
      return {
        rule: 'lifecycle.block-reason',
        message: `${d.reason} names the time it may be retried (retry_not_before)`
      }
    return null
  }
  if (
    d.state === 'EXHAUSTED'
      ? d.reason !== 'BUDGET_EXHAUSTED' && d.reason !== 'TOKEN_BUDGET_EXHAUSTED'
      : d.reason !== null
  )
    return {
      rule: 'lifecycle.block-reason',
      message: `${d.state} has ${d.state === 'EXHAUSTED' ? 'the reason BUDGET_EXHAUSTED or TOKEN_BUDGET_EXHAUSTED' : 'no reason'} (got ${String(d.reason)})`
    }
  if (d.resume_state !== null || d.retry_not_before !== null)
    return {
      rule: 'lifecycle.block-reason',
      message: `only a block names a resume state and a retry time (${d.state} does)`
    }
  return null
}

/** Why a checkpoint is not one the deciders write from the state before it, or null. */
const transitionProblem = (s: CaseState, cmd: CommandContext, e: EventOf<'CheckpointRecorded'>): Problem => {
  const d = e.data
  const from = s.state
  if (from === 'CONCLUDED' || from === 'EXHAUSTED')
    return { rule: 'lifecycle.terminal', message: `no checkpoint after ${from}` }
  const shape = shapeProblem(d)
  if (shape !== null) return shape
  if (d.manual_retry && !(from === 'BLOCKED' && allowsManualRetry(s.reason))) {
    return {
      rule: 'lifecycle.resume',
      message: `a manual retry resumes only a block for INVALID_LLM_RESPONSES, MODEL_UNAVAILABLE or RESEARCH_UNAVAILABLE (the case is ${from}${s.reason === null ? '' : ` / ${s.reason}`})`
    }
  }
  switch (from) {
    case 'NOT_STARTED':
      return d.state === 'INTERPRETING' && inCommand(cmd, (x) => x.type === 'InvestigationStarted')
        ? null
        : transition(s, d, 'an investigation begins with its start, into INTERPRETING')
    case 'INTERPRETING':
    case 'INVESTIGATING':
      return fromRunning(s, cmd, d, from)
    case 'BLOCKED':
      return fromBlocked(s, cmd, e)
    default: {
      const _never: never = from
      return _never
    }
  }
}

const transition = (s: CaseState, d: EventOf<'CheckpointRecorded'>['data'], why: string): Problem => ({
  rule: 'lifecycle.transition',
  message: `${s.state}${s.reason === null ? '' : ` / ${s.reason}`} → ${d.state}${d.reason === null ? '' : ` / ${d.reason}`}: ${why}`
})

/** INTERPRETING or INVESTIGATING to the next state. */
const fromRunning = (
  s: CaseState,
  cmd: CommandContext,
  d: EventOf<'CheckpointRecorded'>['data'],
  from: 'INTERPRETING' | 'INVESTIGATING'
): Problem => {
  const has = (pred: (x: RecordedEvent) => boolean): boolean => inCommand(cmd, pred)
  switch (d.state) {
    case 'INVESTIGATING':
      return from === 'INTERPRETING' && has((x) => x.type === 'InterpretationRecorded')
        ? null
        : transition(s, d, 'INVESTIGATING follows an interpretation')
    case 'BLOCKED': {
      if (d.reason === 'INVALID_LLM_RESPONSES') {
        const limit = s.settings?.max_invalid_responses ?? 3
        if (
          !has((x) => x.type === 'ModelResponseRejected' && x.data.consecutive >= limit) &&
          !stallBlockAllowed(s, cmd.events)
        )
          return transition(
            s,
            d,
            `blocked after ${limit} invalid answers (or stalled queries) in a row, recorded in the same command`
          )
      } else if (d.reason === 'MODEL_UNAVAILABLE') {
        if (!has((x) => x.type === 'ModelFailed'))
          return transition(s, d, 'blocked by a failed model call, recorded in the same command')
      } else if (d.reason === 'AWAITING_TEST_FEEDBACK') {
        if (from !== 'INVESTIGATING' || !has((x) => x.type === 'LabTestRequested'))
          return transition(s, d, 'a lab test request, in the same command')
      } else if (from !== 'INVESTIGATING' || !has((x) => x.type === 'ResearchFailed' && x.data.unavailable))
        return transition(s, d, 'a research outage, in the same command')
      if (d.resume_state !== from)
        return {
          rule: 'lifecycle.block-reason',
          message: `the block resumes into the state it interrupted (${from}), not ${String(d.resume_state)}`
        }
      return null
    }
    case 'EXHAUSTED':
      if (d.reason === 'TOKEN_BUDGET_EXHAUSTED') {
        if (cmd.events.length > 0)
          return transition(s, d, 'a spent token budget is its own command, taken instead of the next model request')
        if (s.pendingPlan?.reservation != null)
          return transition(s, d, `plan ${s.pendingPlan.plan_id} waits to be carried out first`)
        return tokensSpent(s)
          ? null
          : {
              rule: 'budget.tokens',
              message: `${s.tokens.total} model tokens are spent, below the limit ${String(s.settings?.max_tokens)}`
            }
      }
      if (from !== 'INVESTIGATING' || !has((x) => x.type === 'ModelResponded'))
        return transition(s, d, 'EXHAUSTED is the decision on a model action the budget cannot pay')
      return remainingBudget(s) < queryCost(s)
        ? null
        : {
            rule: 'lifecycle.exhausted',
            message: `${remainingBudget(s)} units are left, enough for a query costing ${queryCost(s)}`
          }
    case 'CONCLUDED':
      return from === 'INVESTIGATING' && has((x) => x.type === 'ConclusionRecorded')
        ? null
        : transition(s, d, 'CONCLUDED follows a conclusion')
    default:
      return transition(s, d, 'not a transition the deciders make')
  }
}

/** A block ends only as its reason allows. */
const fromBlocked = (s: CaseState, cmd: CommandContext, e: EventOf<'CheckpointRecorded'>): Problem => {
  const d = e.data
  const reason = s.reason ?? ''
  const has = (pred: (x: RecordedEvent) => boolean): boolean => inCommand(cmd, pred)
  if (resumesByTime(reason)) {
    if (d.state !== s.resumeState)
      return {
        rule: 'lifecycle.resume',
        message: `a ${reason} block resumes into ${String(s.resumeState)}, not ${d.state}`
      }
    if (!d.manual_retry && s.retryNotBefore !== null && Date.parse(e.at) < Date.parse(s.retryNotBefore))
      return {
        rule: 'lifecycle.resume',
        message: `resumed at ${e.at}, before retry_not_before ${s.retryNotBefore}, without a manual retry`
      }
    return null
  }
  if (reason === 'AWAITING_TEST_FEEDBACK') {
    if (d.state !== s.resumeState || !has((x) => x.type === 'LabFeedbackRecorded'))
      return {
        rule: 'lifecycle.resume',
        message: 'only lab test feedback ends AWAITING_TEST_FEEDBACK (a manual retry never does)'
      }
    return null
  }
  if (reason === 'RESEARCH_UNAVAILABLE') {
    if (d.state === 'BLOCKED')
      return d.reason === 'RESEARCH_UNAVAILABLE' && has((x) => x.type === 'ResearchFailed' && x.data.unavailable)
        ? null
        : transition(s, d, 'a research block is renewed only by another outage')
    const blocked = s.researchBlockReservation
    if (
      d.state !== 'INVESTIGATING' ||
      !has((x) => (x.type === 'CaptureRecorded' || x.type === 'BudgetReleased') && x.data.reservation_id === blocked)
    )
      return {
        rule: 'lifecycle.resume',
        message: `RESEARCH_UNAVAILABLE ends when the blocked plan's reservation (${String(blocked)}) is answered, refused or cancelled, in the same command`
      }
    return null
  }
  return transition(s, d, 'not a block the deciders write')
}
