/**
 * The rules of a case: every recorded event is checked against the state before it, so that a
 * case which verifies is a case the library's own deciders could have produced. A forger with
 * write access to a case directory can keep the hash chain intact, but not these.
 *
 * Verify, replay, open and the writer all run the same fold ({@link ruleFold}, fold.ts): `feed`
 * checks an event (events.ts; the check of each type is named in ../event-handling.ts, one file per family here) and folds it into
 * the case state; command boundaries check that each command is a whole decision. Checks that need
 * object contents are returned as obligations for whoever reads objects ({@link checkObligations},
 * objects.ts, pure over a `read` function).
 *
 * Every violation names its family (the finding code) and its rule (ids.ts; case-format/SPEC.md
 * lists them all). Pure: no IO.
 */
export { RULES, violation, type RuleId, type RuleViolation } from './ids.js'
export type { Obligation, ReadObject, DecisionObligation, NotApplied } from './context.js'
export { ruleFold, type RuleFold, type RuleFoldOptions } from './fold.js'
export { checkObligations, checkFactsDerivation, decodeCaptureOnce, obligationRefs } from './objects.js'
export type { CaptureDecodes, DecodedCapture } from './objects.js'
