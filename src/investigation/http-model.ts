/**
 * A model behind an OpenAI-compatible chat-completions endpoint (hosted providers, llama.cpp,
 * vLLM, Ollama), through the official `openai` client: the stable prefix is the system message
 * (cacheable), the rest the user message.
 *
 * The client builds requests, parses answers and classifies errors; the retry policy is ours
 * (retry-policy.ts), because its own cannot be bounded in total time and sleeps through an abort: 429, 5xx, 408,
 * 409, timeouts, refused and reset connections and unparseable answers are retried with
 * exponential backoff and full jitter, honouring Retry-After (seconds or a date, and
 * retry-after-ms), within `maxAttempts` requests and `maxTotalMs` of wall time. Each answer
 * reports which model answered (as the endpoint named it), the endpoint's origin, the request
 * parameters, the token usage as reported, the finish reason and the attempts. A failure is a
 * coded failure with the HTTP status and the provider's error text (never the key); the
 * controller's abort ends the call at once.
 */
import { failure, type Failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import type { ModelAnswer, ModelFn } from './model-fn.js'
import { originOf } from './answer-provenance.js'
import { optional } from '../optional.js'
import {
  nextStep,
  retryableStatus,
  retryAfterMs as retryAfterOf,
  systemClock,
  type RetryClock
} from './retry-policy.js'

/** Options of {@link httpModel}; the defaults are documented in docs/usage.md ([model]). @category Models */
export interface HttpModelOptions {
  /** The endpoint: a base URL (`http://127.0.0.1:8080/v1`) or the full `/chat/completions` URL. */
  readonly url: string
  /** The model name the endpoint serves. */
  readonly model: string
  /** The name of the environment variable holding the API key (read at each call; optional for local servers). */
  readonly apiKeyEnv?: string | undefined
  /** One request may take this long (default 300 000 ms). */
  readonly timeoutMs?: number | undefined
  /** Requests for one answer at most, retries included (default 5). */
  readonly maxAttempts?: number | undefined
  /** All attempts of one answer, waits included, take at most this long (default 900 000 ms). */
  readonly maxTotalMs?: number | undefined
  /** Sampling temperature (default 0). */
  readonly temperature?: number | undefined
  /** The answer's token limit (max_tokens; default: the endpoint's). */
  readonly maxTokens?: number | undefined
  /** Ask for JSON mode (`response_format: {"type": "json_object"}`; default false). */
  readonly jsonMode?: boolean | undefined
  /** Where `apiKeyEnv` is looked up (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** First backoff before a retry (default 500 ms; doubles per attempt, at most 30 s, full jitter). */
  readonly backoffMs?: number | undefined
  /** Told about every attempt as it happens: sent, answered, or failed (with the wait before the next). */
  readonly onAttempt?: ((e: ModelAttemptEvent) => void) | undefined
}

/**
 * One attempt of a model call, as it happens: `sent` when the request leaves, then `answered`, or
 * `failed` with the HTTP status (null: no answer), the code and message, and the wait before the
 * next attempt (null: no next one, the call fails). `elapsed_ms` counts from the call's start.
 * @category Models
 */
export type ModelAttemptEvent =
  | { readonly kind: 'sent'; readonly attempt: number; readonly of: number; readonly elapsed_ms: number }
  | { readonly kind: 'answered'; readonly attempt: number; readonly of: number; readonly elapsed_ms: number }
  | {
      readonly kind: 'failed'
      readonly attempt: number
      readonly of: number
      readonly elapsed_ms: number
      readonly status: number | null
      readonly code: string
      readonly message: string
      readonly wait_ms: number | null
    }

export const HTTP_MODEL_DEFAULTS = {
  timeoutMs: 300_000,
  maxAttempts: 5,
  maxTotalMs: 900_000,
  backoffMs: 500,
  temperature: 0
} as const

/** The chat-completions URL of an endpoint given as a base URL or as the full URL. @category Models */
export const chatCompletionsUrl = (url: string): string => {
  const u = new URL(url)
  if (!u.pathname.endsWith('/chat/completions')) u.pathname = `${u.pathname.replace(/\/$/, '')}/chat/completions`
  return u.toString()
}

/** The base URL the client appends `/chat/completions` to, and the query every request carries (`?api-version=…`). */
const baseUrlOf = (url: string): { readonly base: string; readonly query: Record<string, string> } => {
  const u = new URL(chatCompletionsUrl(url))
  u.pathname = u.pathname.slice(0, -'/chat/completions'.length)
  const query = Object.fromEntries(u.searchParams.entries())
  u.search = ''
  u.hash = ''
  return { base: u.toString().replace(/\/$/, ''), query }
}

type OpenAiModule = typeof import('openai')
let sdk: Promise<OpenAiModule> | null = null
/** The client library is loaded on the first call (a CLI that never calls a model does not pay for it). */
const loadSdk = (): Promise<OpenAiModule> => (sdk ??= import('openai'))

/** A failed attempt: what it was, whether another may help, and how long the provider asked to wait. */
interface AttemptFailure {
  readonly failure: Failure
  readonly retry: boolean
  readonly retryAfterMs: number | null
}

/** The provider's error text, one line, bounded; the key (and anything like a bearer token) removed. */
const providerText = (text: string, key: string | undefined): string => {
  let t = text.replace(/\s+/g, ' ').trim()
  if (key !== undefined && key.length >= 4) t = t.split(key).join('[key]')
  t = t.replace(/\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, '[key]').replace(/Bearer\s+\S+/gi, 'Bearer [key]')
  return t.length > 300 ? `${t.slice(0, 300)}…` : t
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null)

/** What one call's attempts share: where, with which key and limits, and its signals. */
interface CallContext {
  readonly origin: string | null
  readonly key: string | undefined
  readonly parameters: { temperature: number; max_tokens: number | null; json_mode: boolean }
  readonly timeoutMs: number
  readonly maxTotalMs: number
  /** The controller's signal. */
  readonly signal: AbortSignal
  /** The total bound (maxTotalMs). */
  readonly deadline: AbortSignal
  readonly sdk: OpenAiModule
  readonly clock: RetryClock
}

/** A failure's data: the endpoint's origin and the attempts, and what else it says. */
const dataOf = (ctx: CallContext, attempts: number, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  endpoint: ctx.origin,
  attempts,
  ...extra
})

