/**
 * The rule fold: every recorded event is checked against the state before it, then folded in.
 * Verify, replay, open and the writer all run it. A change of `command_id` ends a command, and
 * what the command still owed (a capture without its consumption, an answer without its
 * decision) is a violation then.
 */
import type { RecordedEvent } from '../../events/chain.js'
import { initCaseState, snapshotCaseState, type CaseState } from '../case-state.js'
import { evolve } from '../case-evolve.js'
import { checkTime } from './time.js'
import { checkEvent } from './events.js'
import { violation, type RuleId, type RuleViolation } from './ids.js'
import type { CommandContext, NotApplied, Obligation, RuleContext } from './context.js'

export interface RuleFold {
  readonly state: () => CaseState
  /** Checks `e` in the state before it, then folds it in. A new command_id ends the previous command. */
  readonly feed: (e: RecordedEvent) => RuleViolation[]
  /** Ends the current command: what it still owed is a violation. Call at the end of the log. */
  readonly end: () => RuleViolation[]
  /** Object checks collected so far (see checkObligations). */
  readonly obligations: () => readonly Obligation[]
  /** What the rules could not check so far, one entry per rule and reason with the events it concerns. */
  readonly notApplied: () => readonly NotApplied[]
}

export interface RuleFoldOptions {
  /** The case's creation time (its declaration): no event is dated before it. */
  readonly createdAt?: string
  /** The verification time (epoch ms): no event is dated after it. */
  readonly notAfter?: number
  /** The format generation its declaration records (src/events/generations.ts): older versions are a violation. */
  readonly formatGeneration?: number
  /** The case's id (its declaration): a signed command names it. */
  readonly caseId?: string
}

/** The rule fold, starting from `initial` (a fresh case by default). */
export const ruleFold = (initial: CaseState = initCaseState(), options: RuleFoldOptions = {}): RuleFold => {
  const s = initial
  if (options.createdAt !== undefined) s.createdAt = options.createdAt
  if (options.formatGeneration !== undefined) s.formatGeneration = options.formatGeneration
  if (options.caseId !== undefined) s.caseId = options.caseId
  const notAfter = options.notAfter ?? null
  let cmd: CommandContext | null = null
  const obligations: Obligation[] = []
  const skipped = new Map<string, { rule: RuleId; reason: string; seqs: number[] }>()
  const end = (): RuleViolation[] => {
    const owed = cmd === null ? [] : cmd.expectations.map((x) => violation(x.rule, x.message, x.seq))
    if (cmd?.answer !== undefined)
      obligations.push({
        kind: 'decision',
        ...cmd.answer,
        decided: cmd.events
          .slice(1)
          .filter((e) => e.type !== 'CommandSigned')
          .map((e) => ({ type: e.type, actor: e.actor, data: e.data }))
      })
    cmd = null
    return owed
  }
  const feed = (e: RecordedEvent): RuleViolation[] => {
    const out = cmd !== null && cmd.commandId !== e.command_id ? end() : []
    // biome-ignore lint/suspicious/noAssignInExpressions: a command context starts at its first event
    const current: CommandContext = (cmd ??= { commandId: e.command_id, events: [], expectations: [] })
    current.expectations = current.expectations.filter((x) => !x.met(e))
    for (const v of checkTime(s, e, current.events[0]?.at ?? null, notAfter))
      out.push(violation(v.rule, v.message, e.seq))
    const context: RuleContext = {
      s,
      cmd: current,
      e,
      obligations,
      bad: (rule, message) => {
        out.push(violation(rule, message, e.seq))
      },
      expect: (rule, message, met) => {
        current.expectations.push({ seq: e.seq, rule, message, met })
      },
      skip: (rule, reason) => {
        const key = `${rule}\u0000${reason}`
        const known = skipped.get(key)
        if (known === undefined) skipped.set(key, { rule, reason, seqs: [e.seq] })
        else if (known.seqs[known.seqs.length - 1] !== e.seq) known.seqs.push(e.seq)
      }
    }
    checkEvent(context)
    if (e.type === 'ModelResponded' && current.events.length === 0)
      current.answer = { seq: e.seq, ref: e.data.raw, turn: e.data.turn, at: e.at, state: snapshotCaseState(s) }
    if (e.type === 'ModelRequested')
      obligations.push({
        kind: 'prompt',
        seq: e.seq,
        ref: e.data.prompt,
        turn: e.data.turn,
        version: e.data.prompt_version,
        state: snapshotCaseState(s)
      })
    current.events.push(e)
    if (e.type === 'CommandSigned') current.signed = true
    evolve(s, e)
    return out
  }
  const notApplied = (): NotApplied[] => [...skipped.values()].map((x) => ({ ...x, seqs: [...x.seqs] }))
  return { state: () => s, obligations: () => obligations, notApplied, end, feed }
}
