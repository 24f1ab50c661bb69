/**
 * What a command may hold (rule `command.members`): the events its decider writes after its
 * first one, and nothing else, so no foreign event (an operator's note, a budget top-up) rides
 * inside the command that records a model's answer or a capture. Keyed by the command's first
 * event; pure.
 */
import type { EventType } from '../../events/catalog.js'

const DECISION_MEMBERS: readonly EventType[] = [
  'InterpretationRecorded',
  'ModelResponseRejected',
  'PlanConfirmed',
  'BudgetReserved',
  'QueryAnsweredFromCase',
  'HypothesisProposed',
  'HypothesisUpdated',
  'LabTestRequested',
  'ConclusionRecorded',
  'CheckpointRecorded'
]

/** The events that may follow each first event of a command (absent: it is a command of its own). */
export const COMMAND_MEMBERS: { readonly [K in EventType]: readonly EventType[] } = {
  // What people hand in may come together: a note with its attachments.
  NoteRecorded: ['NoteRecorded', 'AttachmentAdded'],
  AttachmentAdded: ['NoteRecorded', 'AttachmentAdded'],
  InputsRecorded: [],
  EnrichmentCaptured: ['EnrichmentCaptured', 'RevisionCompleted'],
  RevisionCompleted: [],
  InvestigationStarted: ['CheckpointRecorded'],
  CheckpointRecorded: [],
  ModelRequested: [],
  ModelResponded: DECISION_MEMBERS,
  ModelFailed: ['CheckpointRecorded'],
  ModelResponseRejected: [],
  InterpretationRecorded: [],
  PlanConfirmed: [],
  HypothesisProposed: [],
  HypothesisUpdated: [],
  LabTestRequested: [],
  LabFeedbackRecorded: ['CheckpointRecorded'],
  ConclusionRecorded: [],
  BudgetReserved: [],
  CaptureRecorded: ['BudgetConsumed', 'CheckpointRecorded'],
  BudgetConsumed: [],
  BudgetReleased: [],
  ResearchFailed: ['BudgetReleased', 'CheckpointRecorded'],
  PlanCancelled: ['BudgetReleased', 'CheckpointRecorded'],
  BudgetToppedUp: [],
  // recorded with the answer whose plan it answers (after PlanConfirmed), never first
  QueryAnsweredFromCase: [],
  // the signature of whatever command it ends, never first (command.signature)
  CommandSigned: []
}

/** Why `type` may not follow `first` in one command, or null. */
export const memberProblem = (first: EventType, type: EventType): string | null =>
  type === 'CommandSigned' || COMMAND_MEMBERS[first].includes(type)
    ? null
    : `${type} is not part of a command that begins with ${first}${COMMAND_MEMBERS[first].length === 0 ? ' (which stands alone)' : ` (it holds ${COMMAND_MEMBERS[first].join(', ')})`}`
