/**
 * The hybrid investigation loop. The embedding controller passes a model function; this module
 * builds the prompt from the log, records the exchange, decides what the answer means with the
 * lifecycle deciders, carries out confirmed plans through ProjectResearch, and appends every step
 * atomically through the case's rules. It never calls a model on its own: `model` is the
 * controller's, and tests use a scripted one. A model function that throws is recorded as a
 * failed model call (the case waits as MODEL_UNAVAILABLE), never an exception out of `advance`;
 * one that returns something other than an answer is the controller's bug: INVALID_ARGUMENT out of
 * `advance`, nothing recorded for it.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { hasLoneSurrogate } from '../domain/answer-decider.js'
import { command, decide } from '../domain/decider.js'
import { isUnavailable } from '../domain/research-failures.js'
import type { CaseState } from '../domain/case-state.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { renderPrompt, type RenderedPrompt } from '../projections/prompt.js'
import { requestText } from '../projections/request-text.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { CaseAt, Lease } from '../adapters/case-store/store.js'
import type { AppendOutcome } from '../adapters/case-store/append.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import { FailureError, must } from '../failures/error.js'
import { systemEnv, type Env } from '../adapters/env.js'
import type { ProjectResearch } from '../research/project-research.js'
import { captureBytes } from '../research/capture.js'
import { CAPTURE_MEDIA_TYPE } from '../commands/case-query.js'
import { asDecided, decideAndAppend, deciding, openAt, sameJson, type Decided } from '../commands/run.js'
import { resultOf, type AdvanceResult } from '../commands/lifecycle-commands.js'
export type { AdvanceResult, StartOptions } from '../commands/lifecycle-commands.js'
import { promptInputs } from './prompt-inputs.js'
import { turnRequest } from './turn-request.js'
import { resumesByTime, runnableAfterRetry } from '../domain/blocks.js'
import type { ModelAnswer, ModelFn } from './model-fn.js'
import { modelFailureOf, notAnAnswer, untilAborted } from './model-call.js'
import { cutAnswer, provenanceOf, wholeAnswerNote } from './answer-provenance.js'
import { tokensOf } from '../events/model-provenance.js'
import { checkMaxTurns, DEFAULT_MAX_TURNS } from './loop-options.js'
import { optional } from '../optional.js'
export type { ModelFn, ModelRequest, ModelAnswer, ModelAnswerInfo } from './model-fn.js'

/**
 * Renders the next prompt from the log and the objects it references (no provider needed), as
 * plain data: `text` is an own property (the renderer joins it lazily, for verify; a caller
 * serialises, spreads or clones the result), the renderer's pieces are left out.
 */
export const nextPrompt = async (at: CaseAt): Promise<RenderedPrompt> => {
  const handle = await openAt(at)
  const p = renderPrompt(handle.cursor.state, await promptInputs(handle, handle.cursor.state))
  return { text: p.text, stable: p.stable, version: p.version, cut: [...p.cut] }
}

/** Progress of `advance`, one call per step (for terminals and logs). @category investigations */
export type AdvanceStep =
  | {
      readonly kind: 'turn'
      readonly turn: number
      readonly phase: 'interpretation' | 'investigation'
      readonly prompt_chars: number
      readonly outcome: string
    }
  | { readonly kind: 'research'; readonly plan_id: string; readonly query_kind: string; readonly outcome: string }
  | { readonly kind: 'resume'; readonly into: string; readonly manual_retry: boolean }

/** @category investigations */
export interface LoopOptions {
  readonly model: ModelFn
  readonly research: ProjectResearch
  readonly env?: Env
  /** Model turns to run at most in this call (default 20). */
  readonly maxTurns?: number
  /** Resume a timed block (or retry research) now, before its retry time; recorded. */
  readonly manualRetry?: boolean
  readonly expectedGeneration?: number
  /** Stops the loop between steps and abandons a model call in flight (it is handed to the model function too). */
  readonly signal?: AbortSignal
  readonly onStep?: (step: AdvanceStep) => void
  /** Append only while this lease on a queued case holds (a worker's advance). */
  readonly lease?: Lease
}

