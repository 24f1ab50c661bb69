/**
 * The event types of an investigation (its start, checkpoints, every model turn and what the
 * answer decided) and the operator's decisions on it; part of the catalog (catalog.ts lists every
 * definition). A type whose schema changes gets a new version plus an upcaster, never an edit of
 * the old codec.
 */
import * as t from 'io-ts'
import { defineEventType } from './registry.js'
import { Identifier, ObjectRef, PositiveInt } from './codecs.js'
import { ModelProvenance } from './model-provenance.js'
import {
  InvestigationSettings,
  InvestigationSettingsV1,
  InvestigationSettingsV2,
  InvestigationSettingsV3,
  upcastSettingsV2
} from './settings.js'

// ---------------------------------------------------------------------------------------------
// The investigation: settings fixed at its start, checkpoints of the lifecycle, every model
// exchange (prompt and raw answer as objects), the model's decided actions, and their outcomes.
// ---------------------------------------------------------------------------------------------

/** @category cases */
export const LifecycleState = t.keyof(
  { INTERPRETING: null, INVESTIGATING: null, BLOCKED: null, CONCLUDED: null, EXHAUSTED: null },
  'LifecycleState'
)
export type LifecycleState = t.TypeOf<typeof LifecycleState>
/** @category cases */
export const BlockReason = t.keyof(
  { RESEARCH_UNAVAILABLE: null, INVALID_LLM_RESPONSES: null, AWAITING_TEST_FEEDBACK: null, MODEL_UNAVAILABLE: null },
  'BlockReason'
)
export type BlockReason = t.TypeOf<typeof BlockReason>

/** Version 1: settings without a token limit. */
export const InvestigationStartedV1 = t.type(
  { settings: InvestigationSettingsV1, revision: t.number },
  'InvestigationStartedV1'
)
/** Version 2: settings with a token limit, without the query contract. */
export const InvestigationStartedV2 = t.type(
  { settings: InvestigationSettingsV2, revision: t.number },
  'InvestigationStartedV2'
)
/** Version 3: settings with the query contract, without a binding. */
export const InvestigationStartedV3 = t.type(
  { settings: InvestigationSettingsV3, revision: t.number },
  'InvestigationStartedV3'
)
export const InvestigationStarted = t.type(
  { settings: InvestigationSettings, revision: t.number },
  'InvestigationStarted'
)
export const InvestigationStartedEvent = defineEventType({
  type: 'InvestigationStarted',
  codec: InvestigationStarted,
  previous: [
    {
      codec: InvestigationStartedV1,
      upcast: (d) => {
        const v = d as t.TypeOf<typeof InvestigationStartedV1>
        return { ...v, settings: { ...v.settings, max_tokens: null } }
      }
    },
    {
      codec: InvestigationStartedV2,
      upcast: (d) => {
        const v = d as t.TypeOf<typeof InvestigationStartedV2>
        return { ...v, settings: upcastSettingsV2(v.settings) }
      }
    },
    {
      codec: InvestigationStartedV3,
      upcast: (d) => {
        const v = d as t.TypeOf<typeof InvestigationStartedV3>
        return { ...v, settings: { ...v.settings, binding: null } }
      }
    }
  ],
  actors: ['controller', 'operator'],
  members: ['CheckpointRecorded'],
  intent: ({ data }) => ({ settings: data.settings })
})

export const CheckpointRecorded = t.type(
  {
    /** Counts checkpoints: 1, 2, 3 … */
    generation: PositiveInt,
    state: LifecycleState,
    reason: t.union([BlockReason, t.string, t.null]),
    resume_state: t.union([LifecycleState, t.null]),
    retry_not_before: t.union([t.string, t.null]),
    manual_retry: t.boolean
  },
  'CheckpointRecorded'
)
export type CheckpointRecorded = t.TypeOf<typeof CheckpointRecorded>
export const CheckpointRecordedEvent = defineEventType({
  type: 'CheckpointRecorded',
  codec: CheckpointRecorded,
  actors: ['system'],
  members: [],
  intent: null
})

