/**
 * The library in the fp-ts style: every call returns a `TaskEither<Failure, A>` (run it with `()`),
 * and failures are plain values (`{_tag: 'Failure', code, message, data}`). The same functions the
 * Promise client (the root entry) is built on; use one style or the other.
 *
 * @packageDocumentation
 * @module vba-case-research/fp
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { Failure } from './domain/failure.js'
import { queryInCase as queryInCaseP, type CaseQueryResult, type CaseQueryOptions } from './research/case-query.js'
import { prepareRevision as prepareRevisionP, readInputs as readInputsP, type PrepareOptions, type PrepareResult, type RevisionInputs } from './research/prepare.js'
import type { EnrichmentConfig } from './domain/enrichment-config.js'
import type { ProjectResearch } from './research/project-research.js'
import { advance as advanceP, nextPrompt as nextPromptP, recordFeedback as recordFeedbackP, resumeCase as resumeCaseP, startInvestigation as startInvestigationP, type AdvanceOptions, type AdvanceResult, type StartOptions } from './investigation/loop.js'
import { addAttachment as addAttachmentP, cancelPlan as cancelPlanP, recordNote as recordNoteP, topUpBudget as topUpBudgetP, type AttachmentInput, type CancelPlanInput, type CommandOptions, type NoteInput, type TopUpInput } from './investigation/commands.js'
import type { AppendOutcome } from './adapters/case-store/append.js'
import type { RenderedPrompt } from './projections/prompt.js'
import type { Env } from './adapters/env.js'

export type { Failure, FailureCode, FailureKind } from './domain/failure.js'
export { failure, isFailure, failureKind, FAILURE_CODES } from './domain/failure.js'
export { initCase, type InitOptions } from './adapters/case-store/init.js'
export { openCase, type CaseHandle } from './adapters/case-store/open.js'
export { verifyCase, parseReceipt, type VerifyOptions, type VerifyReport } from './adapters/case-store/verify.js'
export { replayCase, type ReplayResult } from './adapters/case-store/replay.js'
export { gcCase, type GcReport } from './adapters/case-store/gc.js'
export { readObject } from './adapters/case-store/objects.js'
export { exportCase, type ExportReport, type ExportOptions } from './adapters/bagit/export.js'
export { importCase, verifyBag, type BagCheck, type ImportReport } from './adapters/bagit/import.js'
export { loadProfile, profileFromObject, type Profile } from './adapters/config/profile.js'
export { createProjectResearch, type ProjectResearch, type ResearchOptions } from './research/project-research.js'
export { openSourceResearch } from './research/source/open.js'
export { enrichmentConfig } from './research/prepare.js'
export { settingsOf } from './investigation/settings.js'
export { defaultProjections } from './projections/defaults.js'
export { lifecycleProjection, lifecycleView } from './projections/lifecycle.js'
export type { Projection, AnyProjection } from './projections/projection.js'
export type { ModelFn, ModelRequest, AdvanceStep } from './investigation/loop.js'
export type { Capture } from './events/capture.js'
export type { RecordedEvent } from './events/chain.js'
export type { Receipt } from './adapters/case-store/append.js'

const te = <A>(run: () => Promise<import('fp-ts/lib/Either.js').Either<Failure, A>>): TE.TaskEither<Failure, A> => run

/** A project.query recorded in a case (see the root API's `research.queryInCase`). */
export const queryInCase = (dir: string, research: ProjectResearch, args: unknown, commandId: string, options: CaseQueryOptions = {}): TE.TaskEither<Failure, CaseQueryResult> =>
  te(() => queryInCaseP(dir, research, args, commandId, options))
/** Records a revision and runs the enrichment. */
export const prepareRevision = (dir: string, research: ProjectResearch, config: EnrichmentConfig, inputs: RevisionInputs, options: PrepareOptions = {}): TE.TaskEither<Failure, PrepareResult> =>
  te(() => prepareRevisionP(dir, research, config, inputs, options))
/** Reads REPORT.json (attachments relative to it, inside its directory). */
export const readInputs = (file: string): TE.TaskEither<Failure, RevisionInputs> => te(() => readInputsP(file))
/** Starts the investigation; the generation after it. */
export const startInvestigation = (dir: string, options: StartOptions): TE.TaskEither<Failure, number> => te(() => startInvestigationP(dir, options))
/** Runs the loop (see the root API's `investigations.advance`). */
export const advance = (dir: string, options: AdvanceOptions): TE.TaskEither<Failure, AdvanceResult> => te(() => advanceP(dir, options))
/** Resumes a blocked case. */
export const resumeCase = (dir: string, options: { manualRetry: boolean; expectedGeneration?: number; env?: Env; commandId?: string }): TE.TaskEither<Failure, AdvanceResult> => te(() => resumeCaseP(dir, options))
/** Records lab test feedback. */
export const recordFeedback = (dir: string, requestId: string, feedback: string, options: CommandOptions = {}): TE.TaskEither<Failure, number> => te(() => recordFeedbackP(dir, requestId, feedback, options))
/** The next prompt. */
export const nextPrompt = (dir: string): TE.TaskEither<Failure, RenderedPrompt> => te(() => nextPromptP(dir))
/** Records a note. */
export const recordNote = (dir: string, input: NoteInput): TE.TaskEither<Failure, AppendOutcome> => te(() => recordNoteP(dir, input))
/** Adds an attachment. */
export const addAttachment = (dir: string, input: AttachmentInput): TE.TaskEither<Failure, AppendOutcome> => te(() => addAttachmentP(dir, input))
/** Cancels the pending plan. */
export const cancelPlan = (dir: string, input: CancelPlanInput): TE.TaskEither<Failure, AppendOutcome> => te(() => cancelPlanP(dir, input))
/** Tops up the budget. */
export const topUpBudget = (dir: string, input: TopUpInput): TE.TaskEither<Failure, AppendOutcome> => te(() => topUpBudgetP(dir, input))
