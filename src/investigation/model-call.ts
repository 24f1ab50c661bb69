/**
 * Calling the controller's model function for the loop: the call is abandoned when the
 * controller's signal aborts (whether or not the function honours it), what it throws becomes
 * a coded failure to record, and what it returns is checked to be an answer.
 */
import { failure, isFailure, isFailureCode, type Failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import type { ModelAnswer, ModelFn, ModelRequest } from './model-fn.js'

/** A thrown model error as a coded failure (its message is kept short; no stack). */
export const modelFailureOf = (e: unknown): Failure => {
  if (e instanceof FailureError) return e.failure
  if (isFailure(e)) return e
  // A public adapter's VbaError (or any error with a failure code, a message and data).
  const coded = e as { code?: unknown; message?: unknown; data?: unknown } | null
  if (typeof coded?.code === 'string' && isFailureCode(coded.code) && typeof coded.message === 'string') {
    return failure(
      coded.code,
      coded.message,
      typeof coded.data === 'object' && coded.data !== null ? (coded.data as Record<string, unknown>) : {}
    )
  }
  const message = e instanceof Error ? e.message : String(e)
  return failure('MODEL_CALL_FAILED', `the model function failed: ${message.slice(0, 300)}`)
}

/**
 * The model's answer, or MODEL_CALL_CANCELLED as soon as the controller's signal aborts, whether
 * or not the model function honours the signal: an abandoned call's later answer or rejection is
 * ignored (handled, so it is never an unhandled rejection).
 */
export const untilAborted = (model: ModelFn, request: ModelRequest): Promise<string | ModelAnswer> => {
  const { signal } = request
  const cancelled = () => new FailureError(failure('MODEL_CALL_CANCELLED', 'the controller cancelled the model call'))
  if (signal.aborted) return Promise.reject(cancelled())
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(cancelled())
    signal.addEventListener('abort', onAbort, { once: true })
    let call: Promise<string | ModelAnswer>
    try {
      call = Promise.resolve(model(request))
    } catch (e) {
      call = Promise.reject(e)
    }
    call.then(
      (answer) => {
        signal.removeEventListener('abort', onAbort)
        resolve(answer)
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(e)
      }
    )
  })
}

/** What a model function returned instead of an answer, in words, or null for an answer. */
export const notAnAnswer = (answer: unknown): string | null => {
  if (typeof answer === 'string') return null
  if (answer === null || answer === undefined) return String(answer)
  if (typeof answer !== 'object') return `a ${typeof answer}`
  if (Array.isArray(answer)) return 'an array'
  const text = (answer as { text?: unknown }).text
  if (typeof text === 'string') return null
  const members = Object.keys(answer).slice(0, 8).join(', ')
  return text === undefined
    ? `an object without text (its members: ${members === '' ? 'none' : members})`
    : `an object whose text is ${text === null ? 'null' : `a ${typeof text}`}`
}
