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
} from './commands/lifecycle-commands.js'
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
import type { CaseAt, StoreAppendOptions } from './adapters/case-store/store.js'
import type { SqlStore, SqlStoreOptions } from './adapters/sql-store/sql-store.js'
import { migrateStoreAt, openStore } from './adapters/stores.js'
import { work as workP, type WorkerOptions, type WorkSummary } from './investigation/worker.js'
import { listDirectoryQueue as listDirectoryQueueP } from './adapters/case-store/directory-queue.js'
import type { QueueEntry } from './projections/queue.js'
import { toFailure } from './failures/error.js'
import * as TEv from 'fp-ts/lib/TaskEither.js'
import { initCase as initCaseP, type InitOptions } from './adapters/case-store/init.js'
import { directoryStore, openCase as openCaseP } from './adapters/case-store/directory-store.js'
import type { CaseHandle } from './adapters/case-store/open.js'
import { verifyCase as verifyCaseP, type VerifyOptions, type VerifyReport } from './adapters/case-store/verify.js'
import { replayCase as replayCaseP, type ReplayResult } from './adapters/case-store/replay.js'
import { gcCase as gcCaseP, type GcOptions, type GcReport } from './adapters/case-store/gc.js'
import { readObject as readObjectP } from './adapters/case-store/objects.js'
import { exportCase as exportCaseP, type ExportOptions, type ExportReport } from './adapters/bagit/export.js'
import {
  importCase as importCaseP,
  verifyBag as verifyBagP,
  type BagCheck,
  type ImportReport
} from './adapters/bagit/import.js'
import type { ArchiveLimits } from './adapters/bagit/extract.js'
import { appendCommand as appendCommandP, type RawCommand } from './adapters/case-store/append.js'
import { loadProfile as loadProfileP, type Profile } from './adapters/config/profile.js'
import {
  createCaseAt as createCaseAtP,
  openCaseAt as openCaseAtP,
  readObjectAt as readObjectAtP,
  replayAt as replayAtP,
  verifyAt as verifyAtP
} from './adapters/case-store/at.js'
import type { AnyProjection } from './projections/projection.js'
import type { CaseDeclaration } from './events/envelope.js'
import type { ObjectRefLite } from './domain/case-state.js'

export type { Failure, FailureCode, FailureKind } from './failures/failure.js'
export { failure, isFailure, failureKind, FAILURE_CODES } from './failures/failure.js'
export type { InitOptions } from './adapters/case-store/init.js'
export type { CaseHandle }
export { parseReceipt, type VerifyOptions, type VerifyReport } from './adapters/case-store/verify.js'
export type { TrustPolicy } from './adapters/case-store/signatures.js'
export type { AllowedSigner } from './events/allowed-signers.js'
export type { SshPublicKey } from './events/ssh-sig.js'
export type { NoteSignature, SignedHead } from './events/signed-note.js'
export type { ReplayResult } from './adapters/case-store/replay.js'
export type { GcReport } from './adapters/case-store/gc.js'
export type { ExportReport, ExportOptions } from './adapters/bagit/export.js'
export type { BagCheck, ImportReport } from './adapters/bagit/import.js'
export { profileFromObject, type Profile } from './adapters/config/profile.js'
export { createProjectResearch, type ProjectResearch, type ResearchOptions } from './research/project-research.js'
export { openSourceResearch, type SourceOpenOptions } from './research/source/open.js'
export type { SnapshotNotice, BuildProgress } from './adapters/git/snapshot.js'
export { enrichmentConfig } from './commands/prepare.js'
export { settingsOf } from './investigation/settings.js'
export { defaultProjections } from './projections/defaults.js'
export { lifecycleProjection, lifecycleView } from './projections/lifecycle-view.js'
export type { Projection, AnyProjection } from './projections/projection.js'
export type * from './investigation/model-fn.js'
export type { AdvanceStep } from './investigation/loop.js'
export type { Capture } from './events/capture.js'
export type { RecordedEvent } from './events/chain.js'
export type { Receipt } from './adapters/case-store/append.js'
export type { CaseAt, CaseStore, StoredCase, Lease, QueueStore } from './adapters/case-store/store.js'
export type { SqlStore, SqlStoreOptions } from './adapters/sql-store/sql-store.js'
export type { QueueCounts, QueueEntry, QueuePage, QueuePageOptions, QueueRow } from './projections/queue.js'
export type { WorkerOptions, WorkEvent } from './investigation/worker.js'
export type { WorkSummary, WorkFailure } from './investigation/work-summary.js'
export { directoryStore }

