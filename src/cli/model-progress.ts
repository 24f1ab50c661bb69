/**
 * Live model calls on the terminal (and as `--json` lines): a line per attempt of an endpoint
 * call (sent, answered, or failed with the HTTP status, the wait and the attempt's number of N,
 * the time elapsed), a line when a model command starts and when it exits, and a heartbeat every
 * `heartbeat_ms` while a request or a command is waiting, or the next attempt waits for its turn, so
 * a model that hangs is never silent for longer than that.
 */
import type { ModelAttemptEvent } from '../investigation/http-model.js'
import type { CommandModelEvent } from '../investigation/models.js'

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

/** The text of a model command's start or end. */
export const commandLine = (e: CommandModelEvent): string => {
  if (e.kind === 'started')
    return `  model command ${e.program} started (turn ${e.turn}, pid ${e.pid ?? '?'}, time limit ${secs(e.timeout_ms)})`
  const how = e.timed_out
    ? `killed at its time limit (${e.signal ?? 'SIGKILL'})`
    : e.signal !== null
      ? `killed by ${e.signal}`
      : `exited with ${String(e.code)}`
  return `  model command ${e.program} ${how} after ${secs(e.elapsed_ms)} (${e.answer_bytes} bytes on stdout)`
}

/**
 * An observer for the HTTP model and the model command: prints each attempt and each start and
 * end of the command through `say` (a JSON value and its text), and a heartbeat while a sent
 * request has not answered or the command runs. `stop` clears the heartbeat.
 */
export const modelProgress = (
  say: (value: Record<string, unknown>, text: string) => void,
  heartbeatMs: number,
  now: () => number = Date.now
): {
  readonly onAttempt: (e: ModelAttemptEvent) => void
  readonly onCommand: (e: CommandModelEvent) => void
  readonly stop: () => void
} => {
  let timer: NodeJS.Timeout | undefined
  const clear = (): void => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
  }
  const beat = (value: (waited: number) => Record<string, unknown>, text: (waited: string) => string): void => {
    const since = now()
    timer = setInterval(() => {
      const waited = now() - since
      say(value(waited), text(secs(waited)))
    }, heartbeatMs)
    timer.unref()
  }
  return {
    onAttempt: (e) => {
      clear()
      say({ model_attempt: e }, attemptLine(e))
      if (e.kind === 'failed' && e.wait_ms !== null) {
        const wait = e.wait_ms
        beat(
          (waited) => ({
            model_waiting: { attempt: e.attempt + 1, of: e.of, before_attempt_ms: wait, waited_ms: waited }
          }),
          (waited) => `  model attempt ${e.attempt + 1} of ${e.of}: waiting to send (${waited} of ${secs(wait)})`
        )
      }
      if (e.kind !== 'sent') return
      beat(
        (waited) => ({ model_waiting: { attempt: e.attempt, of: e.of, waited_ms: waited } }),
        (waited) => `  model attempt ${e.attempt} of ${e.of}: waiting for the answer (${waited})`
      )
    },
    onCommand: (e) => {
      clear()
      say({ model_command: e }, commandLine(e))
      if (e.kind !== 'started') return
      beat(
        (waited) => ({ model_waiting: { command: e.program, pid: e.pid, waited_ms: waited } }),
        (waited) => `  model command ${e.program}: running, no answer yet (${waited})`
      )
    },
    stop: clear
  }
}
