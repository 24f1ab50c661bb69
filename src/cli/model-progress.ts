/**
 * Live model calls on the terminal (and as `--json` lines): a line per attempt of an endpoint
 * call (sent, answered, or failed with the HTTP status, the wait and the attempt's number of N,
 * the time elapsed), and a heartbeat every `heartbeat_ms` while a request is waiting, so a model
 * that hangs is never silent for longer than that.
 */
import type { ModelAttemptEvent } from '../investigation/http-model.js'

/** How often a waiting request is reported unless `[model] heartbeat_ms` says. */
export const DEFAULT_HEARTBEAT_MS = 5000

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

/** The text of one attempt event. */
export const attemptLine = (e: ModelAttemptEvent): string => {
  const n = `model attempt ${e.attempt} of ${e.of}`
  switch (e.kind) {
    case 'sent':
      return `  ${n}: sent (${secs(e.elapsed_ms)} into the call)`
    case 'answered':
      return `  ${n}: answered after ${secs(e.elapsed_ms)}`
    case 'failed': {
      const what = e.status === null ? 'no answer' : `HTTP ${e.status}`
      const then =
        e.wait_ms === null ? 'no attempt left: the call fails' : `attempt ${e.attempt + 1} in ${secs(e.wait_ms)}`
      return `  ${n}: ${what} (${e.code}: ${e.message}) after ${secs(e.elapsed_ms)}; ${then}`
    }
    default: {
      const _never: never = e
      return JSON.stringify(_never)
    }
  }
}

/**
 * An observer for the HTTP model: prints each attempt through `say` (a JSON value and its text),
 * and a heartbeat while a sent request has not answered. `stop` clears the heartbeat.
 */
export const modelProgress = (
  say: (value: Record<string, unknown>, text: string) => void,
  heartbeatMs: number,
  now: () => number = Date.now
): { readonly onAttempt: (e: ModelAttemptEvent) => void; readonly stop: () => void } => {
  let timer: NodeJS.Timeout | undefined
  const clear = (): void => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
  }
  return {
    onAttempt: (e) => {
      clear()
      say({ model_attempt: e }, attemptLine(e))
      if (e.kind !== 'sent') return
      const sentAt = now()
      timer = setInterval(() => {
        const waited = now() - sentAt
        say(
          { model_waiting: { attempt: e.attempt, of: e.of, waited_ms: waited } },
          `  model attempt ${e.attempt} of ${e.of}: waiting for the answer (${secs(waited)})`
        )
      }, heartbeatMs)
      timer.unref()
    },
    stop: clear
  }
}