/** The raw answer as bytes: UTF-8, or UTF-16LE when it holds lone surrogates (so nothing is lost). */
const rawAnswerObject = (raw: string): { bytes: Buffer; mediaType: string } =>
  hasLoneSurrogate(raw)
    ? { bytes: Buffer.from(raw, 'utf16le'), mediaType: 'text/plain; charset=utf-16le' }
    : { bytes: Buffer.from(raw, 'utf8'), mediaType: 'text/plain' }

const timedBlock = (s: CaseState): boolean => s.state === 'BLOCKED' && runnableAfterRetry(s.reason)
const retryPending = (s: CaseState, now: Date): boolean =>
  s.retryNotBefore !== null && now.getTime() < Date.parse(s.retryNotBefore)

/**
 * Runs the loop until the case concludes, is exhausted, is blocked, or maxTurns model turns have
 * run. After a restart the stored evidence and the confirmed plan are authoritative: a confirmed
 * plan is carried out before the model is asked again. A case in a timed block whose retry time
 * has not passed is RETRY_NOT_YET, unless `manualRetry` (which applies to that block only, not
 * to blocks the call runs into later).
 */
export const advance = async (at: CaseAt, opts: LoopOptions): Promise<AdvanceResult> => {
  const env = opts.env ?? systemEnv
  const step = opts.onStep ?? (() => undefined)
  const signal = opts.signal ?? new AbortController().signal
  const maxTurns = opts.maxTurns === undefined ? DEFAULT_MAX_TURNS : checkMaxTurns(opts.maxTurns)
  if (typeof opts.model !== 'function')
    throw new FailureError(
      failure('INVALID_ARGUMENT', `model must be a function, not ${opts.model === null ? 'null' : typeof opts.model}`)
    )
  const handle = await openAt(at)
  if (opts.expectedGeneration !== undefined && opts.expectedGeneration !== handle.cursor.seq) {
    throw new FailureError(
      failure(
        'GENERATION_CONFLICT',
        `expected generation ${opts.expectedGeneration}, the case is at ${handle.cursor.seq}`,
        { expected: opts.expectedGeneration, actual: handle.cursor.seq }
      )
    )
  }
  const first = handle.cursor.state
  if (first.state === 'NOT_STARTED')
    throw new FailureError(failure('INVESTIGATION_NOT_STARTED', 'start the investigation first'))
  if (timedBlock(first) && opts.manualRetry !== true && retryPending(first, env.now())) {
    throw new FailureError(
      failure(
        'RETRY_NOT_YET',
        `the case is blocked (${String(first.reason)}) until ${String(first.retryNotBefore)}; advance then, or now with manualRetry (vba investigate --manual-retry)`,
        { reason: first.reason, retry_not_before: first.retryNotBefore }
      )
    )
  }
  // A manual retry resumes the block the case is in now, never one this call runs into.
  const manualFor = opts.manualRetry === true && first.state === 'BLOCKED' ? first.checkpoint : null
  const lease = optional('lease', opts.lease)
  const append = (
    commandId: string,
    decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>,
    expectedGeneration?: number
  ) =>
    decideAndAppend(handle, commandId, decide, {
      env,
      ...lease,
      ...optional('expectedGeneration', expectedGeneration)
    })
  let turns = 0
  for (;;) {
    const s = handle.cursor.state
    if (s.state === 'CONCLUDED' || s.state === 'EXHAUSTED') return resultOf(handle, turns)
    if (signal.aborted) return resultOf(handle, turns, true)
    const manual = s.state === 'BLOCKED' && s.checkpoint === manualFor
    if (s.state === 'BLOCKED') {
      if (resumesByTime(s.reason)) {
        const resumed = decide(command('Resume', { manualRetry: manual }, env.now()), s)
        if (E.isLeft(resumed)) return resultOf(handle, turns)
        await append(`resume-${s.checkpoint + 1}`, () => asDecided(resumed))
        step({ kind: 'resume', into: handle.cursor.state.state, manual_retry: manual })
        continue
      }
      if (s.reason !== 'RESEARCH_UNAVAILABLE') return resultOf(handle, turns)
      if (!manual && retryPending(s, env.now())) return resultOf(handle, turns)
    }
    const plan = s.pendingPlan
    if (plan !== null && plan.reservation !== null) {
      await carryOut(
        handle,
        plan.plan_id,
        plan.reservation,
        plan.arguments,
        opts.research,
        env,
        step,
        opts.lease,
        manual
      )
      // An outage ends this call: the block's retry time (or the next manual retry) says when to try again.
      if (handle.cursor.state.state === 'BLOCKED') return resultOf(handle, turns)
      continue
    }
    if (s.state === 'BLOCKED' || turns >= maxTurns) return resultOf(handle, turns)
    const done = await modelTurn(handle, s, opts.model, signal, append, step, env.elapsed ?? (() => performance.now()))
    if (done === 'cancelled') return resultOf(handle, turns, true)
    if (done === 'asked') turns++
  }
}

