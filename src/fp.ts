/**
 * The library in the fp-ts style: every call returns a `TaskEither<Failure, A>` (run it with `()`),
 * and failures are plain values (`{_tag: 'Failure', code, message, data}`). The same functions the
 * Promise client (the root entry) is built on; use one style or the other.
 *
 * @packageDocumentation
 * @module vba-case-research/fp
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import type { Failure } from './failures/failure.js'
import { queryInCase as queryInCaseP, type CaseQueryResult, type CaseQueryOptions } from './commands/case-query.js'
import {
  prepareRevision as prepareRevisionP,
  readInputs as readInputsP,
  type PrepareOptions,
  type PrepareResult,
  type RevisionInputs
} from './commands/prepare.js'
import type { EnrichmentConfig } from './domain/enrichment-config.js'
import type { ProjectResearch } from './research/project-research.js'
import { advance as advanceP, nextPrompt as nextPromptP, type LoopOptions } from './investigation/loop.js'
import {
  recordFeedback as recordFeedbackP,
  resumeCase as resumeCaseP,
  startInvestigation as startInvestigationP,
  type AdvanceResult,
  type StartOptions
} from './commands/lifecycle.js'
import type { CommandOptions } from './commands/run.js'
import {
  addAttachment as addAttachmentP,
  cancelPlan as cancelPlanP,
  recordNote as recordNoteP,
  topUpBudget as topUpBudgetP,
  type AttachmentInput,
  type CancelPlanInput,
  type NoteInput,
  type TopUpInput
} from './commands/typed.js'
import type { AppendOutcome } from './adapters/case-store/append.js'
import type { RenderedPrompt } from './projections/prompt.js'
import type { Env } from './adapters/env.js'
import type { CaseAt } from './adapters/case-store/store.js'
import type { SqlStore, SqlStoreOptions } from './adapters/sql-store/sql-store.js'
import { migrateStoreAt, openStore } from './adapters/stores.js'
import { work as workP, type WorkerOptions, type WorkSummary } from './investigation/worker.js'
import { listDirectoryQueue as listDirectoryQueueP } from './adapters/case-store/directory-queue.js'
import type { QueueEntry } from './projections/queue.js'
import { toFailure } from './failures/error.js'
import * as TEv from 'fp-ts/lib/TaskEither.js'

export type { Failure, FailureCode, FailureKind } from './failures/failure.js'
export { failure, isFailure, failureKind, FAILURE_CODES } from './failures/failure.js'
export { initCase, type InitOptions } from './adapters/case-store/init.js'
export { openCase } from './adapters/case-store/directory-store.js'
export type { CaseHandle } from './adapters/case-store/open.js'
export { verifyCase, parseReceipt, type VerifyOptions, type VerifyReport } from './adapters/case-store/verify.js'
export { replayCase, type ReplayResult } from './adapters/case-store/replay.js'
export { gcCase, type GcReport } from './adapters/case-store/gc.js'
export { readObject } from './adapters/case-store/objects.js'
export { exportCase, type ExportReport, type ExportOptions } from './adapters/bagit/export.js'
export { importCase, verifyBag, type BagCheck, type ImportReport } from './adapters/bagit/import.js'
export { loadProfile, profileFromObject, type Profile } from './adapters/config/profile.js'
export { createProjectResearch, type ProjectResearch, type ResearchOptions } from './research/project-research.js'
export { openSourceResearch, type SourceOpenOptions } from './research/source/open.js'
export type { SnapshotNotice, BuildProgress } from './adapters/git/snapshot.js'
export { enrichmentConfig } from './commands/prepare.js'
export { settingsOf } from './investigation/settings.js'
export { defaultProjections } from './projections/defaults.js'
export { lifecycleProjection, lifecycleView } from './projections/lifecycle.js'
export type { Projection, AnyProjection } from './projections/projection.js'
export type {
  ModelFn,
  ModelRequest,
  ModelAnswer,
  ModelAnswerInfo,
  ModelProvenance,
  ModelUsage,
  ModelParameters
} from './investigation/model-fn.js'
export type { AdvanceStep } from './investigation/loop.js'
export type { Capture } from './events/capture.js'
export type { RecordedEvent } from './events/chain.js'
export type { Receipt } from './adapters/case-store/append.js'
export type { CaseAt, CaseStore, StoredCase, Lease, QueueStore } from './adapters/case-store/store.js'
export type { SqlStore, SqlStoreOptions } from './adapters/sql-store/sql-store.js'
export type { QueueEntry, QueueRow } from './projections/queue.js'
export type { WorkerOptions, WorkEvent } from './investigation/worker.js'
export type { WorkSummary, WorkFailure } from './investigation/work-summary.js'
export { openCaseAt, verifyAt, replayAt, readObjectAt, createCaseAt } from './adapters/case-store/at.js'
export { directoryStore } from './adapters/case-store/directory-store.js'

const te = <A>(run: () => Promise<import('fp-ts/lib/Either.js').Either<Failure, A>>): TE.TaskEither<Failure, A> => run

/** A project.query recorded in a case (see the root API's `research.queryInCase`). */
export const queryInCase = (
  dir: CaseAt,
  research: ProjectResearch,
  args: unknown,
  commandId: string,
  options: CaseQueryOptions = {}
): TE.TaskEither<Failure, CaseQueryResult> => te(() => queryInCaseP(dir, research, args, commandId, options))
/** Records a revision and runs the enrichment. */
export const prepareRevision = (
  dir: CaseAt,
  research: ProjectResearch,
  config: EnrichmentConfig,
  inputs: RevisionInputs,
  options: PrepareOptions = {}
): TE.TaskEither<Failure, PrepareResult> => te(() => prepareRevisionP(dir, research, config, inputs, options))
/** Reads REPORT.json (attachments relative to it, inside its directory). */
export const readInputs = (file: string): TE.TaskEither<Failure, RevisionInputs> => te(() => readInputsP(file))
/** Starts the investigation; the generation after it. */
export const startInvestigation = (dir: CaseAt, options: StartOptions): TE.TaskEither<Failure, number> =>
  te(() => startInvestigationP(dir, options))
