/**
 * The case state of a version-2 prompt in words: the interpretation, the hypotheses, the lab
 * tests with the operator's feedback, and the notices about the model's last step (a refused
 * query with what the model can change, a rejected answer, a cancelled plan, how many stalled
 * queries in a row it has asked). Each text is shown whole up to a documented bound, and a cut
 * one ends in a marker with its full length. Pure.
 */
import type { CaseState } from '../../domain/case-state.js'
import { requestText } from '../request-text.js'
import { askerText, wordingOf } from './evidence-text.js'

/** Bounds of the state's texts (characters), given as `clip` (the last-resort guard lowers them). */
export interface TextBounds {
  readonly interpretation: number
  readonly statement: number
  readonly description: number
  readonly feedback: number
}

export const TEXT_BOUNDS: TextBounds = { interpretation: 2000, statement: 300, description: 500, feedback: 1500 }

/** A text whole, or its first `max` characters and a marker with its full length. */
export const clip = (text: string, max: number): string =>
  text.length <= max ? text : `${text.slice(0, max)}…[cut at ${max} of ${text.length} characters]`

/** The interpretation, the hypotheses and the lab tests. */
export const stateLines = (s: CaseState, b: TextBounds = TEXT_BOUNDS): string[] => {
  const out: string[] = []
  if (s.interpretation !== null) out.push(`Interpretation: ${clip(s.interpretation, b.interpretation)}`)
  if (s.hypotheses.size > 0) {
    out.push(
      'Hypotheses:',
      ...[...s.hypotheses.values()].map(
        (h) =>
          `  ${h.id} [${h.status}] ${clip(h.statement, b.statement)} (evidence: ${h.evidence.join(', ') || 'none'})`
      )
    )
  }
  if (s.labRequests.size > 0) {
    out.push("Lab tests (your requests and the operator's feedback):")
    for (const [id, r] of s.labRequests) {
      out.push(
        `  ${id} [${r.feedback === null ? 'waiting for feedback' : 'feedback recorded'}] ${clip(r.description, b.description)}`
      )
      if (r.feedback !== null) out.push(`    feedback on ${id}: ${JSON.stringify(clip(r.feedback, b.feedback))}`)
    }
  }
  return out
}

/** Failures only the operator can fix: asking differently cannot change them. */
const OPERATOR_ONLY = new Set([
  'TABLE_NOT_FOUND',
  'CONTEXT_SETTINGS_DIFFER',
  'SOURCE_CONTEXT_DISABLED',
  'DATABASE_NOT_CONFIGURED',
  'SOURCE_NOT_CONFIGURED',
  'DATABASE_ACCESS_DENIED',
  'DATABASE_UNSAFE_MODE',
  'SOURCE_TREE_UNSAFE',
  'SOURCE_OBJECT_MISSING',
  'SOURCE_FILE_TOO_LARGE',
  'DATABASE_QUERY_FAILED',
  'PACKAGE_MISSING'
])

/** What the model can change about a refused query (or that it cannot), in one line. */
export const refusalAdvice = (s: CaseState, code: string, args: Readonly<Record<string, unknown>> | null): string => {
  const c = s.settings?.contract ?? null
  if (OPERATOR_ONLY.has(code))
    return 'This cannot be fixed by asking differently: only the operator can change it (the profile, the database or the snapshot). Continue with other questions.'
  switch (code) {
    case 'TABLE_NOT_ALLOWED':
    case 'DATABASE_NOT_ALLOWED': {
      const asked = typeof args?.['database'] === 'string' ? args['database'] : c?.databases[0]?.name
      const db = c?.databases.find((d) => d.name === asked) ?? c?.databases[0]
      if (code === 'DATABASE_NOT_ALLOWED')
        return `Ask one of the databases: ${(c?.databases ?? []).map((d) => d.name).join(', ') || 'none'}.`
      return db === undefined
        ? 'Ask one of the allowed tables (database.tables lists them).'
        : `Ask one of the allowed tables of ${db.name}: ${db.allowed_tables.join(', ') || 'none'}.`
    }
    case 'COLUMN_UNKNOWN':
      return "Ask database.schema for the table's columns, then use those."
    case 'SOURCE_FILE_NOT_FOUND':
      return 'Find the path with source.files first.'
    case 'SOURCE_NOT_READABLE':
    case 'SOURCE_NOT_TEXT':
      return 'This path is not readable source (a symlink, a submodule or a binary file): read another file.'
    case 'RESULT_TOO_LARGE':
    case 'SOURCE_TIMEOUT':
    case 'DATABASE_TIMEOUT':
      return 'Ask a narrower query: a path_prefix, a more selective filter, fewer columns or rows, a smaller window.'
    default:
      return 'Correct the arguments (the contract above lists them) or ask a different query.'
  }
}

/** Notices about the model's last step: fresh only until its next decision. */
export const noticeLines = (s: CaseState): string[] => {
  const out: string[] = []
  const last = s.lastResult
  const fresh = last !== null && last.seq > s.lastDecisionSeq
  if (fresh && last.kind === 'failure') {
    const w = wordingOf(s)
    const which =
      last.plan_id !== null
        ? `Your last query (plan ${last.plan_id})`
        : w === 'exact'
          ? `The last query, asked by ${askerText(w, last.requester)},`
          : 'Your last query'
    out.push(
      `${which} was refused (${last.code}): ${clip(last.message, 500)}`,
      `Request: ${clip(last.arguments === null ? 'unknown' : requestText(String(last.arguments['kind']), last.arguments), 600)}`,
      `No evidence was recorded and no budget was used. ${refusalAdvice(s, last.code, last.arguments)}`
    )
  } else if (fresh && last.kind === 'cancelled')
    out.push(
      `An operator cancelled your last plan${last.plan_id === null ? '' : ` ${last.plan_id}`}: ${clip(last.reason, 500)}`
    )
  const limit = s.settings?.count_refusals === true ? s.settings.max_invalid_responses : null
  if (limit !== null && s.stalled > 0)
    out.push(
      `Refused or repeated queries in a row: ${s.stalled} of ${limit} (at ${limit} the investigation blocks until an operator resumes it).`
    )
  if (s.lastRejection !== null)
    out.push(
      `Your last answer was rejected (${s.lastRejection.code}): ${clip(s.lastRejection.message, 600)}`,
      'Answer with one JSON object of the contract above.'
    )
  return out
}
