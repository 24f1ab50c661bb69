/**
 * The request of a turn, as the loop and an MCP agent's decisions record it: the prompt of the
 * next turn rendered from the case's state by the renderer of its prompt version, and the
 * RequestModel decision that records it (ModelRequested with the prompt's bytes as its object).
 * The prompt is rendered from exactly that state, so the caller appends the decision with the
 * state's generation expected: a case that moved meanwhile is a conflict, never re-decided.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../failures/failure.js'
import { command, decide } from '../domain/decider.js'
import type { CaseState } from '../domain/case-state.js'
import type { EventDraft } from '../events/chain.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import { renderPrompt, type RenderedPrompt } from '../projections/prompt.js'
import type { Decided } from '../commands/run.js'
import { promptInputs } from './prompt-inputs.js'

/** The next turn of a case: its number, phase and prompt, and the decision that requests it. */
export interface NextTurn {
  readonly turn: number
  readonly phase: 'interpretation' | 'investigation'
  readonly prompt: RenderedPrompt
  readonly decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>
}

/** The request of the turn after `s` (the state of `handle`, whose objects the prompt reads). */
export const turnRequest = async (handle: CaseHandle, s: CaseState): Promise<NextTurn> => {
  const turn = s.turn + 1
  const phase = s.state === 'INTERPRETING' ? ('interpretation' as const) : ('investigation' as const)
  const prompt = renderPrompt(s, await promptInputs(handle, s))
  const promptBytes = Buffer.from(prompt.text, 'utf8')
  const request = {
    turn,
    phase,
    prompt: objectRefOf(promptBytes, 'text/plain'),
    promptVersion: prompt.version,
    promptChars: prompt.text.length
  }
  return {
    turn,
    phase,
    prompt,
    decide: (st, now) =>
      E.map((events: readonly EventDraft[]) =>
        events.some((e) => e.type === 'ModelRequested') ? { events, objects: [promptBytes] } : { events }
      )(decide(command('RequestModel', request, now), st))
  }
}
