/** Actors (family RULE_ACTOR): every event type is written by the actor its decider writes it as. */
import type { Actor } from '../../events/codecs.js'
import type { EventType } from '../../events/catalog.js'
import type { RuleContext } from './context.js'

/** Who may write each event type: the actor the deciders write it as. */
export const ALLOWED_ACTORS: { readonly [K in EventType]: readonly Actor[] } = {
  NoteRecorded: ['operator', 'controller'],
  AttachmentAdded: ['operator', 'controller'],
  BudgetReserved: ['controller'],
  CaptureRecorded: ['system'],
  BudgetConsumed: ['system'],
  BudgetReleased: ['system', 'operator'],
  ResearchFailed: ['system'],
  InputsRecorded: ['operator', 'controller'],
  EnrichmentCaptured: ['system'],
  RevisionCompleted: ['system'],
  InvestigationStarted: ['controller', 'operator'],
  CheckpointRecorded: ['system'],
  ModelRequested: ['controller'],
  ModelResponded: ['model'],
  ModelFailed: ['system'],
  ModelResponseRejected: ['system'],
  InterpretationRecorded: ['model'],
  PlanConfirmed: ['model'],
  HypothesisProposed: ['model'],
  HypothesisUpdated: ['model'],
  LabTestRequested: ['model'],
  LabFeedbackRecorded: ['operator'],
  ConclusionRecorded: ['model'],
  PlanCancelled: ['operator'],
  BudgetToppedUp: ['operator'],
  QueryAnsweredFromCase: ['system'],
  // the actor of the command's last event it signs (command.signature holds it to the command)
  CommandSigned: ['operator', 'controller', 'model', 'system']
}

/** actor.allowed */
export const checkActor = (c: RuleContext): void => {
  const allowed = ALLOWED_ACTORS[c.e.type]
  if (!allowed.includes(c.e.actor))
    c.bad('actor.allowed', `${c.e.type} is written by ${allowed.join(' or ')}, not by ${c.e.actor}`)
}
