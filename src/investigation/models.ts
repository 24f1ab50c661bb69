/**
 * Model functions for controllers that do not bring their own: a command run once per turn (the
 * prompt on stdin, the answer on stdout), and an OpenAI-compatible chat-completions endpoint (as
 * served by llama.cpp, vLLM, Ollama and hosted providers), with the stable prefix as the system
 * message so providers can cache it. A failure throws a coded failure; the loop records it.
 * API keys are read from the environment when the call is made and never written anywhere.
 */
import { spawn } from 'node:child_process'
import { failure } from '../domain/failure.js'
import { FailureError } from '../adapters/fs-util.js'
import type { ModelFn } from './loop.js'

/** Options of {@link commandModel}. */
export interface CommandModelOptions {
  /** Kill the command after this long (default 5 minutes). */
  readonly timeoutMs?: number
  /** Largest answer accepted, in bytes (default 1 MiB). */
  readonly maxAnswerBytes?: number
  /** Extra environment for the command. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

const fail = (code: 'MODEL_COMMAND_FAILED' | 'MODEL_HTTP_ERROR' | 'MODEL_CALL_FAILED', message: string, data: Record<string, unknown> = {}): never => {
  throw new FailureError(failure(code, message, data))
}

/**
 * A model that runs `command` through the shell once per turn: the prompt on its stdin, its stdout
 * is the answer. `VBA_TURN` and `VBA_PHASE` are set for it. A non-zero exit, a signal or a timeout
 * is MODEL_COMMAND_FAILED (with the end of its stderr).
 */
export const commandModel = (command: string, options: CommandModelOptions = {}): ModelFn => async ({ prompt, turn, phase, signal }) => {
  const timeoutMs = options.timeoutMs ?? 300_000
  const max = options.maxAnswerBytes ?? 1 << 20
  return new Promise<string>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env, VBA_TURN: String(turn), VBA_PHASE: phase } })
    const out: Buffer[] = []
    let outBytes = 0
    let err = ''
    let settled = false
    const finish = (f: () => void): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      f()
    }
    const onAbort = (): void => {
      child.kill('SIGTERM')
      finish(() => reject(new FailureError(failure('MODEL_CALL_CANCELLED', 'the controller cancelled the model call'))))
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      finish(() => reject(new FailureError(failure('MODEL_COMMAND_FAILED', `the model command did not answer within ${timeoutMs} ms`, { timeout_ms: timeoutMs }))))
    }, timeoutMs)
    signal.addEventListener('abort', onAbort)
    child.stdout.on('data', (d: Buffer) => {
      outBytes += d.length
      if (outBytes > max) {
        child.kill('SIGKILL')
        finish(() => reject(new FailureError(failure('MODEL_COMMAND_FAILED', `the model command answered more than ${max} bytes`))))
      } else out.push(d)
    })
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d.toString('utf8')).slice(-2000)
    })
    child.on('error', (e) => finish(() => reject(new FailureError(failure('MODEL_COMMAND_FAILED', `the model command could not run (${(e as NodeJS.ErrnoException).code ?? 'error'})`)))))
    child.on('close', (code, sig) => {
      if (code === 0) finish(() => resolve(Buffer.concat(out).toString('utf8')))
      else finish(() => reject(new FailureError(failure('MODEL_COMMAND_FAILED', `the model command ${sig === null ? `exited with ${String(code)}` : `was killed by ${sig}`}${err.trim() === '' ? '' : `: ${err.trim().slice(-300)}`}`, { exit_code: code, signal: sig }))))
    })
    // A command that does not read its stdin must not fail the call with EPIPE.
    child.stdin.on('error', () => undefined)
    child.stdin.end(prompt)
  })
}

/** Options of {@link httpModel}. */
export interface HttpModelOptions {
  /** The endpoint: a base URL (`http://127.0.0.1:8080/v1`) or the full `/chat/completions` URL. */
  readonly url: string
  /** The model name the endpoint serves. */
  readonly model: string
  /** The name of the environment variable holding the API key (read at each call; optional for local servers). */
  readonly apiKeyEnv?: string
  readonly timeoutMs?: number
  readonly temperature?: number
  readonly maxTokens?: number
  /** Where `apiKeyEnv` is looked up (default process.env). */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** The chat-completions URL of an endpoint given as a base URL or as the full URL. */
export const chatCompletionsUrl = (url: string): string => {
  const u = new URL(url)
  if (!u.pathname.endsWith('/chat/completions')) u.pathname = `${u.pathname.replace(/\/$/, '')}/chat/completions`
  return u.toString()
}

/**
 * A model behind an OpenAI-compatible chat-completions endpoint. The stable part of the prompt is
 * the system message (cacheable), the rest the user message. HTTP errors are MODEL_HTTP_ERROR with
 * the status; network errors and timeouts MODEL_CALL_FAILED. The key never appears in a failure.
 */
export const httpModel = (options: HttpModelOptions): ModelFn => {
  const endpoint = chatCompletionsUrl(options.url)
  return async ({ prompt, stablePrefix, signal }) => {
    const env = options.env ?? process.env
    const key = options.apiKeyEnv === undefined ? undefined : env[options.apiKeyEnv]
    if (options.apiKeyEnv !== undefined && (key === undefined || key === '')) fail('MODEL_CALL_FAILED', `environment variable ${options.apiKeyEnv} (the model's api_key_env) is not set`, { api_key_env: options.apiKeyEnv })
    const rest = prompt.startsWith(stablePrefix) ? prompt.slice(stablePrefix.length).replace(/^\n/, '') : prompt
    const body = {
      model: options.model,
      messages: [{ role: 'system', content: stablePrefix }, { role: 'user', content: rest }],
      temperature: options.temperature ?? 0,
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens })
    }
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 300_000)
    let res: Response
    try {
      res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, timeout])
      })
    } catch (e) {
      if (signal.aborted) throw new FailureError(failure('MODEL_CALL_CANCELLED', 'the controller cancelled the model call'))
      return fail('MODEL_CALL_FAILED', timeout.aborted ? `the model endpoint did not answer within ${options.timeoutMs ?? 300_000} ms` : `the model endpoint cannot be reached (${(e as { cause?: { code?: string } }).cause?.code ?? 'network error'})`, { url: endpoint })
    }
    const text = await res.text().catch(() => '')
    if (!res.ok) return fail('MODEL_HTTP_ERROR', `the model endpoint answered HTTP ${res.status}${text === '' ? '' : `: ${text.replace(/\s+/g, ' ').slice(0, 200)}`}`, { status: res.status, url: endpoint })
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      return fail('MODEL_HTTP_ERROR', 'the model endpoint answered with something that is not JSON', { status: res.status })
    }
    const content = (parsed as { choices?: Array<{ message?: { content?: unknown } }> }).choices?.[0]?.message?.content
    if (typeof content !== 'string') return fail('MODEL_HTTP_ERROR', 'the model endpoint\'s answer has no choices[0].message.content', { status: res.status })
    return content
  }
}
