/**
 * vba-case-research: provable, event-sourced bug investigations of TrinityCore/AzerothCore-family
 * game servers with an LLM in the loop. Start with {@link openVba}.
 *
 * The root entry is the Promise API with one error class ({@link VbaError}); the same library in
 * the fp-ts style (Either/TaskEither) is at `vba-case-research/fp`, and helpers for tests (a
 * scripted model, a fixed clock, raw appends and a forger) at `vba-case-research/testing`.
 *
 * @packageDocumentation
 * @module vba-case-research
 */
export { openVba } from './api/client.js'
export type {
  Vba,
  VbaOptions,
  SourceNotice,
  ProfileObject,
  CasesApi,
  ResearchApi,
  InvestigationsApi,
  TransportApi,
  QueueApi,
  WorkOptions,
  AdvanceOptions,
  Appended,
  WriteOptions,
  CaseStatus,
  VerifyCaseOptions,
  ReportCaseOptions
} from './api/client.js'
export type { Lease } from './adapters/case-store/store.js'
export type { QueueCounts, QueueEntry, QueuePage, QueuePageOptions, QueueRow } from './projections/queue.js'
export type { WorkEvent } from './investigation/worker.js'
export type { WorkSummary, WorkFailure } from './investigation/work-summary.js'
export { VbaError, isVbaError } from './api/errors.js'
export { FAILURE_CODES, failureKind } from './failures/codes.js'
export type { FailureCode, FailureKind } from './failures/codes.js'
export type { Failure } from './failures/failure.js'
export type * from './investigation/model-fn.js'
export type { AdvanceResult, AdvanceStep } from './investigation/loop.js'
export {
  commandModel,
  httpModel,
  type CommandModelEvent,
  type CommandModelOptions,
  type HttpModelOptions,
  type ModelAttemptEvent
} from './api/models.js'
export { chatCompletionsUrl } from './investigation/http-model.js'
export type { Capture, QueryKind } from './events/capture.js'
export type {
  ProjectQuery,
  SourceQuery,
  DatabaseQuery,
  SourceFiles,
  SourceSearch,
  SourceSymbol,
  SourceRegistration,
  SourceSchema,
  SourceRead,
  SourceContext,
  DatabaseTables,
  DatabaseSchema,
  DatabaseRows,
  DatabaseCount,
  QueryOf,
  Filter,
  OrderBy,
  Operator,
  Scalar
} from './domain/query.js'
export type { RevisionInputs, PrepareResult } from './commands/prepare.js'
export type {
  EnrichmentConfig,
  EntityRef,
  EntityLookup,
  TextColumn,
  TableRelationship,
  SymbolRelationship,
  Relationship
} from './domain/enrichment-config.js'
export type { Fact, CoverageGap, Provenance } from './domain/facts-document.js'
export type { CaseQueryResult } from './commands/case-query.js'
export type { QueryOrigin, QueryReservation } from './commands/query-outcome.js'
export type { Receipt } from './adapters/case-store/append.js'
export type { VerifyReport, EvidenceSummary } from './adapters/case-store/verify.js'
export type { ReceiptCheck } from './adapters/case-store/receipts.js'
export type { GcReport } from './adapters/case-store/gc.js'
export type { LockState, LockInfo } from './adapters/case-store/lock.js'
export type { Finding, FindingCode, Severity } from './events/findings.js'
export type { LifecycleView, StatusReason, BudgetView } from './projections/lifecycle-view.js'
export type { LatestOutcome, CaseLifecycleState } from './domain/case-state.js'
export type { LifecycleState, BlockReason } from './events/catalog.js'
export type { InvestigationSettings } from './events/settings.js'
export type { RecordedEvent } from './events/chain.js'
export type { RenderedPrompt } from './projections/prompt.js'
export type { ExportReport } from './adapters/bagit/export.js'
export type { ImportReport, BagCheck } from './adapters/bagit/import.js'
export type { Profile } from './adapters/config/profile.js'
export type { Author } from './domain/inputs-decider.js'
export type { Env } from './adapters/env.js'
export { readSigner } from './adapters/ssh-keys.js'
export type { Signer } from './adapters/ssh-keys.js'
export type { SignerSummary } from './adapters/case-store/signatures.js'
export type { HeadSigner } from './events/signed-note.js'
// Types the signatures above use (so every one is documented and importable).
export type { BagReport } from './adapters/bagit/verify-bag.js'
export type { CaseEventBody } from './events/catalog.js'
export type { Actor } from './events/codecs.js'
export type { EventEnvelope } from './events/envelope.js'
export type { ReceiptCode, RuleCode, SignatureCode, SignedHeadCode } from './events/findings.js'
export type { BagFinding, BagFindingCode } from './adapters/bagit/bag-tags.js'
export type { RuleId } from './domain/rules/ids.js'
export type { BagSeverity } from './adapters/bagit/bag-tags.js'
// Types reachable from the public API (the profile's sections, a binding, a requester, an
// extracted entity…): named here so a controller can write them down.
export type {
  LoopSection,
  BudgetSection,
  ModelSection,
  ContractSection,
  SourceSection,
  DatabaseSection,
  SourceAnalysisSection,
  SigningSection
} from './adapters/config/profile.js'
export type { ProjectLimits } from './domain/limits.js'
export type { ObjectRef } from './events/codecs.js'
export type { CaseDeclaration } from './events/envelope.js'
export type { ExtractedEntity } from './events/revision-events.js'
export type { Binding } from './events/settings.js'
export type { Requester } from './events/requester.js'