/** Runs an internal call (they throw coded failures) as a TaskEither: the one place ./fp converts. */
const thrown = <A>(context: string, run: () => Promise<A>): TE.TaskEither<Failure, A> =>
  TEv.tryCatch(run, (e) => toFailure(e, context))

/** Creates a case directory (which must not exist or be empty); its declaration. @category cases */
export const initCase = (options: InitOptions): TE.TaskEither<Failure, CaseDeclaration> =>
  thrown('case init', () => initCaseP(options))
/**
 * Opens a case directory for appending: checks declaration, HEAD, every event line and every
 * event's rules, and folds the case state. CASE_CORRUPT with its findings when it does not check out.
 * @category cases
 */
export const openCase = (dir: string): TE.TaskEither<Failure, CaseHandle> => thrown('open case', () => openCaseP(dir))
/**
 * Verifies a case directory (chain, rules, objects, the receipt with `expectHead`); problems of the case are findings.
 * @category cases
 */
export const verifyCase = (dir: string, options: VerifyOptions = {}): TE.TaskEither<Failure, VerifyReport> =>
  thrown('verify', () => verifyCaseP(dir, options))
/** Replays a case directory's log through `projections`, with no git repository or database at hand. @category cases */
export const replayCase = (dir: string, projections: readonly AnyProjection[]): TE.TaskEither<Failure, ReplayResult> =>
  thrown('replay', () => replayCaseP(dir, projections))
/**
 * Removes what no committed event references (staging files, orphaned objects) from a case directory.
 * @category cases
 */
export const gcCase = (dir: string, options: GcOptions = {}): TE.TaskEither<Failure, GcReport> =>
  thrown('case gc', () => gcCaseP(dir, options))
/**
 * Reads an object of a case directory, checked against its reference (OBJECT_MISSING / OBJECT_CORRUPT).
 * @category cases
 */
export const readObject = (
  dir: string,
  ref: { readonly digest: string; readonly size: number }
): TE.TaskEither<Failure, Buffer> => thrown('read object', () => readObjectP(dir, ref))
/** Exports a case as a BagIt archive (`tar`, `tar.gz`) or bag directory (`dir`). @category transport */
export const exportCase = (
  at: CaseAt,
  out: string,
  options: ExportOptions = {}
): TE.TaskEither<Failure, ExportReport> => thrown('export', () => exportCaseP(at, out, options))
/** Verifies a bag directory or archive: the bag, then the case in it. @category transport */
export const verifyBag = (
  target: string,
  limits: ArchiveLimits = {},
  caseOptions: Pick<VerifyOptions, 'expectHead'> = {}
): TE.TaskEither<Failure, BagCheck> => thrown('verify bag', () => verifyBagP(target, limits, caseOptions))
/** Imports a bag archive as the case directory `dir` (which must not exist or be empty). @category transport */
export const importCase = (
  archive: string,
  dir: string,
  options: { limits?: ArchiveLimits; onProgress?: (done: number, total: number) => void } = {}
): TE.TaskEither<Failure, ImportReport> => thrown('import', () => importCaseP(archive, dir, options))
/** Reads and decodes a profile (CONFIG_NOT_FOUND, CONFIG_INVALID). @category Client */
export const loadProfile = (file: string): TE.TaskEither<Failure, Profile> =>
  thrown('load profile', () => loadProfileP(file))