/** The controller's cancellation, as the failure it ends the call with. */
const cancelled = (ctx: CallContext, n: number): FailureError =>
  new FailureError(failure('MODEL_CALL_CANCELLED', 'the controller cancelled the model call', dataOf(ctx, n)))

/** A retryable attempt failure (no Retry-After). */
const retryable = (f: Failure): AttemptFailure => ({ failure: f, retry: true, retryAfterMs: null })

/** The client for one call; everything explicit, so it does not pick up OPENAI_* variables of the process. */
const clientFor = (options: HttpModelOptions, ctx: CallContext): InstanceType<OpenAiModule['default']> => {
  const { base, query } = baseUrlOf(options.url)
  return new ctx.sdk.default({
    baseURL: base,
    ...(Object.keys(query).length === 0 ? {} : { defaultQuery: query }),
    apiKey: ctx.key ?? 'none',
    organization: null,
    project: null,
    maxRetries: 0,
    timeout: ctx.timeoutMs,
    logLevel: 'off',
    ...(ctx.key === undefined ? { defaultHeaders: { Authorization: null } } : {})
  })
}

/** The answer of a completion, or the failure of one that is not a chat completion. */
const answerOf = (completion: unknown, n: number, ctx: CallContext): ModelAnswer | AttemptFailure => {
  const c = completion as {
    model?: unknown
    choices?: Array<{ message?: { content?: unknown }; finish_reason?: unknown }>
    usage?: Record<string, unknown> | null
  }
  const content = typeof c === 'object' && c !== null ? c.choices?.[0]?.message?.content : undefined
  if (typeof content !== 'string') {
    return retryable(
      failure(
        'MODEL_HTTP_ERROR',
        `the endpoint answered with something that is not a chat completion (no choices[0].message.content) after ${n} attempt(s)`,
        dataOf(ctx, n, { status: 200 })
      )
    )
  }
  const u = c.usage
  return {
    text: content,
    info: {
      kind: 'http',
      model: typeof c.model === 'string' ? c.model : null,
      endpoint: ctx.origin,
      parameters: ctx.parameters,
      usage:
        u === null || u === undefined || typeof u !== 'object'
          ? null
          : {
              prompt_tokens: count(u['prompt_tokens']),
              completion_tokens: count(u['completion_tokens']),
              total_tokens: count(u['total_tokens'])
            },
      finishReason: typeof c.choices?.[0]?.finish_reason === 'string' ? c.choices[0].finish_reason : null,
      attempts: n
    }
  }
}

