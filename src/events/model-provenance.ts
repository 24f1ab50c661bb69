/**
 * Which model answered, and at what cost: recorded with every answer (ModelResponded version 2),
 * so a reviewer can tell which model concluded a case and what it spent. Everything here is what
 * the model client observed: the model name as the endpoint reported it (not as it was asked
 * for), the endpoint's origin (scheme, host and port: never a path, a query string or a key), the
 * request parameters, the token usage exactly as the provider reported it, the finish reason and
 * the latency; a command model records its program name and exit status.
 */
import * as t from 'io-ts'
import { NonNegativeInt, PositiveInt } from './codecs.js'
import { Requester } from './requester.js'

const Nullable = <C extends t.Mixed>(c: C) => t.union([c, t.null])

/** Token usage as the provider reported it (a count it did not report is null). @category Models */
export const ModelUsage = t.type(
  {
    prompt_tokens: Nullable(NonNegativeInt),
    completion_tokens: Nullable(NonNegativeInt),
    total_tokens: Nullable(NonNegativeInt)
  },
  'ModelUsage'
)
export type ModelUsage = t.TypeOf<typeof ModelUsage>

/** The parameters the request was sent with. @category Models */
export const ModelParameters = t.type(
  {
    temperature: Nullable(t.number),
    max_tokens: Nullable(PositiveInt),
    json_mode: t.boolean
  },
  'ModelParameters'
)
export type ModelParameters = t.TypeOf<typeof ModelParameters>

/** @category Models */
export const ModelProvenance = t.intersection(
  [
    t.type({
      /** How the answer was obtained: an HTTP endpoint, a command, the controller's own function, or an agent over MCP. */
      kind: t.keyof({ http: null, command: null, function: null, mcp: null }),
      /** The model name as the endpoint reported it (or as the controller's function said). */
      model: Nullable(t.string),
      /** The endpoint's origin, `scheme://host:port`. */
      endpoint: Nullable(t.string),
      parameters: Nullable(ModelParameters),
      usage: Nullable(ModelUsage),
      finish_reason: Nullable(t.string),
      /** Wall time of the call, retries included. */
      latency_ms: NonNegativeInt,
      /** Requests sent for this answer (retries after 429, 5xx, timeouts and resets included). */
      attempts: PositiveInt,
      /** A command model's program name (the first word of its command line, without a path). */
      program: Nullable(t.string),
      exit_status: Nullable(t.number)
    }),
    /** An agent's decision through `vba mcp` (kind mcp): the client as it named itself in its initialize request. */
    t.partial({ requester: Requester })
  ],
  'ModelProvenance'
)
export type ModelProvenance = t.TypeOf<typeof ModelProvenance>

/** The tokens one answer spent: the reported total, else prompt plus completion, else 0. */
export const tokensOf = (usage: ModelUsage | null): number => {
  if (usage === null) return 0
  if (usage.total_tokens !== null) return usage.total_tokens
  return (usage.prompt_tokens ?? 0) + (usage.completion_tokens ?? 0)
}
