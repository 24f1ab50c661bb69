/**
 * The prompt view: the next model prompt, rendered deterministically from the folded case state
 * and the objects the log references (the report, the facts object, the captures). Nothing else is
 * read: no profile, no clock, no provider, so the same log renders the same bytes anywhere.
 *
 * Each investigation renders with the prompt version its start recorded (`prompt_version` in
 * InvestigationStarted): an investigation keeps the contract it started with, and every recorded
 * prompt can be rendered again by the renderer of its version.
 */
import type { Capture } from '../events/capture.js'
import type { Fact } from '../domain/facts-document.js'
import type { CaseState } from '../domain/case-state.js'
import { renderPromptV1, stablePartV1 } from './prompt-v1/render.js'
import { factLinesV1 } from './prompt-v1/facts.js'
import { renderPromptV2, type RenderMemoV2 } from './prompt-v2/render.js'
import { stablePartV2 } from './prompt-v2/contract.js'

export interface PromptInputs {
  /** The bug report of the latest revision (empty before there is one). */
  readonly report: string
  /** The facts of the latest completed revision (empty before there are any). */
  readonly facts: readonly Fact[]
  /** Captures by object digest: every capture the case's evidence references. */
  readonly captures: ReadonlyMap<string, Capture>
}

/**
 * A rendered prompt: the text, its stable prefix, the prompt version and what the guard cut.
 * @category investigations
 */
export interface RenderedPrompt {
  readonly text: string
  /** The stable part the text starts with (byte-identical across the turns of one investigation). */
  readonly stable: string
  readonly version: string
  /** What the guard cut, in words (empty when nothing was cut). */
  readonly cut: readonly string[]
  /** The text in runs, when the renderer made it so: joined with LF they are `text`. */
  readonly pieces?: readonly string[]
}

const isV1 = (s: CaseState): boolean => s.settings?.prompt_version === 'investigation_project_v1'

/** The stable part of the prompt of this investigation (its contract and settings). */
export const stablePart = (s: CaseState): string => (isV1(s) ? stablePartV1(s) : stablePartV2(s))

/**
 * Renders the next prompt with the renderer of the investigation's prompt version: version 2
 * (prompt-v2/render.ts) for investigations started with settings version 2, the frozen version 1
 * (prompt-v1/render.ts) for those started before. `memo`: what the prompts of the same case
 * made before, for a caller that renders many of them from snapshots of its state (verify).
 */
export const renderPrompt = (s: CaseState, inputs: PromptInputs, memo?: RenderMemoV2): RenderedPrompt =>
  isV1(s)
    ? renderPromptV1(s, { report: inputs.report, facts: factLinesV1(inputs.facts), captures: inputs.captures })
    : renderPromptV2(s, inputs, memo)
