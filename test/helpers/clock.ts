/**
 * A test's own clock for code that takes a {@link RetryClock}: the time stands still until
 * something sleeps, a sleep moves it on at once and is recorded, and the jitter draws what the test
 * lists. So a test asserts how long the code chose to wait, never how long it took.
 */
import type { RetryClock } from '../../src/investigation/retry-policy.js'

export interface TestClock extends RetryClock {
  /** Every sleep asked for, in ms, in order. */
  readonly sleeps: number[]
  /** How many jitter draws were made. */
  readonly draws: () => number
}

export interface TestClockOptions {
  /** The time at the start (default 2026-12-01T00:00:00Z). */
  readonly start?: number
  /** The draws of `random`, in order; the last one repeats (default 0.5). */
  readonly random?: readonly number[]
  /** Called when a sleep begins (before the time moves on), e.g. to abort the call then. */
  readonly onSleep?: (ms: number, signal: AbortSignal) => void
}

export const testClock = (options: TestClockOptions = {}): TestClock => {
  let now = options.start ?? Date.UTC(2026, 11, 1)
  const sleeps: number[] = []
  const draws = options.random ?? [0.5]
  let drawn = 0
  return {
    now: () => now,
    sleep: async (ms, signal) => {
      sleeps.push(ms)
      options.onSleep?.(ms, signal)
      if (!signal.aborted) now += ms
    },
    random: () => draws[Math.min(drawn++, draws.length - 1)] ?? 0.5,
    sleeps,
    draws: () => drawn
  }
}

/**
 * A clock for a time limit that is always exceeded: every reading is 700 s after the one before,
 * more than the largest `[limits] time_ms` (600 000). A query that checks its deadline at all times
 * out, on any machine.
 */
export const limitExceeded = (): (() => number) => {
  let t = 0
  return () => {
    t += 700_000
    return t
  }
}
