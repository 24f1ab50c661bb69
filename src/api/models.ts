/**
 * The model adapters of the public API: {@link httpModel} (an OpenAI-compatible endpoint) and
 * {@link commandModel} (a command run per turn), as model functions that reject with
 * {@link VbaError} like every other call of the library (`instanceof VbaError`, a `code`, `kind`).
 * The loop records such a rejection as a failed model call.
 */
import { FailureError } from '../failures/error.js'
import { VbaError } from './errors.js'
import { httpModel as httpModelOf, type HttpModelOptions, type ModelAttemptEvent } from '../investigation/http-model.js'
import {
  commandModel as commandModelOf,
  type CommandModelEvent,
  type CommandModelOptions
} from '../investigation/models.js'
import type { ModelFn } from '../investigation/model-fn.js'

const public_ =
  (m: ModelFn): ModelFn =>
  async (request) => {
    try {
      return await m(request)
    } catch (e) {
      throw e instanceof FailureError ? new VbaError(e.failure) : e
    }
  }

/**
 * A model behind an OpenAI-compatible chat-completions endpoint, through the official `openai`
 * client: the stable prefix as the (cacheable) system message, the rest as the user message.
 * 429, 5xx, 408, 409, timeouts, refused or reset connections and unparseable answers are retried
 * with exponential backoff and full jitter, honouring Retry-After, within `maxAttempts` (default 5)
 * requests and `maxTotalMs` (default 900 000 ms) of wall time; one request may take `timeoutMs`
 * (default 300 000 ms). Each answer says which model answered (as the endpoint reported it), the
 * endpoint's origin, the request parameters, the token usage as reported, the finish reason and the
 * attempts; the loop records them with the answer. Rejects with a {@link VbaError}:
 * `MODEL_HTTP_ERROR` (an HTTP error status, with `data.status` and the provider's error text; or an
 * answer that is not a chat completion) or `MODEL_CALL_FAILED` (no answer: refused, reset, timed
 * out, no key), both `unavailable`; `MODEL_CALL_CANCELLED` when the request's signal aborts. The
 * API key is read from `apiKeyEnv` at each call and never appears in a failure.
 *
 * @example
 * const model = httpModel({ url: 'http://127.0.0.1:8080/v1', model: 'qwen2.5-coder', jsonMode: true })
 * await vba.investigations.advance('cases/bug-11117', { model })
 * @category Models
 */
export const httpModel = (options: HttpModelOptions): ModelFn => public_(httpModelOf(options))

/**
 * A model that runs `command` through the shell once per turn: the prompt on its stdin, its stdout
 * is the answer (`VBA_TURN` and `VBA_PHASE` are set). A non-zero exit, a signal or a timeout
 * rejects with a {@link VbaError} `MODEL_COMMAND_FAILED` (with the end of its stderr). An answer
 * over `maxAnswerBytes` is kept cut and rejected by the deciders as too large. Each answer records
 * the program name (never its arguments) and the exit status. `onEvent` tells when the command
 * starts and how it ended ({@link CommandModelEvent}).
 * @category Models
 */
export const commandModel = (command: string, options: CommandModelOptions = {}): ModelFn =>
  public_(commandModelOf(command, options))

export type { HttpModelOptions, CommandModelOptions, CommandModelEvent, ModelAttemptEvent }