/**
 * Appends a raw command to an open case (its events still checked against every rule): the
 * writer under the typed commands, for tests and tools (./testing re-exports it).
 * @category cases
 */
export const appendCommand = (
  handle: CaseHandle,
  cmd: RawCommand,
  options: StoreAppendOptions = {}
): TE.TaskEither<Failure, AppendOutcome> => thrown('append', () => appendCommandP(handle, cmd, options))
/**
 * Opens a case wherever it is (a directory or `{ store, caseId }`): chain and rules checked, state folded.
 * @category cases
 */
export const openCaseAt = (at: CaseAt): TE.TaskEither<Failure, CaseHandle> => thrown('open case', () => openCaseAtP(at))
/** Verifies a case wherever it is; problems of the case are findings. @category cases */
export const verifyAt = (at: CaseAt, options: VerifyOptions = {}): TE.TaskEither<Failure, VerifyReport> =>
  thrown('verify', () => verifyAtP(at, options))
/** Replays a case wherever it is. @category cases */
export const replayAt = (at: CaseAt, projections: readonly AnyProjection[]): TE.TaskEither<Failure, ReplayResult> =>
  thrown('replay', () => replayAtP(at, projections))
/** Reads an object of a case wherever it is, checked against its reference. @category cases */
export const readObjectAt = (at: CaseAt, object: ObjectRefLite): TE.TaskEither<Failure, Buffer> =>
  thrown('read object', () => readObjectAtP(at, object))
/** Creates an empty case: a directory (which must not exist or be empty), or a case id in a store. @category cases */
export const createCaseAt = (
  at: CaseAt,
  options: { readonly caseId?: string; readonly title?: string; readonly env?: Env } = {}
): TE.TaskEither<Failure, CaseDeclaration> => thrown('create case', () => createCaseAtP(at, options))
/** A project.query recorded in a case (see the root API's `research.queryInCase`). @category research */
export const queryInCase = (
  dir: CaseAt,
  research: ProjectResearch,
  args: unknown,
  commandId: string,
  options: CaseQueryOptions = {}
): TE.TaskEither<Failure, CaseQueryResult> =>
  thrown('queryInCase', () => queryInCaseP(dir, research, args, commandId, options))
/** Records a revision and runs the enrichment. @category investigations */
export const prepareRevision = (
  dir: CaseAt,
  research: ProjectResearch,
  config: EnrichmentConfig,
  inputs: RevisionInputs,
  options: PrepareOptions = {}
): TE.TaskEither<Failure, PrepareResult> =>
  thrown('prepareRevision', () => prepareRevisionP(dir, research, config, inputs, options))
/** Reads REPORT.json (attachments relative to it, inside its directory). @category investigations */
export const readInputs = (file: string): TE.TaskEither<Failure, RevisionInputs> =>
  thrown('readInputs', () => readInputsP(file))
/** Starts the investigation; the generation after it. @category investigations */
export const startInvestigation = (dir: CaseAt, options: StartOptions): TE.TaskEither<Failure, number> =>
  thrown('startInvestigation', () => startInvestigationP(dir, options))
/** Runs the loop (see the root API's `investigations.advance`). @category investigations */
export const advance = (dir: CaseAt, options: LoopOptions): TE.TaskEither<Failure, AdvanceResult> =>
  thrown('advance', () => advanceP(dir, options))
/** Resumes a blocked case. @category investigations */
export const resumeCase = (
  dir: CaseAt,
  options: { manualRetry: boolean; expectedGeneration?: number; env?: Env; commandId?: string }
): TE.TaskEither<Failure, AdvanceResult> => thrown('resumeCase', () => resumeCaseP(dir, options))
/** Records lab test feedback. @category investigations */
export const recordFeedback = (
  dir: CaseAt,
  requestId: string,
  feedback: string,
  options: CommandOptions = {}
): TE.TaskEither<Failure, number> => thrown('recordFeedback', () => recordFeedbackP(dir, requestId, feedback, options))
/** The next prompt, as plain data (`{ text, stable, version, cut }`). @category investigations */
export const nextPrompt = (dir: CaseAt): TE.TaskEither<Failure, RenderedPrompt> =>
  thrown('nextPrompt', () => nextPromptP(dir))