type Append = (
  commandId: string,
  decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>,
  expectedGeneration?: number
) => Promise<AppendOutcome>

/**
 * One model turn: the prompt (stored), the model's answer (stored, with which model gave it) and
 * what it means, or the failed call. `exhausted`: the token limit ended the investigation instead;
 * `cancelled`: the controller's signal stopped the call (the request stays unanswered).
 */
const modelTurn = async (
  handle: CaseHandle,
  s: CaseState,
  model: ModelFn,
  signal: AbortSignal,
  append: Append,
  step: (s: AdvanceStep) => void,
  elapsed: () => number
): Promise<'asked' | 'exhausted' | 'cancelled'> => {
  const { turn, phase, prompt, decide: request } = await turnRequest(handle, s)
  // The prompt is rendered from this exact state: a case that moved meanwhile is a conflict, not re-decided.
  await append(`turn-${turn}-request`, request, handle.cursor.seq)
  if (handle.cursor.state.state === 'EXHAUSTED') {
    step({
      kind: 'turn',
      turn,
      phase,
      prompt_chars: prompt.text.length,
      outcome: `token budget spent (${handle.cursor.state.tokens.total} tokens): exhausted`
    })
    return 'exhausted'
  }
  const started = elapsed()
  let answer: string | ModelAnswer
  try {
    answer = await untilAborted(model, { prompt: prompt.text, stablePrefix: prompt.stable, turn, phase, signal })
  } catch (e) {
    // The controller's abort is its own outcome: no answer or failure is recorded, the case stays as it is.
    const f = modelFailureOf(e)
    if (signal.aborted || f.code === 'MODEL_CALL_CANCELLED') {
      step({
        kind: 'turn',
        turn,
        phase,
        prompt_chars: prompt.text.length,
        outcome: `cancelled by the controller: the request of turn ${turn} is recorded, no answer to it (the next run asks again, as turn ${turn + 1})`
      })
      return 'cancelled'
    }
    await append(`turn-${turn}-answer`, deciding('RecordModelFailure', { turn, failure: f }))
    step({
      kind: 'turn',
      turn,
      phase,
      prompt_chars: prompt.text.length,
      outcome: `model call failed: ${f.code}: ${f.message.slice(0, 300)}`
    })
    return 'asked'
  }
  // An answer of another shape is the controller's bug, not the model's outage nor its answer:
  // refused, nothing recorded for it (the request stays unanswered, as after a cancel).
  const wrong = notAnAnswer(answer)
  if (wrong !== null)
    throw new FailureError(
      failure(
        'INVALID_ARGUMENT',
        `the model function returned ${wrong}, not a string or { text: string }: nothing was recorded for turn ${turn}'s answer (fix the model function; the next advance asks again)`,
        { turn }
      )
    )
  const given = provenanceOf(answer, elapsed() - started)
  // What is stored is bounded, whatever model answered: a longer answer is cut (and rejected as too large).
  const cut = cutAnswer(given.text)
  const text = cut ?? given.text
  const provenance = cut === null ? given.provenance : { ...given.provenance, finish_reason: 'length' }
  const raw = rawAnswerObject(text)
  const rawRef = objectRefOf(raw.bytes, raw.mediaType)
  const recorded = await append(
    `turn-${turn}-answer`,
    deciding('RecordAnswer', { turn, raw: text, rawRef, provenance }, [raw.bytes])
  )
  const usage =
    provenance.usage === null ? '' : ` [${provenance.model ?? 'model'}: ${tokensOf(provenance.usage)} tokens]`
  step({
    kind: 'turn',
    turn,
    phase,
    prompt_chars: prompt.text.length,
    // The recorded rejection counts the stored prefix; the size the model gave is told here.
    outcome: `${describeDecision(recorded.events)}${cut === null ? '' : `; ${wholeAnswerNote(given.text, text)}`}${usage}`
  })
  return 'asked'
}

