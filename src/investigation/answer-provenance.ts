/** What the loop records of a model's answer: its provenance, checked and bounded. */
import type { ModelProvenance } from '../events/model-provenance.js'
import type { ModelAnswer, ModelAnswerInfo } from './model-fn.js'

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