/** Runs the loop (see the root API's `investigations.advance`). */
export const advance = (dir: CaseAt, options: LoopOptions): TE.TaskEither<Failure, AdvanceResult> =>
  te(() => advanceP(dir, options))
/** Resumes a blocked case. */
export const resumeCase = (
  dir: CaseAt,
  options: { manualRetry: boolean; expectedGeneration?: number; env?: Env; commandId?: string }
): TE.TaskEither<Failure, AdvanceResult> => te(() => resumeCaseP(dir, options))
/** Records lab test feedback. */
export const recordFeedback = (
  dir: CaseAt,
  requestId: string,
  feedback: string,
  options: CommandOptions = {}
): TE.TaskEither<Failure, number> => te(() => recordFeedbackP(dir, requestId, feedback, options))
/** The next prompt. */
export const nextPrompt = (dir: CaseAt): TE.TaskEither<Failure, RenderedPrompt> => te(() => nextPromptP(dir))
/** Records a note. */
export const recordNote = (dir: CaseAt, input: NoteInput): TE.TaskEither<Failure, AppendOutcome> =>
  te(() => recordNoteP(dir, input))
/** Adds an attachment. */
export const addAttachment = (dir: CaseAt, input: AttachmentInput): TE.TaskEither<Failure, AppendOutcome> =>
  te(() => addAttachmentP(dir, input))
/** Cancels the pending plan. */
export const cancelPlan = (dir: CaseAt, input: CancelPlanInput): TE.TaskEither<Failure, AppendOutcome> =>
  te(() => cancelPlanP(dir, input))
/** Tops up the budget. */
export const topUpBudget = (dir: CaseAt, input: TopUpInput): TE.TaskEither<Failure, AppendOutcome> =>
  te(() => topUpBudgetP(dir, input))

const thrown = <A>(context: string, run: () => Promise<A>): TE.TaskEither<Failure, A> =>
  TEv.tryCatch(run, (e) => toFailure(e, context))

/**
 * Opens a SQL store (PostgreSQL or MariaDB/MySQL): cases are then addressed as `{ store, caseId }`
 * wherever a directory was taken. Close it with `store.close()`.
 */
export const openSqlStore = (url: string, options: SqlStoreOptions = {}): TE.TaskEither<Failure, SqlStore> =>
  thrown('open store', () => openStore(url, options))
/** Creates or upgrades a SQL store's schema; the migrations applied. */
export const migrateStore = (
  url: string,
  options: SqlStoreOptions = {}
): TE.TaskEither<Failure, { readonly applied: readonly string[]; readonly latest: string }> =>
  thrown('migrate store', () => migrateStoreAt(url, options))
/** The queue of a folder of case directories. */
export const listDirectoryQueue = (root: string): TE.TaskEither<Failure, QueueEntry[]> =>
  thrown('list queue', () => listDirectoryQueueP(root))
/** The worker loop over a store's queue (see the root API's `queue.work`). */
export const work = (options: WorkerOptions): TE.TaskEither<Failure, WorkSummary> =>
  thrown('work', () => workP(options))
// Types the signatures above use (so every one is documented and importable).
export type { CaseView } from './adapters/bagit/case-bag.js'
export type { ArchiveLimits } from './adapters/bagit/extract.js'
export type { GcOptions } from './adapters/case-store/gc.js'
export type { Cursor } from './adapters/case-store/handle.js'
export type { CaseQueryOptions } from './commands/case-query.js'
export type { StartOptions } from './commands/lifecycle.js'
export type { PrepareOptions } from './commands/prepare.js'
export type { CommandOptions } from './commands/run.js'
export type { AttachmentInput, CancelPlanInput, NoteInput, TopUpInput } from './commands/typed.js'
export type { CaseState, ObjectRefLite } from './domain/case-state.js'
export type { LoopOptions } from './investigation/loop.js'
export type { SourceRunner } from './research/project-research.js'
export type { PayloadFile } from './adapters/bagit/case-bag.js'
export type { CommandSpan } from './adapters/case-store/scan.js'
export type { Hypothesis, ResearchState, RevisionInfo } from './domain/case-state.js'
export type { AnsweredRequest, Evidence, Reservation } from './domain/case-state.js'
