/**
 * Every rule of a case by its id, with its family (the finding code it is reported under). A
 * literal union: a rule that is not listed here does not compile, and a test holds
 * case-format/SPEC.md's rule table to exactly this list.
 */
import type { RuleCode } from '../../events/findings.js'

export const RULES = {
  'actor.allowed': 'RULE_ACTOR',
  'lifecycle.start-once': 'RULE_LIFECYCLE',
  'lifecycle.start-revision': 'RULE_LIFECYCLE',
  'lifecycle.generation': 'RULE_LIFECYCLE',
  'lifecycle.transition': 'RULE_LIFECYCLE',
  'lifecycle.block-reason': 'RULE_LIFECYCLE',
  'lifecycle.resume': 'RULE_LIFECYCLE',
  'lifecycle.terminal': 'RULE_LIFECYCLE',
  'lifecycle.exhausted': 'RULE_LIFECYCLE',
  'lifecycle.phase': 'RULE_LIFECYCLE',
  'budget.reservation-unique': 'RULE_BUDGET',
  'budget.reservation-plan': 'RULE_BUDGET',
  'budget.settle-open': 'RULE_BUDGET',
  'budget.overdrawn': 'RULE_BUDGET',
  'budget.release-reason': 'RULE_BUDGET',
  'budget.top-up': 'RULE_BUDGET',
  'budget.tokens': 'RULE_BUDGET',
  'research.reservation': 'RULE_RESEARCH',
  'research.request': 'RULE_RESEARCH',
  'research.evidence-id': 'RULE_RESEARCH',
  'research.capture-object': 'RULE_RESEARCH',
  'research.cancel': 'RULE_RESEARCH',
  'research.requester': 'RULE_RESEARCH',
  'research.from-case': 'RULE_RESEARCH',
  'research.binding': 'RULE_RESEARCH',
  'turn.request': 'RULE_TURN',
  'turn.answer': 'RULE_TURN',
  'turn.decision': 'RULE_TURN',
  'turn.rejection-count': 'RULE_TURN',
  'turn.ids': 'RULE_TURN',
  'turn.plan': 'RULE_TURN',
  'turn.derived': 'RULE_TURN',
  'turn.prompt': 'RULE_TURN',
  'reference.evidence': 'RULE_REFERENCE',
  'reference.hypothesis': 'RULE_REFERENCE',
  'reference.lab': 'RULE_REFERENCE',
  'revision.number': 'RULE_REVISION',
  'revision.inputs-digest': 'RULE_REVISION',
  'revision.open': 'RULE_REVISION',
  'revision.queries': 'RULE_REVISION',
  'revision.facts': 'RULE_REVISION',
  'revision.provenance': 'RULE_REVISION',
  'revision.coverage': 'RULE_REVISION',
  'revision.derived': 'RULE_REVISION',
  'revision.extracted': 'RULE_REVISION',
  'command.whole': 'RULE_COMMAND',
  'command.members': 'RULE_COMMAND',
  'command.signature': 'RULE_COMMAND',
  'time.format': 'RULE_TIME',
  'time.order': 'RULE_TIME',
  'time.command': 'RULE_TIME',
  'time.retry': 'RULE_TIME',
  'time.future': 'RULE_TIME',
  'version.current': 'RULE_VERSION'
} as const satisfies Readonly<Record<string, RuleCode>>

/** A rule's id, e.g. `budget.overdrawn`. @category cases */
export type RuleId = keyof typeof RULES

/** A recorded event that breaks a rule: its family, its rule, why, and where. */
export interface RuleViolation {
  readonly code: RuleCode
  /** The rule, e.g. `budget.overdrawn` (case-format/SPEC.md lists them all). */
  readonly rule: RuleId
  readonly message: string
  readonly seq: number
}

/** A violation of `rule` at `seq` (its family from the table above). */
export const violation = (rule: RuleId, message: string, seq: number): RuleViolation => ({
  code: RULES[rule],
  rule,
  message,
  seq
})
