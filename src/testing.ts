/**
 * Helpers for testing controllers and verifiers: a scripted model (no network, no paid calls), a
 * fixed clock and ids, raw appends of arbitrary events (still checked against the rules), and a
 * forger that writes a correct hash chain with any events (to test that verification catches it).
 * Not for production writes: use the typed commands of the root entry.
 *
 * @packageDocumentation
 * @module vba-case-research/testing
 */
export { scriptedModel, latestEvidence, type ScriptStep, type ScriptedModel } from './investigation/scripted-model.js'
export { fixedEnv, systemEnv, type Env } from './adapters/env.js'
export type { RawCommand, AppendOptions, AppendOutcome } from './adapters/case-store/append.js'
export { appendCommand, openCase } from './fp.js'
export type { CaseHandle } from './adapters/case-store/open.js'
export { sealEvent, type EventDraft, type SealedEvent } from './events/chain.js'
export { forger, type Forger, type ForgedEvent } from './testing/forger.js'
export { writeDemoWorld, type DemoWorld } from './demo/world.js'
export { given, type Given, type Then, type HistoryStep } from './testing/spec.js'
export {
  caseDecider,
  command,
  decide,
  type CaseCommand,
  type CaseCommandType,
  type CommandData,
  type Command as CaseCommandOf,
  type Decision
} from './domain/decider.js'
// Types the signatures above use (so every one is documented and importable).
export type { StoreAppendOptions } from './adapters/case-store/store.js'
export type { Attachment, Completion, InputsIndex, Note } from './domain/inputs-decider.js'
export type { RecordedAnswer, TurnRequest } from './domain/lifecycle-decider.js'
export type { CancelPlan, RecordCapture, RecordFailure, Reserve } from './domain/research-decider.js'
export type { SealContext, SealFailure } from './events/chain.js'
export type { EnrichmentCapture } from './domain/inputs-decider.js'
