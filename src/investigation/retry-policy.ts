/**
 * The retry policy of the HTTP model client, apart from HTTP so that all of it is tested directly:
 * which statuses are retried, how long the provider asked to wait (retry-after-ms, Retry-After as
 * seconds or an HTTP date), the exponential backoff with full jitter and its 30 s cap, and the
 * decision after a failed attempt (wait how long, or stop). Time and chance come from a
 * {@link RetryClock}, the machine's by default, a test's own in the tests.
 */

/** Where the policy reads the time, waits and draws its jitter. */
export interface RetryClock {
  /** Milliseconds since the epoch. */
  readonly now: () => number
  /** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>
  /** A number in [0, 1). */
  readonly random: () => number
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted || ms <= 0) {
      resolve()
      return
    }
    const done = (): void => {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const t = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })

/** The machine's clock, timers and Math.random. */
export const systemClock: RetryClock = { now: () => Date.now(), sleep, random: () => Math.random() }

/** The longest backoff between two attempts, whatever the attempt number. */
export const MAX_BACKOFF_MS = 30_000

/** Statuses another attempt may cure: 408 (timeout), 409 (conflict), 429 (rate limit) and every 5xx. */
export const retryableStatus = (status: number): boolean =>
  status === 408 || status === 409 || status === 429 || status >= 500

/** What {@link retryAfterMs} reads: a Headers, or anything with the same `get`. */
export interface HeaderSource {
  readonly get: (name: string) => string | null
}

/** How long the provider asked to wait, in ms: retry-after-ms, else Retry-After as seconds or an HTTP date (a past date is 0). */
export const retryAfterMs = (headers: HeaderSource | undefined, now: number): number | null => {
  if (headers === undefined) return null
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms) && ms >= 0) return ms
  const v = headers.get('retry-after')
  if (v === null) return null
  const secs = Number.parseFloat(v)
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000
  const at = Date.parse(v)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

/** The backoff before attempt `attempt + 1`: full jitter over `backoffMs · 2^(attempt-1)`, capped at 30 s. */
export const backoffMs = (attempt: number, firstBackoffMs: number, random: () => number): number =>
  random() * Math.min(MAX_BACKOFF_MS, firstBackoffMs * 2 ** (attempt - 1))

/** A failed attempt as the policy sees it. */
export interface FailedAttempt {
  /** Its number, from 1. */
  readonly attempt: number
  /** Whether another attempt may help (a retryable status, a timeout, a reset, garbage). */
  readonly retry: boolean
  /** What the provider asked for, if anything. */
  readonly retryAfterMs: number | null
  /** Time spent on this call so far. */
  readonly elapsedMs: number
}

/** The bounds of one call. */
export interface RetryBounds {
  readonly maxAttempts: number
  readonly maxTotalMs: number
  readonly backoffMs: number
}

/** After a failed attempt: wait this long and try again, or stop with its failure. */
export type RetryStep = { readonly kind: 'wait'; readonly ms: number } | { readonly kind: 'stop' }

/**
 * What follows a failed attempt: the provider's Retry-After or a jittered backoff, unless the
 * failure is final, the attempts are used up, or the wait would end past the total bound (then at
 * once, not after a sleep that cannot help).
 */
export const nextStep = (f: FailedAttempt, bounds: RetryBounds, random: () => number): RetryStep => {
  if (!f.retry || f.attempt >= bounds.maxAttempts) return { kind: 'stop' }
  const wait = f.retryAfterMs ?? backoffMs(f.attempt, bounds.backoffMs, random)
  return f.elapsedMs + wait >= bounds.maxTotalMs ? { kind: 'stop' } : { kind: 'wait', ms: wait }
}
