/**
 * The controller's model, as the loop calls it: one request in (the prompt, its stable prefix,
 * the turn, the phase, an abort signal), the raw answer out: a string, or a {@link ModelAnswer}
 * that also says which model answered at what cost (recorded with the answer). It may throw; a
 * thrown coded failure (a provider's 429 after its retries, a refused connection) is recorded as
 * a failed model call, and an abort by the controller is its own outcome (nothing recorded).
 * Types only: the entries export the whole module as the model contract; what the loop records of
 * an answer is answer-provenance.ts.
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
  /**
   * Aborted when the controller stops the loop: the loop stops waiting for this call at once (its
   * request stays recorded without an answer; no failure is recorded), and ignores what it later
   * returns or throws. Honour it to stop the provider's work too.
   */
  readonly signal: AbortSignal
}

/**
 * What a model function may say about the answer it returns (the loop measures the latency itself).
 * @category Models
 */
export interface ModelAnswerInfo {
  /** The model name as the provider reported it. */
  readonly model?: string | null | undefined
  /** The endpoint's origin (`https://host:443`); anything after the origin is dropped. */
  readonly endpoint?: string | null | undefined
  readonly parameters?: ModelParameters | null | undefined
  /** Token usage exactly as the provider reported it. */
  readonly usage?: ModelUsage | null | undefined
  readonly finishReason?: string | null | undefined
  /** Requests sent for this answer, retries included (default 1). */
  readonly attempts?: number | undefined
  /** `http`, `command`, or `function` (default). */
  readonly kind?: ModelProvenance['kind'] | undefined
  readonly program?: string | null | undefined
  readonly exitStatus?: number | null | undefined
}

/** An answer with what the model function knows about it. @category Models */
export interface ModelAnswer {
  readonly text: string
  readonly info?: ModelAnswerInfo | undefined
}

/**
 * The controller's model: one request in, the raw answer out (a string, or a {@link ModelAnswer}).
 * It may throw (recorded as a failed call); resolving to anything else is refused (INVALID_ARGUMENT, nothing recorded).
 * @category Models
 */
export type ModelFn = (request: ModelRequest) => Promise<string | ModelAnswer>
