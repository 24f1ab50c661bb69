/**
 * Which rules check which event type: one entry per type of the catalog (a type without an entry
 * does not compile). Every event is also checked for its actor, its version (versions.ts) and for belonging to its command.
 */
import type { RecordedEvent } from '../../events/chain.js'
import type { EventType } from '../../events/catalog.js'
import { checkActor } from './actor.js'
import { checkVersion } from './versions.js'
import { checkReserved, checkSettled, checkToppedUp } from './budget.js'
import { checkCheckpoint, checkStart } from './lifecycle.js'
import { memberProblem } from './members.js'
import { checkFeedback } from './reference.js'
import { checkCancelled, checkCapture, checkFailed, checkFromCase } from './research.js'
import { checkCompleted, checkEnrichment, checkInputs } from './revision.js'
import {
  checkAnswer,
  checkConclusion,
  checkInterpretation,
  checkLabTest,
  checkPlan,
  checkProposed,
  checkRejection,
  checkRequest,
  checkUpdated
} from './turn.js'
import type { EventOf, RuleContext } from './context.js'
import { afterSignature, checkSigned } from './signature.js'

const none = (): void => {}

/** The check of each event type. */
export const EVENT_RULES: { readonly [K in EventType]: (c: RuleContext<EventOf<K>>) => void } = {
  NoteRecorded: none,
  AttachmentAdded: none,
  InputsRecorded: checkInputs,
  EnrichmentCaptured: checkEnrichment,
  RevisionCompleted: checkCompleted,
  InvestigationStarted: checkStart,
  CheckpointRecorded: checkCheckpoint,
  ModelRequested: checkRequest,
  ModelResponded: checkAnswer,
  ModelFailed: checkAnswer,
  ModelResponseRejected: checkRejection,
  InterpretationRecorded: checkInterpretation,
  PlanConfirmed: checkPlan,
  HypothesisProposed: checkProposed,
  HypothesisUpdated: checkUpdated,
  LabTestRequested: checkLabTest,
  ConclusionRecorded: checkConclusion,
  LabFeedbackRecorded: checkFeedback,
  BudgetReserved: checkReserved,
  BudgetConsumed: checkSettled,
  BudgetReleased: checkSettled,
  BudgetToppedUp: checkToppedUp,
  PlanCancelled: checkCancelled,
  ResearchFailed: checkFailed,
  QueryAnsweredFromCase: checkFromCase,
  CaptureRecorded: checkCapture,
  CommandSigned: checkSigned
}

/** Checks one event in its context: its actor, its command membership, and the rules of its type. */
export const checkEvent = (c: RuleContext): void => {
  checkActor(c)
  checkVersion(c)
  const leader = c.cmd.events[0]
  const foreign = leader === undefined ? null : (memberProblem(leader.type, c.e.type) ?? afterSignature(c))
  if (foreign !== null) c.bad('command.members', foreign)
  const check = EVENT_RULES[c.e.type] as (c: RuleContext<RecordedEvent>) => void
  check(c)
}
