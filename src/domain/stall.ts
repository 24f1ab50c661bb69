/**
 * Queries that bring nothing new count. A refused plan and an identical query answered from the
 * case are turns without progress; with `count_refusals` (every investigation started with
 * settings version 2) `max_invalid_responses` of them in a row block the case as
 * INVALID_LLM_RESPONSES, resumable like a block for invalid answers. So a model that only asks
 * refused (or repeated) queries ends BLOCKED instead of spinning until the controller stops it.
 * New evidence, any other decision, or an operator's resume starts the count anew (case-state.ts).
 * Pure: the deciders append the block, the rules check it (rules.ts).
 */
import { eventDraft, type EventDraft } from '../events/chain.js'
import type { CaseState } from './case-state.js'

/** The stall limit of the investigation, or null when stalled queries do not count (version-1 starts). */
export const stallLimit = (s: CaseState): number | null =>
  s.settings?.count_refusals === true ? s.settings.max_invalid_responses : null

/** True when one more stalled query reaches the limit (the state is the one before it). */
export const nextStallBlocks = (s: CaseState): boolean => {
  const limit = stallLimit(s)
  return limit !== null && s.stalled + 1 >= limit
}

/**
 * The block after a stalled query that reaches the limit: INVALID_LLM_RESPONSES, resuming into
 * INVESTIGATING at `retry_delay_ms` (or by an operator's manual retry). `checkpoints` counts the
 * checkpoints the same command writes before this one (a research block it ends, say).
 */
export const stallBlock = (s: CaseState, now: Date, checkpoints = 0): EventDraft[] => {
  if (!nextStallBlocks(s)) return []
  const retry = new Date(now.getTime() + (s.settings?.retry_delay_ms ?? 0)).toISOString()
  return [
    eventDraft('CheckpointRecorded', {
      generation: s.checkpoint + 1 + checkpoints,
      state: 'BLOCKED',
      reason: 'INVALID_LLM_RESPONSES',
      resume_state: 'INVESTIGATING',
      retry_not_before: retry,
      manual_retry: false
    })
  ]
}
