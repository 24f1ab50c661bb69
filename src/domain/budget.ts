/**
 * Questions asked of the folded case state: the budget (total, held, left), the token limit,
 * the binding in force and what a query costs. Pure, beside the fold in case-state.ts.
 */
import type { Binding } from '../events/settings.js'
import type { CaseState, ResearchState } from './case-state.js'

/** Budget held by open reservations. */
export const heldBudget = (r: ResearchState): number => r.reserved - r.consumed - r.released

/** The investigation's total budget: the start's plus operator top-ups (0 before the start). */
export const budgetTotal = (s: CaseState): number => (s.settings === null ? 0 : s.settings.budget_total + s.toppedUp)

/** Research committed so far: consumed, and what reservations still hold (before the start too). */
export const committedResearch = (r: ResearchState): number => r.consumed + heldBudget(r)

/** Budget left for new reservations: total minus consumed minus what reservations still hold. */
export const remainingBudget = (s: CaseState): number => budgetTotal(s) - s.research.consumed - heldBudget(s.research)

/** True when the investigation's token limit is set and the recorded usage has reached it. */
export const tokensSpent = (s: CaseState): boolean =>
  s.settings !== null && s.settings.max_tokens !== null && s.tokens.total >= s.settings.max_tokens

/** The binding in force for research recorded now: the investigation's, else the latest completed revision's. */
export const bindingInForce = (s: CaseState): Binding | null =>
  s.settings?.binding ?? [...s.revisions].reverse().find((r) => r.completed)?.binding ?? null

/** What one project.query costs in this investigation. */
export const queryCost = (s: CaseState): number => s.settings?.action_costs['project.query'] ?? 1
