/** Clock and id source, injected so tests and replays can pin them. */
import { randomUUID } from 'node:crypto'

/** A clock and an id source (inject a fixed one in tests). @category Client */
export interface Env {
  readonly now: () => Date
  readonly newId: () => string
  /**
   * Milliseconds on a monotonic clock, for the durations a case records (a model call's
   * latency); default `performance.now()`. A fixed environment stands it still, so a recorded
   * case is the same bytes however busy the machine is.
   */
  readonly elapsed?: () => number
}

/** @category Fixtures */
export const systemEnv: Env = { now: () => new Date(), newId: () => randomUUID() }

/** A deterministic environment: a fixed start time advancing 1 ms per call, counter ids. @category Fixtures */
export const fixedEnv = (startIso = '2026-01-01T00:00:00.000Z', prefix = 'id'): Env => {
  let clock = Date.parse(startIso)
  let counter = 0
  return {
    now: () => new Date(clock++),
    newId: () => `${prefix}-${String(++counter).padStart(6, '0')}`,
    elapsed: () => 0
  }
}
