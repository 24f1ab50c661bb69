/**
 * Which models answered a case and what they spent, from its log: the model of the latest answer
 * (as its provider reported it), the tokens of every answer that reported usage, and the failure
 * of the model that the case still waits on. For the report and other read-side views.
 */
import type { RecordedEvent } from '../events/chain.js'
import { tokensOf } from '../events/model-provenance.js'

export interface ModelUsageView {
  /** Distinct model names in order of first answer (null names left out). */
  readonly models: readonly string[]
  readonly last: { readonly kind: string; readonly model: string | null; readonly endpoint: string | null } | null
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number }
  readonly answers: number
  readonly answersWithUsage: number
  /** The latest failed model call not followed by an answer. */
  readonly failure: { readonly turn: number; readonly code: string; readonly message: string } | null
}

export const modelUsage = (events: readonly RecordedEvent[]): ModelUsageView => {
  const models: string[] = []
  let last: ModelUsageView['last'] = null
  let prompt = 0
  let completion = 0
  let total = 0
  let answers = 0
  let withUsage = 0
  let failure: ModelUsageView['failure'] = null
  for (const e of events) {
    if (e.type === 'ModelFailed') failure = { turn: e.data.turn, code: e.data.code, message: e.data.message }
    if (e.type !== 'ModelResponded') continue
    answers++
    failure = null
    const p = e.data.provenance
    if (p === null) continue
    last = { kind: p.kind, model: p.model, endpoint: p.endpoint }
    if (p.model !== null && !models.includes(p.model)) models.push(p.model)
    if (p.usage !== null) {
      withUsage++
      prompt += p.usage.prompt_tokens ?? 0
      completion += p.usage.completion_tokens ?? 0
      total += tokensOf(p.usage)
    }
  }
  return { models, last, tokens: { prompt, completion, total }, answers, answersWithUsage: withUsage, failure }
}