/** What a thrown error of attempt `n` means: an HTTP status, a timeout, not JSON, or no connection. */
const attemptFailureOf = (e: unknown, n: number, perAttempt: AbortSignal, ctx: CallContext): AttemptFailure => {
  const origin = String(ctx.origin)
  if (ctx.signal.aborted) throw cancelled(ctx, n)
  if (e instanceof ctx.sdk.APIError && typeof e.status === 'number') {
    const status = e.status
    const error = e.error as { message?: unknown } | undefined
    const text = providerText(
      typeof error?.message === 'string' ? error.message : e.message.replace(/^\d+\s*/, ''),
      ctx.key
    )
    const retryAfterMs = retryAfterOf(e.headers as Headers | undefined, ctx.clock.now())
    return {
      failure: failure(
        'MODEL_HTTP_ERROR',
        `the model endpoint ${origin} answered HTTP ${status}${text === '' ? '' : `: ${text}`} (after ${n} attempt(s))`,
        dataOf(ctx, n, { status, ...(retryAfterMs === null ? {} : { retry_after_ms: Math.round(retryAfterMs) }) })
      ),
      retry: retryableStatus(status),
      retryAfterMs
    }
  }
  const timedOut = perAttempt.aborted || e instanceof ctx.sdk.APIConnectionTimeoutError
  if (ctx.deadline.aborted)
    return {
      failure: failure(
        'MODEL_CALL_FAILED',
        `the model endpoint ${origin} gave no answer within ${ctx.maxTotalMs} ms (max_total_ms, ${n} attempt(s))`,
        dataOf(ctx, n, { max_total_ms: ctx.maxTotalMs })
      ),
      retry: false,
      retryAfterMs: null
    }
  if (timedOut)
    return retryable(
      failure(
        'MODEL_CALL_FAILED',
        `the model endpoint ${origin} did not answer within ${ctx.timeoutMs} ms (after ${n} attempt(s))`,
        dataOf(ctx, n, { timeout_ms: ctx.timeoutMs })
      )
    )
  if (e instanceof SyntaxError)
    return retryable(
      failure(
        'MODEL_HTTP_ERROR',
        `the model endpoint ${origin} answered with something that is not JSON (after ${n} attempt(s))`,
        dataOf(ctx, n, { status: 200 })
      )
    )
  const cause = (e as { cause?: { code?: unknown; cause?: { code?: unknown } } }).cause
  const code =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.cause?.code === 'string'
        ? cause.cause.code
        : 'network error'
  return retryable(
    failure(
      'MODEL_CALL_FAILED',
      `the model endpoint ${origin} cannot be reached (${code}, after ${n} attempt(s))`,
      dataOf(ctx, n, { error: code })
    )
  )
}

/** The API key of a call (read at each call), or the failure of a named variable that is not set. */
const keyOf = (options: HttpModelOptions, origin: string | null): string | undefined => {
  const env = options.env ?? process.env
  const key = options.apiKeyEnv === undefined ? undefined : env[options.apiKeyEnv]
  if (options.apiKeyEnv !== undefined && (key === undefined || key === '')) {
    throw new FailureError(
      failure('MODEL_CALL_FAILED', `environment variable ${options.apiKeyEnv} (the model's api_key_env) is not set`, {
        api_key_env: options.apiKeyEnv,
        endpoint: origin
      })
    )
  }
  return key
}

