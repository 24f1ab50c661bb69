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
export const InvestigationStartedEvent = defineEventType(
  'InvestigationStarted',
  { settings: InvestigationSettings, revision: t.number },
  {
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
  }
)

export const CheckpointRecordedEvent = defineEventType(
  'CheckpointRecorded',
  {
    /** Counts checkpoints: 1, 2, 3 … */
    generation: PositiveInt,
    state: LifecycleState,
    reason: t.union([BlockReason, t.string, t.null]),
    resume_state: t.union([LifecycleState, t.null]),
    retry_not_before: t.union([t.string, t.null]),
    manual_retry: t.boolean
  },
  { actors: ['system'], members: [], intent: null }
)
export type CheckpointRecorded = t.TypeOf<typeof CheckpointRecordedEvent.codec>

export const ModelRequestedEvent = defineEventType(
  'ModelRequested',
  {
    turn: PositiveInt,
    phase: t.keyof({ interpretation: null, investigation: null }),
    prompt: ObjectRef,
    prompt_version: t.string,
    prompt_chars: t.number
  },
  { actors: ['controller'], members: [], intent: null }
)
/** Version 1: the raw answer only. */
export const ModelRespondedV1 = t.type({ turn: PositiveInt, raw: ObjectRef }, 'ModelRespondedV1')
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
/** The raw answer and which model gave it at what cost (null: recorded by version 1, which did not say). */
export const ModelRespondedEvent = defineEventType(
  'ModelResponded',
  { turn: PositiveInt, raw: ObjectRef, provenance: t.union([ModelProvenance, t.null]) },
  {
    previous: [
      { codec: ModelRespondedV1, upcast: (d) => ({ ...(d as t.TypeOf<typeof ModelRespondedV1>), provenance: null }) }
    ],
    actors: ['model'],
    members: DECISION_MEMBERS,
    intent: null
  }
)
/**
 * The model function failed (threw, timed out, the provider refused): no answer for this turn. A
 * call the controller cancelled records nothing: its request stays unanswered, and the next turn
 * is asked anew.
 */
export const ModelFailedEvent = defineEventType(
  'ModelFailed',
  { turn: PositiveInt, code: t.string, message: t.string },
  { actors: ['system'], members: ['CheckpointRecorded'], intent: null }
)
export const ModelResponseRejectedEvent = defineEventType(
  'ModelResponseRejected',
  { turn: PositiveInt, code: t.string, message: t.string, consecutive: PositiveInt },
  { actors: ['system'], members: [], intent: null }
)

/**
 * What a decision of the model's answer is: written as the model, in the command of the answer
 * (the answer's members, DECISION_MEMBERS), which no retry begins with.
 */
const MODEL_DECISION = { actors: ['model'], members: [], intent: null } as const

/** Declares a decision of the model's answer whose data holds `props`. */
const modelDecision = <T extends string, P extends t.Props>(type: T, props: P) =>
  defineEventType(type, props, MODEL_DECISION)

export const InterpretationRecordedEvent = modelDecision('InterpretationRecorded', {
  turn: PositiveInt,
  summary: t.string
})
export const PlanConfirmedEvent = modelDecision('PlanConfirmed', {
  plan_id: Identifier,
  turn: PositiveInt,
  operation: t.literal('project.query'),
  arguments: t.UnknownRecord
})
export const HypothesisProposedEvent = modelDecision('HypothesisProposed', {
  hypothesis_id: Identifier,
  statement: t.string,
  evidence: t.array(t.string)
})
export const HypothesisUpdatedEvent = modelDecision('HypothesisUpdated', {
  hypothesis_id: Identifier,
  status: t.keyof({ open: null, supported: null, refuted: null }),
  evidence: t.array(t.string),
  note: t.string
})
export const LabTestRequestedEvent = modelDecision('LabTestRequested', {
  request_id: Identifier,
  description: t.string
})
export const LabFeedbackRecordedEvent = defineEventType(
  'LabFeedbackRecorded',
  { request_id: Identifier, feedback: t.string },
  {
    actors: ['operator'],
    members: ['CheckpointRecorded'],
    intent: ({ data }) => ({ request_id: data.request_id, feedback: data.feedback })
  }
)
export const ConclusionRecordedEvent = modelDecision('ConclusionRecorded', {
  summary: t.string,
  hypotheses: t.array(t.string),
  evidence: t.array(t.string)
})

// ---------------------------------------------------------------------------------------------
// Operator decisions: cancelling a confirmed plan (its reservation is released as `cancelled`)
// and topping up the budget of a running investigation, each with a reason.
// ---------------------------------------------------------------------------------------------

export const PlanCancelledEvent = defineEventType(
  'PlanCancelled',
  { reservation_id: Identifier, plan_id: t.union([Identifier, t.null]), reason: t.string },
  {
    actors: ['operator'],
    members: ['BudgetReleased', 'CheckpointRecorded'],
    intent: ({ data }) => ({ reason: data.reason, reservation_id: data.reservation_id })
  }
)
export const BudgetToppedUpEvent = defineEventType(
  'BudgetToppedUp',
  { amount: PositiveInt, reason: t.string },
  { actors: ['operator'], members: [], intent: ({ data }) => ({ amount: data.amount, reason: data.reason }) }
)

/** The investigation's event definitions, in the order they were introduced (catalog.ts lists them in its own). */
export const INVESTIGATION_EVENTS = [
  InvestigationStartedEvent,
  CheckpointRecordedEvent,
  ModelRequestedEvent,
  ModelRespondedEvent,
  ModelResponseRejectedEvent,
  InterpretationRecordedEvent,
  PlanConfirmedEvent,
  HypothesisProposedEvent,
  HypothesisUpdatedEvent,
  LabTestRequestedEvent,
  LabFeedbackRecordedEvent,
  ConclusionRecordedEvent,
  ModelFailedEvent,
  PlanCancelledEvent,
  BudgetToppedUpEvent
] as const
