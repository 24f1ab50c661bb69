/**
 * The rule fold: every recorded event is checked against the state before it, then folded in.
 * Verify, replay, open and the writer all run it. A change of `command_id` ends a command, and
 * what the command still owed (a capture without its consumption, an answer without its
 * decision) is a violation then.
 *
 * Per event it allocates nothing but what it reports: one context and one command record serve
 * every event and command of the fold (a log of one-event commands paid a context with three
 * closures, a command with two arrays and a filtered array of expectations per event).
 */
import type { RecordedEvent } from '../../events/chain.js'
import { initCaseState, snapshotCaseState, type CaseState } from '../case-state.js'
import { evolve } from '../case-evolve.js'
import { checkTime, Instants } from './time.js'
import { checkEvent } from './events.js'
import { violation, type RuleId, type RuleViolation } from './ids.js'
import {
  appended,
  type CommandContext,
  type Expectation,
  type NotApplied,
  type Obligation,
  type RuleContext
} from './context.js'

export interface RuleFold {
  readonly state: () => CaseState
  /** Checks `e` in the state before it, then folds it in. A new command_id ends the previous command. */
  readonly feed: (e: RecordedEvent) => readonly RuleViolation[]
  /** Ends the current command: what it still owed is a violation. Call at the end of the log. */
  readonly end: () => readonly RuleViolation[]
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

const NO_VIOLATIONS: readonly RuleViolation[] = []

/** The command being folded (one record, cleared when the next begins: nothing keeps it past its command). */
class OpenCommand implements CommandContext {
  commandId = ''
  readonly events: RecordedEvent[] = []
  expectations: Expectation[] = []
  signed = false
  answer: CommandContext['answer'] = null

  begin(commandId: string): void {
    this.commandId = commandId
    // pop, not `length = 0` (a runtime call): most commands hold one event or a few.
    while (this.events.length > 0) this.events.pop()
    if (this.expectations.length > 0) this.expectations = []
    this.signed = false
    this.answer = null
  }
}

/** What a rule sees of the event being checked (one per fold, moved from event to event). */
class EventContext implements RuleContext {
  e: RecordedEvent = undefined as unknown as RecordedEvent
  /** The violations of the event so far (null: none yet). */
  out: RuleViolation[] | null = null

  constructor(
    readonly s: CaseState,
    readonly cmd: OpenCommand,
    readonly obligations: Obligation[],
    readonly skipped: Map<string, { rule: RuleId; reason: string; seqs: number[] }>
  ) {}

  bad(rule: RuleId, message: string): void {
    this.out = appended(this.out, violation(rule, message, this.e.seq))
  }

  expect(rule: RuleId, message: string, met: (x: RecordedEvent) => boolean): void {
    this.cmd.expectations.push({ seq: this.e.seq, rule, message, met })
  }

  skip(rule: RuleId, reason: string): void {
    const seq = this.e.seq
    const key = `${rule}\u0000${reason}`
    const known = this.skipped.get(key)
    if (known === undefined) this.skipped.set(key, { rule, reason, seqs: [seq] })
    else if (known.seqs[known.seqs.length - 1] !== seq) known.seqs.push(seq)
  }
}

/** The rule fold, starting from `initial` (a fresh case by default). */
export const ruleFold = (initial: CaseState = initCaseState(), options: RuleFoldOptions = {}): RuleFold => {
  const s = initial
  if (options.createdAt !== undefined) s.createdAt = options.createdAt
  if (options.formatGeneration !== undefined) s.formatGeneration = options.formatGeneration
  if (options.caseId !== undefined) s.caseId = options.caseId
  const notAfter = options.notAfter ?? null
  const instants = new Instants()
  const current = new OpenCommand()
  /** Whether `current` holds a command (false before the first event and after `end`). */
  let open = false
  const obligations: Obligation[] = []
  const skipped = new Map<string, { rule: RuleId; reason: string; seqs: number[] }>()
  const context = new EventContext(s, current, obligations, skipped)
  /** What the open command still owed, appended to `out` (null: none yet); the command is closed. */
  const close = (out: RuleViolation[] | null): RuleViolation[] | null => {
    if (!open) return out
    open = false
    let owed = out
    for (const x of current.expectations) owed = appended(owed, violation(x.rule, x.message, x.seq))
    if (current.answer !== null)
      obligations.push({
        kind: 'decision',
        ...current.answer,
        decided: current.events
          .slice(1)
          .filter((e) => e.type !== 'CommandSigned')
          .map((e) => ({ type: e.type, actor: e.actor, data: e.data }))
      })
    return owed
  }
  const end = (): readonly RuleViolation[] => close(null) ?? NO_VIOLATIONS
  const feed = (e: RecordedEvent): readonly RuleViolation[] => {
    let out: RuleViolation[] | null = null
    if (open && current.commandId !== e.command_id) out = close(null)
    if (!open) {
      current.begin(e.command_id)
      open = true
    }
    if (current.expectations.length > 0) current.expectations = current.expectations.filter((x) => !x.met(e))
    const first = current.events[0]
    for (const v of checkTime(s, e, first === undefined ? null : first.at, notAfter, instants))
      out = appended(out, violation(v.rule, v.message, e.seq))
    context.e = e
    context.out = out
    checkEvent(context)
    out = context.out
    context.out = null
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
    return out ?? NO_VIOLATIONS
  }
  const notApplied = (): NotApplied[] => [...skipped.values()].map((x) => ({ ...x, seqs: [...x.seqs] }))
  return { state: () => s, obligations: () => obligations, notApplied, end, feed }
}
