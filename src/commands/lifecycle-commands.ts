import type { CaseState } from '../domain/case-state.js'
import type { InvestigationSettings } from '../events/settings.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { CaseAt, Lease } from '../adapters/case-store/store.js'
import type { Receipt } from '../adapters/case-store/append.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { decideAndAppend, deciding, intentIs, openAt, runCommand, type CommandOptions } from './run.js'
import { optional } from '../optional.js'
import { reasonOf, type StatusReason } from '../projections/lifecycle-view.js'

/** @category investigations */
export interface StartOptions extends CommandOptions {
  readonly settings: InvestigationSettings
}

/** Starts the investigation of a prepared case (its latest completed revision); returns the generation. */
export const startInvestigation = async (at: CaseAt, opts: StartOptions): Promise<number> =>
  (
    await runCommand(at, () => 'investigation-start', deciding('StartInvestigation', { settings: opts.settings }), {
      ...opts,
      sameIntent: intentIs('InvestigationStarted', { settings: opts.settings })
    })
  ).generation

/**
 * Where `advance` (or a resume) left the case: its state and reason, turns run, the generation and its receipt.
 * @category investigations
 */
export interface AdvanceResult {
  readonly state: CaseState['state']
  /** Why the case is blocked or exhausted (a union: a switch on it is exhaustive); null otherwise. */
  readonly reason: StatusReason | null
  readonly retry_not_before: string | null
  readonly turns: number
  readonly generation: number
  /** Receipt of the last event (seq, hash); keep it to detect a rollback later. */
  readonly receipt: Receipt
  /** The controller's signal stopped the call (a model call in flight was abandoned: its request is recorded, no answer to it). */
  readonly cancelled: boolean
  /** Why the model could not be used, while the case waits for it (code and message: HTTP status and the provider's text). */
  readonly last_model_failure: { readonly code: string; readonly message: string } | null
  /** The model of the latest answer (as the provider reported it), and the tokens the case has spent. */
  readonly model: string | null
  readonly tokens: number
}

/** What a step left: the case's state, the turns run and the receipt of its head. */
export const resultOf = (handle: CaseHandle, turns: number, cancelled = false): AdvanceResult => {
  const s = handle.cursor.state
  return {
    state: s.state,
    reason: reasonOf(s.reason),
    retry_not_before: s.retryNotBefore,
    turns,
    generation: handle.cursor.seq,
    receipt: { seq: handle.cursor.seq, hash: handle.cursor.hash },
    cancelled,
    last_model_failure: s.lastModelFailure,
    model: s.lastModel?.model ?? null,
    tokens: s.tokens.total
  }
}

/** Resumes a blocked case (see decideResume); `expectedGeneration` guards against a moved case. */
export const resumeCase = async (
  at: CaseAt,
  opts: { manualRetry: boolean; expectedGeneration?: number; env?: Env; commandId?: string; lease?: Lease }
): Promise<AdvanceResult> => {
  const env = opts.env ?? systemEnv
  const handle = await openAt(at)
  const s = handle.cursor.state
  await decideAndAppend(
    handle,
    opts.commandId ?? `resume-${s.checkpoint + 1}`,
    deciding('Resume', { manualRetry: opts.manualRetry }),
    {
      env,
      ...optional('expectedGeneration', opts.expectedGeneration),
      ...optional('lease', opts.lease)
    }
  )
  return resultOf(handle, 0)
}

/** Records lab test feedback; a case waiting for it continues. Returns the generation. */
export const recordFeedback = async (
  at: CaseAt,
  requestId: string,
  feedback: string,
  opts: CommandOptions = {}
): Promise<number> =>
  (
    await runCommand(at, () => `feedback-${requestId}`, deciding('RecordFeedback', { requestId, feedback }), {
      ...opts,
      sameIntent: intentIs('LabFeedbackRecorded', { request_id: requestId, feedback })
    })
  ).generation