/** What an answer decided, in a few words (for progress lines). */
const describeDecision = (events: readonly { type: string; data: unknown }[]): string => {
  for (const e of events) {
    const d = e.data as Record<string, unknown>
    switch (e.type) {
      case 'InterpretationRecorded':
        return 'interpretation recorded'
      case 'PlanConfirmed': {
        const fromCase = events.find((x) => x.type === 'QueryAnsweredFromCase')?.data as
          | Record<string, unknown>
          | undefined
        return `plan ${String(d['plan_id'])}: ${requestText(String((d['arguments'] as Record<string, unknown>)['kind']), d['arguments'] as Record<string, unknown>).slice(0, 160)}${fromCase === undefined ? '' : `; answered from the case: ${String(fromCase['evidence_id'])} again (no cost)`}`
      }
      case 'HypothesisProposed':
        return `hypothesis ${String(d['hypothesis_id'])} proposed`
      case 'HypothesisUpdated':
        return `hypothesis ${String(d['hypothesis_id'])} ${String(d['status'])}`
      case 'LabTestRequested':
        return `lab test ${String(d['request_id'])} requested; waiting for feedback`
      case 'ConclusionRecorded':
        return 'conclusion'
      case 'ModelResponseRejected':
        return `rejected (${String(d['code'])}): ${String(d['message']).slice(0, 120)}`
      case 'CheckpointRecorded':
        if (d['state'] === 'EXHAUSTED') return 'budget exhausted'
        break
      default:
        break
    }
  }
  return 'recorded'
}

/** Carries out a confirmed plan; its answer is frozen here until it is persisted. */
const carryOut = async (
  handle: CaseHandle,
  planId: string,
  reservation: string,
  args: Record<string, unknown>,
  research: ProjectResearch,
  env: Env,
  step: (s: AdvanceStep) => void,
  lease: Lease | undefined,
  manualRetry: boolean
): Promise<void> => {
  const kind = typeof args['kind'] === 'string' ? args['kind'] : 'project.query'
  const append = (commandId: string, decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>) =>
    decideAndAppend(handle, commandId, decide, { env, ...optional('lease', lease) })
  const answer = await research.query(args)()
  const s = handle.cursor.state
  if (E.isLeft(answer)) {
    const unavailable = isUnavailable(answer.left)
    const id = unavailable ? `plan-${planId}-outage-${s.research.failures + 1}` : `plan-${planId}-record`
    await append(
      id,
      deciding('RecordResearchFailure', { reservationId: reservation, failure: answer.left, unavailable, manualRetry })
    )
    step({
      kind: 'research',
      plan_id: planId,
      query_kind: kind,
      outcome: unavailable ? `unavailable (${answer.left.code})` : `failed (${answer.left.code})`
    })
    return
  }
  // A context started with one source.context contract refuses answers computed with another.
  const ctx = s.settings?.source_context ?? null
  if (
    answer.right.kind === 'source.context' &&
    ctx !== null &&
    !sameJson(answer.right.settings['source_analysis'], ctx)
  ) {
    const refused = failure(
      'CONTEXT_SETTINGS_DIFFER',
      'the source.context settings differ from the ones this investigation started with',
      {}
    )
    await append(
      `plan-${planId}-record`,
      deciding('RecordResearchFailure', {
        reservationId: reservation,
        failure: refused,
        unavailable: false,
        manualRetry
      })
    )
    step({ kind: 'research', plan_id: planId, query_kind: kind, outcome: 'refused (CONTEXT_SETTINGS_DIFFER)' })
    return
  }
  const bytes = captureBytes(answer.right)
  const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
  const requestDigest = sha256Digest(must(canonicalJson(answer.right.request)))
  await append(
    `plan-${planId}-record`,
    deciding(
      'RecordCapture',
      { reservationId: reservation, capture: ref, kind: answer.right.kind, requestDigest, manualRetry },
      [bytes]
    )
  )
  const last = handle.cursor.state.lastResult
  step({
    kind: 'research',
    plan_id: planId,
    query_kind: kind,
    outcome: last?.kind === 'capture' ? `${last.evidence_id}${last.repeat ? ' (repeat)' : ''}` : 'recorded'
  })
}
