/**
 * The time rules (family RULE_TIME): every event's time is a real UTC instant, no earlier than the
 * case's creation or the event before it; the events of one command share one time (the time of
 * its decision); a timed block's retry time is what its decider derives from that time (the retry
 * delay of INVALID_LLM_RESPONSES, the backoff of an outage, at least the backoff of a failed model
 * call); with a verification time, nothing is dated after it. Pure.
 */
import type { RecordedEvent } from '../../events/chain.js'
import { outageBackoffMs } from '../research-decider.js'
import type { CaseState } from '../case-state.js'
import type { RuleId } from './ids.js'

export interface TimeViolation {
  readonly rule: RuleId
  readonly message: string
}

/** How long a decision may precede its seal in cases written before decisions carried their time. */
const SEAL_SLACK_MS = 1000
/** The longest a provider's Retry-After may extend a MODEL_UNAVAILABLE block. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000

/** An instant in the envelope's form that is a real one (no month 99, no hour 25). */
export const isRealInstant = (at: string): boolean => {
  const ms = Date.parse(at)
  return !Number.isNaN(ms) && new Date(ms).toISOString() === at
}

/** The retry delay a timed block derives from the state it is recorded in, as [least, most] ms. */
const retryWindow = (s: CaseState, reason: string): readonly [number, number] | null => {
  switch (reason) {
    case 'INVALID_LLM_RESPONSES': {
      const d = s.settings?.retry_delay_ms ?? 0
      return [d, d]
    }
    // The failure or outage of the same command is folded already: its streak counts it.
    case 'RESEARCH_UNAVAILABLE': {
      const d = outageBackoffMs(Math.max(1, s.research.outageStreak))
      return [d, d]
    }
    case 'MODEL_UNAVAILABLE': {
      const d = outageBackoffMs(Math.max(1, s.modelFailureStreak))
      return [d, Math.max(d, MAX_RETRY_AFTER_MS)]
    }
    default:
      return null
  }
}

/**
 * The time rules of one event in the state before it (`commandAt`: the time of the command's
 * first event, null for the first event of a command; `notAfter`: the verification time).
 */
export const checkTime = (
  s: CaseState,
  e: RecordedEvent,
  commandAt: string | null,
  notAfter: number | null
): TimeViolation[] => {
  const out: TimeViolation[] = []
  if (!isRealInstant(e.at)) return [{ rule: 'time.format', message: `${e.at} is not a real UTC instant` }]
  const at = Date.parse(e.at)
  if (s.createdAt !== null && at < Date.parse(s.createdAt))
    out.push({ rule: 'time.order', message: `dated ${e.at}, before the case was created (${s.createdAt})` })
  if (s.lastAt !== null && at < Date.parse(s.lastAt))
    out.push({ rule: 'time.order', message: `dated ${e.at}, before the event it follows (${s.lastAt})` })
  if (commandAt !== null && e.at !== commandAt)
    out.push({ rule: 'time.command', message: `dated ${e.at}, but its command was decided at ${commandAt}` })
  if (notAfter !== null && at > notAfter)
    out.push({
      rule: 'time.future',
      message: `dated ${e.at}, after the verification (${new Date(notAfter).toISOString()})`
    })
  if (
    e.type === 'CheckpointRecorded' &&
    e.data.state === 'BLOCKED' &&
    e.data.reason !== null &&
    e.data.retry_not_before !== null
  ) {
    const window = retryWindow(s, e.data.reason)
    const retry = Date.parse(e.data.retry_not_before)
    if (window !== null && !Number.isNaN(retry)) {
      const [least, most] = window
      if (retry < at + least - SEAL_SLACK_MS || retry > at + most) {
        out.push({
          rule: 'time.retry',
          message: `${e.data.reason} retries at ${e.data.retry_not_before}; decided at ${e.at} it retries ${least === most ? `${least} ms later` : `between ${least} and ${most} ms later`}`
        })
      }
    }
  }
  return out
}