/** Records a note. @category cases */
export const recordNote = (dir: CaseAt, input: NoteInput): TE.TaskEither<Failure, AppendOutcome> =>
  thrown('recordNote', () => recordNoteP(dir, input))
/** Adds an attachment. @category cases */
export const addAttachment = (dir: CaseAt, input: AttachmentInput): TE.TaskEither<Failure, AppendOutcome> =>
  thrown('addAttachment', () => addAttachmentP(dir, input))
/** Cancels the pending plan. @category cases */
export const cancelPlan = (dir: CaseAt, input: CancelPlanInput): TE.TaskEither<Failure, AppendOutcome> =>
  thrown('cancelPlan', () => cancelPlanP(dir, input))
/** Tops up the budget. @category cases */
export const topUpBudget = (dir: CaseAt, input: TopUpInput): TE.TaskEither<Failure, AppendOutcome> =>
  thrown('topUpBudget', () => topUpBudgetP(dir, input))

/**
 * Opens a SQL store (PostgreSQL or MariaDB/MySQL): cases are then addressed as `{ store, caseId }`
 * wherever a directory was taken. Close it with `store.close()`.
 * @category Stores
 */
export const openSqlStore = (url: string, options: SqlStoreOptions = {}): TE.TaskEither<Failure, SqlStore> =>
  thrown('open store', () => openStore(url, options))
/** Creates or upgrades a SQL store's schema; the migrations applied. @category Stores */
export const migrateStore = (
  url: string,
  options: SqlStoreOptions = {}
): TE.TaskEither<Failure, { readonly applied: readonly string[]; readonly latest: string }> =>
  thrown('migrate store', () => migrateStoreAt(url, options))
/** The queue of a folder of case directories. @category queue */
export const listDirectoryQueue = (root: string): TE.TaskEither<Failure, QueueEntry[]> =>
  thrown('list queue', () => listDirectoryQueueP(root))
/** The worker loop over a store's queue (see the root API's `queue.work`). @category queue */
export const work = (options: WorkerOptions): TE.TaskEither<Failure, WorkSummary> =>
  thrown('work', () => workP(options))
// Types the signatures above use (so every one is documented and importable).
export type { CaseView } from './adapters/bagit/case-bag.js'
export type { ArchiveLimits } from './adapters/bagit/extract.js'
export type { GcOptions } from './adapters/case-store/gc.js'
export type { Cursor } from './adapters/case-store/handle.js'
export type { CaseQueryOptions } from './commands/case-query.js'
export type { StartOptions } from './commands/lifecycle-commands.js'
export type { PrepareOptions } from './commands/prepare.js'
export type { CommandOptions } from './commands/run.js'
export type { AttachmentInput, CancelPlanInput, NoteInput, TopUpInput } from './commands/typed.js'
export type { CaseState, ObjectRefLite } from './domain/case-state.js'
export type { LoopOptions } from './investigation/loop.js'
export type { SourceRunner } from './research/project-research.js'
export type { PayloadFile } from './adapters/bagit/case-bag.js'
export type { CommandSpan } from './adapters/case-store/scan.js'
export type { CommandIndex, IdSet } from './adapters/case-store/id-table.js'
export type { Hypothesis, ResearchState, RevisionInfo } from './domain/case-state.js'
export type { AnsweredRequest, Evidence, Reservation } from './domain/case-state.js'
// Types the handle and the research factory expose, named so a caller can write them down.
export type { CaseDeclaration } from './events/envelope.js'
export type { ScanOptions } from './adapters/case-store/scan.js'
export type { FoundRef } from './events/refs.js'
export type { LineWorkers, CheckedPiece } from './adapters/case-store/line-checks.js'
export type { NotApplied } from './domain/rules/context.js'
export type { ResearchEnvironment } from './research/source/open.js'
