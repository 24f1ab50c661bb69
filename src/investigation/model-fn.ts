/**
 * The controller's model, as the loop calls it: one request in (the prompt, its stable prefix,
 * the turn, the phase, an abort signal), the raw answer out: a string, or a {@link ModelAnswer}
 * that also says which model answered at what cost (recorded with the answer). It may throw; a
 * thrown coded failure (a provider's 429 after its retries, a refused connection) is recorded as
 * a failed model call, and an abort by the controller is its own outcome (nothing recorded).
 */
import type { ModelProvenance, ModelUsage, ModelParameters } from '../events/model-provenance.js'

export type { ModelProvenance, ModelUsage, ModelParameters } from '../events/model-provenance.js'

/** What the model function receives for one turn. @category Models */
export interface ModelRequest {
  /** The whole prompt (it starts with `stablePrefix`). */
  readonly prompt: string
  /** The stable part of the prompt (contract and settings), byte-identical across turns: providers may cache it. */
  readonly stablePrefix: string
  readonly turn: number
  readonly phase: 'interpretation' | 'investigation'
  /** Aborted when the controller stops the loop: the call is cancelled and nothing is recorded for it. */
  readonly signal: AbortSignal
}

/**
 * What a model function may say about the answer it returns (the loop measures the latency itself).
 * @category Models
 */
export interface ModelAnswerInfo {
  /** The model name as the provider reported it. */
  readonly model?: string | null
  /** The endpoint's origin (`https://host:443`); anything after the origin is dropped. */
  readonly endpoint?: string | null
  readonly parameters?: ModelParameters | null
  /** Token usage exactly as the provider reported it. */
  readonly usage?: ModelUsage | null
  readonly finishReason?: string | null
  /** Requests sent for this answer, retries included (default 1). */
  readonly attempts?: number
  /** `http`, `command`, or `function` (default). */
  readonly kind?: ModelProvenance['kind']
  readonly program?: string | null
  readonly exitStatus?: number | null
}

/** An answer with what the model function knows about it. @category Models */
export interface ModelAnswer {
  readonly text: string
  readonly info?: ModelAnswerInfo
}

/**
 * The controller's model: one request in, the raw answer out (a string, or a {@link ModelAnswer}). It may throw.
 * @category Models
 */
export type ModelFn = (request: ModelRequest) => Promise<string | ModelAnswer>

/** The origin of a URL (`scheme://host:port`), or null when it is not a URL: no path, query, user or password. */
export const originOf = (url: string): string | null => {
  try {
    const u = new URL(url)
    const port = u.port !== '' ? u.port : u.protocol === 'https:' ? '443' : u.protocol === 'http:' ? '80' : ''
    return `${u.protocol}//${u.hostname}${port === '' ? '' : `:${port}`}`
  } catch {
    return null
  }
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null)

/**
 * The provenance recorded for an answer: what the model function said (checked and bounded), the
 * latency the loop measured. Anything malformed is recorded as unknown (null), never trusted.
 */
export const provenanceOf = (
  answer: string | ModelAnswer,
  latencyMs: number
): { readonly text: string; readonly provenance: ModelProvenance } => {
  const info: ModelAnswerInfo = typeof answer === 'string' ? {} : (answer.info ?? {})
  const text = typeof answer === 'string' ? answer : answer.text
  const str = (v: unknown, max = 200): string | null => (typeof v === 'string' ? v.slice(0, max) : null)
  const p = info.parameters ?? null
  const u = info.usage ?? null
  return {
    text,
    provenance: {
      kind: info.kind === 'http' || info.kind === 'command' ? info.kind : 'function',
      model: str(info.model),
      endpoint: typeof info.endpoint === 'string' ? originOf(info.endpoint) : null,
      parameters:
        p === null || typeof p !== 'object'
          ? null
          : {
              temperature: typeof p.temperature === 'number' && Number.isFinite(p.temperature) ? p.temperature : null,
              max_tokens:
                typeof p.max_tokens === 'number' && Number.isSafeInteger(p.max_tokens) && p.max_tokens > 0
                  ? p.max_tokens
                  : null,
              json_mode: p.json_mode === true
            },
      usage:
        u === null || typeof u !== 'object'
          ? null
          : {
              prompt_tokens: count(u.prompt_tokens),
              completion_tokens: count(u.completion_tokens),
              total_tokens: count(u.total_tokens)
            },
      finish_reason: str(info.finishReason, 64),
      latency_ms: Math.max(0, Math.round(latencyMs)),
      attempts:
        typeof info.attempts === 'number' && Number.isSafeInteger(info.attempts) && info.attempts > 0
          ? info.attempts
          : 1,
      program: str(info.program, 200),
      exit_status: typeof info.exitStatus === 'number' && Number.isSafeInteger(info.exitStatus) ? info.exitStatus : null
    }
  }
}