/**
 * A model behind an OpenAI-compatible chat-completions endpoint (see the module comment for the
 * retry policy). Failures: MODEL_HTTP_ERROR (an HTTP error status, or an answer that is not a
 * chat completion) and MODEL_CALL_FAILED (no answer: refused, reset, timed out, no key), each with
 * `status`, `attempts`, `endpoint` (the origin) and, when the provider sent one, `retry_after_ms`.
 * The policy's time, waits and jitter come from `clock` (the machine's; a test passes its own).
 */
export const httpModel = (options: HttpModelOptions, clock: RetryClock = systemClock): ModelFn => {
  const origin = originOf(chatCompletionsUrl(options.url))
  const timeoutMs = options.timeoutMs ?? HTTP_MODEL_DEFAULTS.timeoutMs
  const maxAttempts = options.maxAttempts ?? HTTP_MODEL_DEFAULTS.maxAttempts
  const maxTotalMs = options.maxTotalMs ?? HTTP_MODEL_DEFAULTS.maxTotalMs
  const backoffMs = options.backoffMs ?? HTTP_MODEL_DEFAULTS.backoffMs
  const temperature = options.temperature ?? HTTP_MODEL_DEFAULTS.temperature
  const jsonMode = options.jsonMode === true
  const parameters = { temperature, max_tokens: options.maxTokens ?? null, json_mode: jsonMode }

  return async ({ prompt, stablePrefix, signal }): Promise<ModelAnswer> => {
    const key = keyOf(options, origin)
    const sdk = await loadSdk()
    const started = clock.now()
    const deadline = AbortSignal.timeout(maxTotalMs)
    const ctx: CallContext = { origin, key, parameters, timeoutMs, maxTotalMs, signal, deadline, sdk, clock }
    const client = clientFor(options, ctx)
    const rest = prompt.startsWith(stablePrefix) ? prompt.slice(stablePrefix.length).replace(/^\n/, '') : prompt
    const body = {
      model: options.model,
      messages: [
        { role: 'system' as const, content: stablePrefix },
        { role: 'user' as const, content: rest }
      ],
      temperature,
      ...optional('max_tokens', options.maxTokens),
      ...(jsonMode ? { response_format: { type: 'json_object' as const } } : {})
    }
    const stop = AbortSignal.any([signal, deadline])
    const tell = options.onAttempt ?? (() => undefined)
    const attempt = async (n: number): Promise<ModelAnswer | AttemptFailure> => {
      tell({ kind: 'sent', attempt: n, of: maxAttempts, elapsed_ms: clock.now() - started })
      const perAttempt = AbortSignal.timeout(timeoutMs)
      try {
        const completion: unknown = await client.chat.completions.create(body, {
          signal: AbortSignal.any([stop, perAttempt]),
          timeout: timeoutMs
        })
        return answerOf(completion, n, ctx)
      } catch (e) {
        return attemptFailureOf(e, n, perAttempt, ctx)
      }
    }
    for (let n = 1; ; n++) {
      const r = await attempt(n)
      if (!('failure' in r)) {
        tell({ kind: 'answered', attempt: n, of: maxAttempts, elapsed_ms: clock.now() - started })
        return r
      }
      // Exponential backoff with full jitter, or what the provider asked for; never past the total bound.
      const step = nextStep(
        { attempt: n, retry: r.retry, retryAfterMs: r.retryAfterMs, elapsedMs: clock.now() - started },
        { maxAttempts, maxTotalMs, backoffMs },
        clock.random
      )
      const status = r.failure.data['status']
      tell({
        kind: 'failed',
        attempt: n,
        of: maxAttempts,
        elapsed_ms: clock.now() - started,
        status: typeof status === 'number' ? status : null,
        code: r.failure.code,
        message: r.failure.message,
        wait_ms: step.kind === 'stop' ? null : step.ms
      })
      if (step.kind === 'stop') throw new FailureError(r.failure)
      await clock.sleep(step.ms, stop)
      if (signal.aborted) throw cancelled(ctx, n)
    }
  }
}
