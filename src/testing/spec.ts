/**
 * The decider in given / when / then form, as emmett's DeciderSpecification: a history of
 * commands (or recorded drafts), one command, and the events it must produce or the code it must
 * be refused with. Every event, of the history and of the decision, also goes through the rule
 * fold that verify runs: a decision the rules would reject fails the specification even when it
 * is the expected one. Object checks (captures, facts, prompts) are not run: a specification holds
 * no objects.
 *
 *   given(command('RecordInputs', …, t0), command('CompleteRevision', …, t0))
 *     .when(command('StartInvestigation', { settings }, t1))
 *     .then([{ type: 'InvestigationStarted', … }, { type: 'CheckpointRecorded', … }])
 */
import { deepStrictEqual } from 'node:assert/strict'
import * as E from 'fp-ts/lib/Either.js'
import { genesisHash, sealEvent, type EventDraft, type RecordedEvent } from '../events/chain.js'
import { initCaseState, type CaseState } from '../domain/case-state.js'
import { decide, type CaseCommand } from '../domain/decider.js'
import { ruleFold, type RuleViolation } from '../domain/rules.js'

/**
 * A step of a history: a command decided on the state before it, or drafts recorded as one command.
 * @category Specifications
 */
export type HistoryStep = CaseCommand | readonly EventDraft[]

/** @category Specifications */
export interface Then {
  /** The command produces exactly `expected` (compared by type, actor and data), and they pass the rules. */
  readonly then: (expected: readonly EventDraft[]) => void
  /** The command is refused with `code`. */
  readonly thenFails: (code: string) => void
  /** The events the command produces (after they passed the rules), for assertions of one's own. */
  readonly events: () => readonly RecordedEvent[]
}

/** @category Specifications */
export interface Given {
  readonly when: (command: CaseCommand | ((state: CaseState) => CaseCommand)) => Then
  /** The state after the history. */
  readonly state: () => CaseState
}

const CREATED = '2026-01-01T00:00:00.000Z'

const describe = (v: readonly RuleViolation[]): string =>
  v.map((x) => `seq ${x.seq} ${x.rule}: ${x.message}`).join('\n')

/** A case log being written: drafts are sealed as commands and fed to the rule fold. */
const writer = () => {
  const fold = ruleFold(initCaseState(), { createdAt: CREATED })
  const log: RecordedEvent[] = []
  let prev = ((h) => (E.isRight(h) ? h.right : ''))(
    genesisHash({ format: 'vba-case', format_version: 1, case_id: 'spec', created_at: CREATED })
  )
  let at = CREATED
  const record = (
    drafts: readonly EventDraft[],
    when: Date | null
  ): { events: RecordedEvent[]; violations: RuleViolation[] } => {
    // Commands without a time of their own are dated one second after the last.
    at = when?.toISOString() ?? new Date(Date.parse(at) + 1000).toISOString()
    const commandId = `c${log.length + 1}`
    const events: RecordedEvent[] = []
    const violations: RuleViolation[] = []
    for (const d of drafts) {
      const seq = log.length + 1
      const sealed = sealEvent(d, { seq, prev, id: `e${seq}`, at, commandId })
      if (E.isLeft(sealed)) throw new Error(`${d.type} does not seal: ${sealed.left.code}: ${sealed.left.message}`)
      prev = sealed.right.envelope.hash
      log.push(sealed.right.event)
      events.push(sealed.right.event)
      violations.push(...fold.feed(sealed.right.event))
    }
    violations.push(...fold.end())
    return { events, violations }
  }
  return { record, state: () => fold.state() }
}

const comparable = (events: readonly Pick<EventDraft, 'type' | 'actor' | 'data'>[]): unknown[] =>
  events.map((e) => ({ type: e.type, actor: e.actor, data: e.data }))

/** A specification starting from `history` (each step must be decided and pass the rules). @category Specifications */
export const given = (...history: readonly HistoryStep[]): Given => {
  const w = writer()
  for (const [i, step] of history.entries()) {
    const isCommand = !Array.isArray(step)
    const drafts = isCommand ? decide(step as CaseCommand, w.state()) : E.right(step as readonly EventDraft[])
    if (E.isLeft(drafts))
      throw new Error(
        `given: step ${i + 1} (${(step as CaseCommand).type}) is refused: ${drafts.left.code}: ${drafts.left.message}`
      )
    const { violations } = w.record(drafts.right, isCommand ? (step as CaseCommand).metadata.now : null)
    if (violations.length > 0) throw new Error(`given: step ${i + 1} breaks the rules:\n${describe(violations)}`)
  }
  return {
    state: w.state,
    when: (c) => {
      const cmd = typeof c === 'function' ? c(w.state()) : c
      const decided = decide(cmd, w.state())
      let recorded: readonly RecordedEvent[] | null = null
      const events = (): readonly RecordedEvent[] => {
        if (recorded !== null) return recorded
        if (E.isLeft(decided)) throw new Error(`${cmd.type} is refused: ${decided.left.code}: ${decided.left.message}`)
        const out = w.record(decided.right, cmd.metadata.now)
        if (out.violations.length > 0)
          throw new Error(`${cmd.type} decided events the rules reject:\n${describe(out.violations)}`)
        recorded = out.events
        return recorded
      }
      return {
        events,
        // biome-ignore lint/suspicious/noThenProperty: given/when/then names the expectation; an accidental await is refused below
        then: (expected) => {
          // `await given(…).when(…)` would call this with a resolve function: say so instead of comparing it.
          if (!Array.isArray(expected))
            throw new Error(
              'given(…).when(…) is not a promise: call .then([expected events]) or .thenFails(code), without await'
            )
          if (E.isLeft(decided))
            throw new Error(
              `${cmd.type} is refused (${decided.left.code}: ${decided.left.message}), expected ${expected.length} events`
            )
          deepStrictEqual(comparable(decided.right), comparable(expected))
          events()
        },
        thenFails: (code) => {
          if (E.isRight(decided))
            throw new Error(
              `${cmd.type} decided ${decided.right.map((e) => e.type).join(', ') || 'nothing'}, expected the refusal ${code}`
            )
          deepStrictEqual(decided.left.code, code)
        }
      }
    }
  }
}
