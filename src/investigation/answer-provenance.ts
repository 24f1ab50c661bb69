/** What the loop records of a model's answer: its provenance, checked and bounded, and the answer itself, bounded. */
import type { ModelProvenance } from '../events/model-provenance.js'
import { hasLoneSurrogate } from '../domain/answer-decider.js'
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

/**
 * The most an answer may take as stored bytes (1 MiB): a longer one is cut to it before it is
 * recorded (finish reason `length`), whatever model gave it. The deciders reject any answer over
 * 200,000 characters (MODEL_ANSWER_TOO_LARGE), and every cut answer is over that, so a cut answer
 * is rejected as its whole would have been; only what is stored is bounded.
 */
export const MAX_ANSWER_BYTES = 1 << 20

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff

/** The first `units` UTF-16 units of `text`, without splitting a surrogate pair. */
const unitsPrefix = (text: string, units: number): string =>
  text.length <= units
    ? text
    : text.slice(0, isHigh(text.charCodeAt(units - 1)) && !isHigh(text.charCodeAt(units)) ? units - 1 : units)

/**
 * `text` cut so that it takes at most `maxBytes` as the loop stores it (UTF-8, or UTF-16LE when it
 * holds lone surrogates), at a character's boundary; null when it fits as it is.
 */
export const cutAnswer = (text: string, maxBytes: number = MAX_ANSWER_BYTES): string | null => {
  if (text.length * 3 <= maxBytes) return null
  let head = text
  if (hasLoneSurrogate(head)) {
    if (head.length * 2 <= maxBytes) return null
    head = unitsPrefix(head, Math.floor(maxBytes / 2))
    if (hasLoneSurrogate(head)) return head
  } else if (Buffer.byteLength(head, 'utf8') <= maxBytes) return null
  const bytes = Buffer.from(unitsPrefix(head, maxBytes), 'utf8')
  if (bytes.length <= maxBytes) return bytes.toString('utf8')
  let end = maxBytes
  // A continuation byte at the cut: the character it belongs to starts before it and is left out.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--
  return bytes.subarray(0, end).toString('utf8')
}

/**
 * What the operator learns of an answer cut before it was stored: the size the model gave, which
 * the recorded rejection (decided from the stored prefix, and re-derived from it by verify) cannot
 * tell. `whole` is the answer as the model gave it, `kept` the prefix stored.
 */
export const wholeAnswerNote = (whole: string, kept: string): string => {
  const bytes = hasLoneSurrogate(whole) ? whole.length * 2 : Buffer.byteLength(whole, 'utf8')
  return `the model's whole answer has ${whole.length} characters (${bytes} bytes); only its first ${kept.length} characters are stored`
}
