/**
 * Decisions derive from answers (rule `turn.derived`): the events recorded with a model's answer
 * must be exactly what the lifecycle deciders make of the recorded raw answer in the state before
 * it, at the time the command records. A conclusion after an answer that asked for a lab test,
 * said "I refuse" or cited E99, or a valid answer recorded as rejected, breaks it. Rejections are
 * compared by their code and count, not their wording (a later library may word them otherwise).
 * Pure: the raw answer is read through the obligation's `read`.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { EventDraft } from '../../events/chain.js'
import { canonicalJson, sameCanonicalJson } from '../../events/canonical.js'
import { decideAnswer } from '../answer-decider.js'
import type { DecisionObligation } from './context.js'

const comparable = (e: Pick<EventDraft, 'type' | 'actor' | 'data'>): unknown => {
  if (e.type !== 'ModelResponseRejected') return { type: e.type, actor: e.actor, data: e.data }
  const d = e.data as { turn?: unknown; code?: unknown; consecutive?: unknown }
  return { type: e.type, actor: e.actor, data: { turn: d.turn, code: d.code, consecutive: d.consecutive } }
}

/** UTF-8 as the raw answers are stored (a decoder holds no state between whole decodes). */
const utf8 = new TextDecoder('utf-8')

const text = (bytes: Uint8Array, mediaType: string | undefined): string =>
  (mediaType ?? '').includes('utf-16le') ? Buffer.from(bytes).toString('utf16le') : utf8.decode(bytes)

/** Why the recorded decision is not what the deciders make of the answer, or null. */
export const decisionProblem = (ob: DecisionObligation, bytes: Uint8Array): string | null => {
  const derived = decideAnswer(
    ob.state,
    { turn: ob.turn, raw: text(bytes, ob.ref.media_type), planId: `P${ob.turn}` },
    new Date(ob.at)
  )
  if (E.isLeft(derived)) return `the deciders refuse this answer (${derived.left.code}), but a decision was recorded`
  const wanted = derived.right.map(comparable)
  const decided = ob.decided.map(comparable)
  // Equal member for member: the same canonical text, without making it (else the texts decide).
  if (sameCanonicalJson(wanted, decided)) return null
  const want = canonicalJson(wanted)
  const got = canonicalJson(decided)
  if (E.isRight(want) && E.isRight(got) && want.right === got.right) return null
  const types = derived.right.map((e) => e.type).join(', ')
  const recorded = ob.decided.map((e) => e.type).join(', ')
  return types === recorded
    ? `the answer of turn ${ob.turn} decides ${types} with other data than recorded`
    : `the answer of turn ${ob.turn} decides ${types || 'nothing'}, but ${recorded || 'nothing'} was recorded`
}
