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
import { appended } from './context.js'

export interface TimeViolation {
  readonly rule: RuleId
  readonly message: string
}

/** How long a decision may precede its seal in cases written before decisions carried their time. */
const SEAL_SLACK_MS = 1000
/** The longest a provider's Retry-After may extend a MODEL_UNAVAILABLE block. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** The digits of `at` from `from` to `to` as a number, or -1 when one is not a digit. */
const digits = (at: string, from: number, to: number): number => {
  let n = 0
  for (let i = from; i < to; i++) {
    const d = at.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    n = n * 10 + d
  }
  return n
}

/**
 * The epoch ms of an instant written as toISOString writes it (YYYY-MM-DDTHH:MM:SS.sssZ, years
 * 1970-9999) whose fields are in range, or null to ask Date.parse (any other text). For such a
 * text Date.parse gives the same ms and toISOString gives the text back.
 */
const isoFields = (at: string): number | null => {
  if (at.length !== 24 || at[4] !== '-' || at[7] !== '-' || at[10] !== 'T' || at[13] !== ':') return null
  if (at[16] !== ':' || at[19] !== '.' || at[23] !== 'Z') return null
  const y = digits(at, 0, 4)
  const mo = digits(at, 5, 7)
  const d = digits(at, 8, 10)
  const h = digits(at, 11, 13)
  const mi = digits(at, 14, 16)
  const sec = digits(at, 17, 19)
  const ms = digits(at, 20, 23)
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 || ms < 0)
    return null
  const leap = mo === 2 && y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0)
  if (d > (DAYS[mo - 1] as number) + (leap ? 1 : 0)) return null
  return Date.UTC(y, mo - 1, d, h, mi, sec, ms)
}

/** Whether `at` is a real instant in the envelope's form (no month 99, no hour 25), and its epoch ms. */
const parseInstant = (at: string, into: { ms: number; real: boolean }): void => {
  const fast = isoFields(at)
  const ms = fast ?? Date.parse(at)
  into.ms = ms
  into.real = fast !== null || (!Number.isNaN(ms) && new Date(ms).toISOString() === at)
}

/**
 * The instants one fold parsed last: the latest event's and the case's creation. Every event is
 * compared with the one before it (its `lastAt`, the very string parsed for it) and with the
 * creation, and the events of one command share one time: nearly every instant but the event's
 * own is known already, by identity. Parsing dominated the time rules over a long log.
 */
export class Instants {
  #last: string | null = null
  #lastMs = 0
  #lastReal = false
  #created: string | null = null
  #createdMs = 0
  readonly #scratch = { ms: 0, real: false }

  /** The epoch ms of `at` (NaN when it is no instant), as the last event's if it is that text. */
  #msOf(at: string): number {
    if (at === this.#last) return this.#lastMs
    if (at === this.#created) return this.#createdMs
    parseInstant(at, this.#scratch)
    return this.#scratch.ms
  }

  created(at: string): number {
    if (at !== this.#created) {
      this.#createdMs = this.#msOf(at)
      this.#created = at
    }
    return this.#createdMs
  }

  before(at: string): number {
    return this.#msOf(at)
  }

  /** The event's own instant: whether it is real, its ms in `lastMs()`; it becomes the last one. */
  event(at: string): boolean {
    if (at !== this.#last) {
      parseInstant(at, this.#scratch)
      this.#last = at
      this.#lastMs = this.#scratch.ms
      this.#lastReal = this.#scratch.real
    }
    return this.#lastReal
  }

  lastMs(): number {
    return this.#lastMs
  }
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
  notAfter: number | null,
  instants: Instants
): readonly TimeViolation[] => {
  // The instant before the event's own is read first: the event's becomes the last one.
  const lastMs = s.lastAt === null ? null : instants.before(s.lastAt)
  if (!instants.event(e.at)) return [{ rule: 'time.format', message: `${e.at} is not a real UTC instant` }]
  const at = instants.lastMs()
  let out: TimeViolation[] | null = null
  if (s.createdAt !== null && at < instants.created(s.createdAt))
    out = appended(out, { rule: 'time.order', message: `dated ${e.at}, before the case was created (${s.createdAt})` })
  if (lastMs !== null && at < lastMs)
    out = appended(out, { rule: 'time.order', message: `dated ${e.at}, before the event it follows (${s.lastAt})` })
  if (commandAt !== null && e.at !== commandAt)
    out = appended(out, { rule: 'time.command', message: `dated ${e.at}, but its command was decided at ${commandAt}` })
  if (notAfter !== null && at > notAfter)
    out = appended(out, {
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
        out = appended(out, {
          rule: 'time.retry',
          message: `${e.data.reason} retries at ${e.data.retry_not_before}; decided at ${e.at} it retries ${least === most ? `${least} ms later` : `between ${least} and ${most} ms later`}`
        })
      }
    }
  }
  return out ?? NO_TIME_VIOLATIONS
}

const NO_TIME_VIOLATIONS: readonly TimeViolation[] = []
