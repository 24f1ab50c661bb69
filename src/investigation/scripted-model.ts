/**
 * A scripted model for tests and the demo: no network, no paid calls. Each step is a fixed answer
 * or a function of the prompt (to cite evidence ids the prompt shows). It records every prompt.
 */
import type { ModelFn } from './loop.js'

/** A fixed answer, a function of the prompt, or an error the model function throws. @category Models */
export type ScriptStep = string | ((prompt: string) => string) | Error

/** @category Models */
export interface ScriptedModel {
  readonly model: ModelFn
  readonly prompts: string[]
  /** Steps not used yet. */
  readonly remaining: () => number
}

/** @category Models */
export const scriptedModel = (steps: readonly ScriptStep[]): ScriptedModel => {
  const prompts: string[] = []
  let i = 0
  return {
    prompts,
    remaining: () => steps.length - i,
    model: async ({ prompt }) => {
      prompts.push(prompt)
      const step = steps[i++]
      if (step === undefined) throw new Error(`the script has no answer for turn ${i}`)
      if (step instanceof Error) throw step
      return typeof step === 'string' ? step : step(prompt)
    }
  }
}

/** The evidence id of the latest result shown in a prompt (e.g. "E3"), or null. @category Models */
export const latestEvidence = (prompt: string): string | null =>
  /Latest result (E\d+)/.exec(prompt)?.[1] ?? /Latest result: (E\d+)/.exec(prompt)?.[1] ?? null
