import type { Author } from '../domain/inputs-decider.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { AppendOutcome } from '../adapters/case-store/append.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import { deciding, intentIs, runCommand, type CommandOptions } from './run.js'
import { optional } from '../optional.js'

/** @category cases */
export interface NoteInput extends CommandOptions {
  readonly text: string
  readonly format?: 'plain' | 'markdown'
  /** Who writes it (default operator). */
  readonly author?: Author
}

/** Records a note by an operator or a controller. */
export const recordNote = (at: CaseAt, input: NoteInput): Promise<AppendOutcome> => {
  const note = { author: input.author ?? 'operator', text: input.text, format: input.format ?? 'plain' }
  return runCommand(at, (env) => `note-${env.newId()}`, deciding('RecordNote', note), {
    ...input,
    sameIntent: intentIs('NoteRecorded', { actor: note.author, text: note.text, format: note.format })
  })
}

/** @category cases */
export interface AttachmentInput extends CommandOptions {
  readonly name: string
  readonly bytes: Uint8Array
  readonly mediaType?: string
  readonly author?: Author
}

/** Adds a file (a log, a screenshot) handed in by a person, stored as an object. */
export const addAttachment = (at: CaseAt, input: AttachmentInput): Promise<AppendOutcome> => {
  const ref = objectRefOf(input.bytes, input.mediaType)
  const author = input.author ?? 'operator'
  return runCommand(
    at,
    (env) => `attachment-${env.newId()}`,
    deciding('AddAttachment', { author, name: input.name, object: ref }, [input.bytes]),
    { ...input, sameIntent: intentIs('AttachmentAdded', { actor: author, name: input.name, object: ref }) }
  )
}

/** @category cases */
export interface CancelPlanInput extends CommandOptions {
  readonly reason: string
  /** An operator query's reservation; default: the pending plan's. */
  readonly reservationId?: string
}

/** An operator cancels the confirmed plan waiting to be carried out; its budget is released. */
export const cancelPlan = (at: CaseAt, input: CancelPlanInput): Promise<AppendOutcome> =>
  runCommand(
    at,
    (env) => `cancel-${env.newId()}`,
    deciding('CancelPlan', {
      reason: input.reason,
      ...optional('reservationId', input.reservationId)
    }),
    {
      ...input,
      // without a reservation named, whichever the plan's was
      sameIntent: intentIs('PlanCancelled', {
        reason: input.reason,
        ...optional('reservation_id', input.reservationId)
      })
    }
  )

/** @category cases */
export interface TopUpInput extends CommandOptions {
  readonly amount: number
  readonly reason: string
}

/** An operator adds budget to a running investigation, with a reason. */
export const topUpBudget = (at: CaseAt, input: TopUpInput): Promise<AppendOutcome> =>
  runCommand(at, (env) => `top-up-${env.newId()}`, deciding('TopUp', { amount: input.amount, reason: input.reason }), {
    ...input,
    sameIntent: intentIs('BudgetToppedUp', { amount: input.amount, reason: input.reason })
  })
