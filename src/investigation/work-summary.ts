/**
 * What a worker did, counted as it goes: claims, advances and where they left their cases
 * (concluded, exhausted, blocked by reason, cancelled), and every failure by code. A worker that
 * failed says so here; it never reports "0 failed" for work it could not do.
 */
import type { Failure, FailureCode } from '../failures/failure.js'
import type { AdvanceResult } from '../commands/lifecycle-commands.js'

/** Most failures a summary lists one by one (all are counted by code). */
const LISTED_FAILURES = 100

/** A failure of the worker: of one case, or of the queue (`case_id` null). @category queue */
export interface WorkFailure {
  readonly case_id: string | null
  readonly code: FailureCode
  readonly message: string
}

/** What a worker loop did, and why it ended. @category queue */
export interface WorkSummary {
  /** Cases claimed (a case claimed again counts again). */
  readonly claims: number
  /** Advances that returned (whatever state they left the case in). */
  readonly advanced: number
  readonly concluded: number
  readonly exhausted: number
  /** Advances that left their case blocked, by block reason. */
  readonly blocked: Readonly<Record<string, number>>
  /** Advances stopped by the stop signal (their case stays in its state). */
  readonly cancelled: number
  /** Model turns run. */
  readonly turns: number
  /** Failures, by code (all of them). */
  readonly failures_by_code: Readonly<Record<string, number>>
  /** The first failures, one by one. */
  readonly failures: readonly WorkFailure[]
  /** Why the worker ended: nothing left (`idle`, with untilIdle), the stop signal, or a permanent failure. */
  readonly ended: 'idle' | 'signal' | 'failure'
  /** The failure that stopped the worker (`ended` is `failure`). */
  readonly stopped_by: WorkFailure | null
}

/** The counters while the worker runs. */
export interface Tally {
  claims: number
  advanced: number
  concluded: number
  exhausted: number
  blocked: Record<string, number>
  cancelled: number
  turns: number
  failures_by_code: Record<string, number>
  failures: WorkFailure[]
}

export const emptyTally = (): Tally => ({
  claims: 0,
  advanced: 0,
  concluded: 0,
  exhausted: 0,
  blocked: {},
  cancelled: 0,
  turns: 0,
  failures_by_code: {},
  failures: []
})

export const tallyResult = (t: Tally, r: AdvanceResult): void => {
  t.advanced++
  t.turns += r.turns
  if (r.cancelled) t.cancelled++
  if (r.state === 'CONCLUDED') t.concluded++
  else if (r.state === 'EXHAUSTED') t.exhausted++
  else if (r.state === 'BLOCKED') {
    const reason = r.reason ?? 'UNKNOWN'
    t.blocked[reason] = (t.blocked[reason] ?? 0) + 1
  }
}

export const tallyFailure = (t: Tally, caseId: string | null, f: Failure): WorkFailure => {
  const wf = { case_id: caseId, code: f.code, message: f.message }
  t.failures_by_code[f.code] = (t.failures_by_code[f.code] ?? 0) + 1
  if (t.failures.length < LISTED_FAILURES) t.failures.push(wf)
  return wf
}

/** The summary of a tally. */
export const summaryOf = (t: Tally, ended: WorkSummary['ended'], stoppedBy: WorkFailure | null): WorkSummary => ({
  claims: t.claims,
  advanced: t.advanced,
  concluded: t.concluded,
  exhausted: t.exhausted,
  blocked: { ...t.blocked },
  cancelled: t.cancelled,
  turns: t.turns,
  failures_by_code: { ...t.failures_by_code },
  failures: [...t.failures],
  ended,
  stopped_by: stoppedBy
})

/** The summary in one line for people: every count that is not zero. */
export const summaryLine = (s: WorkSummary): string => {
  const parts = [`${s.claims} claim(s)`, `${s.advanced} advanced`, `${s.concluded} concluded`]
  if (s.exhausted > 0) parts.push(`${s.exhausted} exhausted`)
  for (const [reason, n] of Object.entries(s.blocked)) parts.push(`${n} blocked (${reason})`)
  if (s.cancelled > 0) parts.push(`${s.cancelled} cancelled`)
  const failed = Object.values(s.failures_by_code).reduce((a, b) => a + b, 0)
  parts.push(
    failed === 0
      ? '0 failed'
      : `${failed} failed (${Object.entries(s.failures_by_code)
          .map(([c, n]) => `${c} ${n}`)
          .join(', ')})`
  )
  const why =
    s.ended === 'failure' && s.stopped_by !== null
      ? `stopped by ${s.stopped_by.code}${s.stopped_by.case_id === null ? '' : ` on ${s.stopped_by.case_id}`}`
      : s.ended === 'idle'
        ? 'nothing left to do'
        : 'stopped'
  return `${parts.join(', ')}; ${why}`
}
