/**
 * The case's decider, in emmett's shape: one union of the commands that write a case, one
 * exhaustive `decide(command, state)` from the folded state to the events the command produces
 * (or a coded refusal), `evolve` to fold them in, and the state a new case starts from. Each
 * command's rules live with its family (lifecycle.ts for starts, turns and blocks,
 * research-decider.ts for budget and research, inputs-decider.ts for what people hand in); the
 * rule fold (rules/) checks the same things on a recorded log.
 *
 * Every command carries the time it is decided at (`metadata.now`): a decider never reads a clock,
 * and the events of a command are dated with it.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../events/chain.js'
import type { InvestigationSettings } from '../events/settings.js'
import type { Failure } from '../failures/failure.js'
import type { Decision } from './decision.js'
import { initCaseState, type CaseState } from './case-state.js'
import { evolve } from './case-evolve.js'
import {
  decideAttachment,
  decideCompleteRevision,
  decideInputs,
  decideNote,
  type Attachment,
  type Author,
  type Completion,
  type InputsIndex,
  type InputsOutcome,
  type Note
} from './inputs-decider.js'
import {
  decideFeedback,
  decideModelFailure,
  decideRequest,
  decideResponse,
  decideResume,
  decideStart,
  type RecordedAnswer,
  type TurnRequest
} from './lifecycle-decider.js'
import {
  decideCancelPlan,
  decideRecordCapture,
  decideRecordFailure,
  decideReserve,
  decideTopUp,
  type CancelPlan,
  type RecordCapture,
  type RecordFailure,
  type Reserve
} from './research-decider.js'

/** A command: its type, what it carries, and when it is decided. @category Deciders */
export interface Command<Type extends string, Data> {
  readonly type: Type
  readonly data: Data
  readonly metadata: { readonly now: Date }
}

/** Every command that writes a case. @category Deciders */
export type CaseCommand =
  | Command<'RecordNote', Note>
  | Command<'AddAttachment', Attachment>
  /** The inputs of the next revision (none when an earlier revision holds the same inputs, unless `again` and it is completed). */
  | Command<'RecordInputs', { readonly author: Author; readonly index: InputsIndex; readonly again?: boolean }>
  | Command<'CompleteRevision', Completion>
  | Command<'StartInvestigation', { readonly settings: InvestigationSettings }>
  | Command<'RequestModel', TurnRequest>
  | Command<'RecordAnswer', RecordedAnswer>
  | Command<'RecordModelFailure', { readonly turn: number; readonly failure: Failure }>
  | Command<'Resume', { readonly manualRetry: boolean }>
  | Command<'RecordFeedback', { readonly requestId: string; readonly feedback: string }>
  | Command<'Reserve', Reserve>
  | Command<'RecordCapture', RecordCapture>
  | Command<'RecordResearchFailure', RecordFailure>
  | Command<'CancelPlan', CancelPlan>
  | Command<'TopUp', { readonly amount: number; readonly reason: string }>

/** @category Deciders */
export type CaseCommandType = CaseCommand['type']

/** What a command of each type carries. @category Deciders */
export type CommandData = { readonly [C in CaseCommand as C['type']]: C['data'] }

export type { Decision }

/**
 * The decider of each command type, from the state before it, what the command carries and when
 * it is decided (one per type of `CaseCommand`: a new type does not compile until it has one).
 */
const DECIDERS: {
  readonly [C in CaseCommand as C['type']]: (state: CaseState, data: C['data'], now: Date) => Decision
} = {
  RecordNote: (_, data) => decideNote(data),
  AddAttachment: (_, data) => decideAttachment(data),
  RecordInputs: (state, data) =>
    E.map((o: InputsOutcome) => (o.status === 'new' ? o.events : []))(decideInputs(state, data)),
  CompleteRevision: decideCompleteRevision,
  StartInvestigation: decideStart,
  RequestModel: decideRequest,
  RecordAnswer: decideResponse,
  RecordModelFailure: decideModelFailure,
  Resume: decideResume,
  RecordFeedback: decideFeedback,
  Reserve: decideReserve,
  RecordCapture: decideRecordCapture,
  RecordResearchFailure: decideRecordFailure,
  CancelPlan: decideCancelPlan,
  TopUp: decideTopUp
}

/** Decides `command` on `state` (the state before it). Pure. @category Deciders */
export const decide = (command: CaseCommand, state: CaseState): Decision =>
  // the decider of the command's own type
  (DECIDERS[command.type] as (state: CaseState, data: CaseCommand['data'], now: Date) => Decision)(
    state,
    command.data,
    command.metadata.now
  )

/** A command of `type` with `data`, decided at `now`. @category Deciders */
export const command = <T extends CaseCommandType>(
  type: T,
  data: CommandData[T],
  now: Date
): Extract<CaseCommand, { type: T }> => ({ type, data, metadata: { now } }) as Extract<CaseCommand, { type: T }>

/**
 * The decider: `decide`, `evolve` and `initialState`. `evolve` folds a recorded event into the
 * state in place and returns it (a fold over a long log copies nothing).
 * @category Deciders
 */
export const caseDecider: {
  readonly decide: (command: CaseCommand, state: CaseState) => Decision
  readonly evolve: (state: CaseState, event: RecordedEvent) => CaseState
  readonly initialState: () => CaseState
} = { decide, evolve, initialState: initCaseState }
