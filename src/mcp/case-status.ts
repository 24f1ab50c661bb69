/** The answer of case_status: the case's state, budget, what was decided and its evidence. */
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { ToolAnswer } from './answers.js'
import type { EvidenceEntry } from './session.js'

/** The case's budget as case_status shows it (null: no budget limit). */
export type StatusBudget = {
  readonly total: number
  readonly consumed: number
  readonly held: number
  readonly left: number
  readonly query_cost: number
} | null

export const statusAnswer = (h: CaseHandle, list: readonly EvidenceEntry[], budget: StatusBudget): ToolAnswer => {
  const s = h.cursor.state
  const caseId = h.declaration.case_id
  const head = `case ${caseId}: ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}; ${budget === null ? 'no budget limit' : `budget ${budget.consumed} of ${budget.total} consumed, ${budget.held} held, ${budget.left} left (a query costs ${budget.query_cost})${s.settings === null ? "; the profile's, which the first call that records something starts the case with" : ''}`}`
  const lines = list.map(
    (e) => `  ${e.id} ${e.request}${e.repeats > 0 ? ` (asked ${e.repeats + 1} times)` : ''} <${e.uri}>`
  )
  // What the decisions recorded, so an agent whose call was cancelled or lost can see whether it
  // ran before it asks again (a proposal asked twice is two hypotheses).
  const hypotheses = [...s.hypotheses.values()].map((h) => ({
    id: h.id,
    status: h.status,
    statement: h.statement,
    evidence: [...h.evidence]
  }))
  const labTests = [...s.labRequests.entries()].map(([id, l]) => ({
    id,
    description: l.description,
    feedback: l.feedback
  }))
  const decided = [
    `turn ${s.turn}; interpretation: ${s.interpretation ?? 'none yet'}`,
    `hypotheses (${hypotheses.length}):`,
    ...hypotheses.map((h) => `  ${h.id} [${h.status}] ${h.statement} (evidence ${h.evidence.join(', ') || 'none'})`),
    ...(labTests.length === 0 ? [] : [`lab tests (${labTests.length}):`]),
    ...labTests.map(
      (l) => `  ${l.id} ${l.description}${l.feedback === null ? ' (waiting for feedback)' : ` → ${l.feedback}`}`
    )
  ]
  return {
    content: [{ type: 'text', text: [head, ...decided, `evidence (${list.length}):`, ...lines].join('\n') }],
    structuredContent: {
      case_id: caseId,
      state: s.state,
      reason: s.reason,
      budget,
      turn: s.turn,
      interpretation: s.interpretation,
      hypotheses,
      lab_tests: labTests,
      evidence: list.map((e) => ({ ...e }))
    }
  }
}