export const ModelRequested = t.type(
  {
    turn: PositiveInt,
    phase: t.keyof({ interpretation: null, investigation: null }),
    prompt: ObjectRef,
    prompt_version: t.string,
    prompt_chars: t.number
  },
  'ModelRequested'
)
export const ModelRequestedEvent = defineEventType({
  type: 'ModelRequested',
  codec: ModelRequested,
  actors: ['controller'],
  members: [],
  intent: null
})
/** Version 1: the raw answer only. */
export const ModelRespondedV1 = t.type({ turn: PositiveInt, raw: ObjectRef }, 'ModelRespondedV1')
/** The raw answer and which model gave it at what cost (null: recorded by version 1, which did not say). */
export const ModelResponded = t.type(
  { turn: PositiveInt, raw: ObjectRef, provenance: t.union([ModelProvenance, t.null]) },
  'ModelResponded'
)
/** What the command recording a model's answer may hold after it: what the answer decided, and the checkpoint. */
const DECISION_MEMBERS = [
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
] as const
export const ModelRespondedEvent = defineEventType({
  type: 'ModelResponded',
  codec: ModelResponded,
  previous: [
    { codec: ModelRespondedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof ModelRespondedV1>), provenance: null }) }
  ],
  actors: ['model'],
  members: DECISION_MEMBERS,
  intent: null
})
/** The model function failed (threw, timed out, the provider refused): no answer for this turn. */
export const ModelFailed = t.type({ turn: PositiveInt, code: t.string, message: t.string }, 'ModelFailed')
// A call the controller cancelled records nothing: its request stays unanswered, and the next turn is asked anew.
export const ModelFailedEvent = defineEventType({
  type: 'ModelFailed',
  codec: ModelFailed,
  actors: ['system'],
  members: ['CheckpointRecorded'],
  intent: null
})
export const ModelResponseRejected = t.type(
  { turn: PositiveInt, code: t.string, message: t.string, consecutive: PositiveInt },
  'ModelResponseRejected'
)
export const ModelResponseRejectedEvent = defineEventType({
  type: 'ModelResponseRejected',
  codec: ModelResponseRejected,
  actors: ['system'],
  members: [],
  intent: null
})

export const InterpretationRecorded = t.type({ turn: PositiveInt, summary: t.string }, 'InterpretationRecorded')
export const InterpretationRecordedEvent = defineEventType({
  type: 'InterpretationRecorded',
  codec: InterpretationRecorded,
  actors: ['model'],
  members: [],
  intent: null
})
export const PlanConfirmed = t.type(
  { plan_id: Identifier, turn: PositiveInt, operation: t.literal('project.query'), arguments: t.UnknownRecord },
  'PlanConfirmed'
)
export const PlanConfirmedEvent = defineEventType({
  type: 'PlanConfirmed',
  codec: PlanConfirmed,
  actors: ['model'],
  members: [],
  intent: null
})
export const HypothesisProposed = t.type(
  { hypothesis_id: Identifier, statement: t.string, evidence: t.array(t.string) },
  'HypothesisProposed'
)
export const HypothesisProposedEvent = defineEventType({
  type: 'HypothesisProposed',
  codec: HypothesisProposed,
  actors: ['model'],
  members: [],
  intent: null
})
export const HypothesisUpdated = t.type(
  {
    hypothesis_id: Identifier,
    status: t.keyof({ open: null, supported: null, refuted: null }),
    evidence: t.array(t.string),
    note: t.string
  },
  'HypothesisUpdated'
)
export const HypothesisUpdatedEvent = defineEventType({
  type: 'HypothesisUpdated',
  codec: HypothesisUpdated,
  actors: ['model'],
  members: [],
  intent: null
})
export const LabTestRequested = t.type({ request_id: Identifier, description: t.string }, 'LabTestRequested')
export const LabTestRequestedEvent = defineEventType({
  type: 'LabTestRequested',
  codec: LabTestRequested,
  actors: ['model'],
  members: [],
  intent: null
})
export const LabFeedbackRecorded = t.type({ request_id: Identifier, feedback: t.string }, 'LabFeedbackRecorded')
export const LabFeedbackRecordedEvent = defineEventType({
  type: 'LabFeedbackRecorded',
  codec: LabFeedbackRecorded,
  actors: ['operator'],
  members: ['CheckpointRecorded'],
  intent: ({ data }) => ({ request_id: data.request_id, feedback: data.feedback })
})
export const ConclusionRecorded = t.type(
  { summary: t.string, hypotheses: t.array(t.string), evidence: t.array(t.string) },
  'ConclusionRecorded'
)
export const ConclusionRecordedEvent = defineEventType({
  type: 'ConclusionRecorded',
  codec: ConclusionRecorded,
  actors: ['model'],
  members: [],
  intent: null
})

// ---------------------------------------------------------------------------------------------
// Operator decisions: cancelling a confirmed plan (its reservation is released as `cancelled`)
// and topping up the budget of a running investigation, each with a reason.
// ---------------------------------------------------------------------------------------------

export const PlanCancelled = t.type(
  { reservation_id: Identifier, plan_id: t.union([Identifier, t.null]), reason: t.string },
  'PlanCancelled'
)
export const PlanCancelledEvent = defineEventType({
  type: 'PlanCancelled',
  codec: PlanCancelled,
  actors: ['operator'],
  members: ['BudgetReleased', 'CheckpointRecorded'],
  intent: ({ data }) => ({ reason: data.reason, reservation_id: data.reservation_id })
})
export const BudgetToppedUp = t.type({ amount: PositiveInt, reason: t.string }, 'BudgetToppedUp')
export const BudgetToppedUpEvent = defineEventType({
  type: 'BudgetToppedUp',
  codec: BudgetToppedUp,
  actors: ['operator'],
  members: [],
  intent: ({ data }) => ({ amount: data.amount, reason: data.reason })
})
