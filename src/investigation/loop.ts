/**
 * The hybrid investigation loop. The embedding controller passes a model function (prompt in, raw
 * text out); this module builds the prompt from the log, records the exchange, decides what the
 * answer means with the lifecycle deciders, carries out confirmed plans through ProjectResearch,
 * and appends every step atomically. It never calls a model on its own: `model` is the
 * controller's, and tests use a scripted one.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import { decideAnswer, decideFeedback, decideResearchBlocked, decideResearchResumed, decideResume, decideStart } from '../domain/lifecycle.js'
import { decideRecordCapture, decideRecordFailure } from '../domain/research-decider.js'
import { isUnavailable } from '../domain/research-failures.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { Capture } from '../events/capture.js'
import type { EventDraft } from '../events/chain.js'
import type { InvestigationSettings } from '../events/catalog.js'
import { lifecycleProjection, type LifecycleS } from '../projections/lifecycle.js'
import { renderPrompt, type RenderedPrompt } from '../projections/prompt.js'
import { openCaseWithState, type CaseHandle } from '../adapters/case-store/open.js'
import { appendCommand } from '../adapters/case-store/append.js'
import { objectRefOf, readObject } from '../adapters/case-store/objects.js'
import { FailureError } from '../adapters/fs-util.js'
import { systemEnv, type Env } from '../adapters/env.js'
import type { ProjectResearch } from '../research/project-research.js'
import { captureBytes } from '../research/capture.js'
import { CAPTURE_MEDIA_TYPE } from '../research/case-query.js'
import type { Fact } from '../research/enrich.js'

export type ModelFn = (prompt: string) => Promise<string>

const must = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) throw new FailureError(r.left)
  return r.right
}

const state = async (dir: string): Promise<{ handle: CaseHandle; s: LifecycleS }> => {
  const r = must(await openCaseWithState(dir, lifecycleProjection)())
  return { handle: r.handle, s: r.state }
}

const append = async (handle: CaseHandle, commandId: string, events: EventDraft[], env: Env, objects: Buffer[] = []): Promise<number> =>
  events.length === 0 ? handle.cursor.seq : must(await appendCommand(handle, { commandId, expectedGeneration: handle.cursor.seq, events, objects }, { env })()).generation

/** Compact lines of the facts document for the prompt. */
export const factLines = (facts: readonly Fact[]): string[] =>
  facts.map((f) => {
    switch (f.type) {
      case 'entity': return `  ${f.fact_id} ${f.entity_type} ${f.id} (${f.table}): ${JSON.stringify(f.values).slice(0, 200)}${Object.keys(f.texts).length > 0 ? ` texts: ${Object.entries(f.texts).map(([c, id]) => `${c}→${id}`).join(', ')}` : ''}`
      case 'project_description': return `  ${f.fact_id} ${f.role} of ${f.entity_type} ${f.id} (${f.column}, template text): ${JSON.stringify(f.text.slice(0, 400))}`
      case 'relationship': return `  ${f.fact_id} ${f.relation}: ${f.from.table}.${f.from.column}=${JSON.stringify(f.from.value)} → ${f.to.table}.${f.to.column} (${f.to.rows} rows)`
      case 'source_symbol': return `  ${f.fact_id} ${f.relation}: symbol ${f.symbol} has ${f.hits} hits in the source${f.complete ? '' : ' (partial search)'}`
      case 'not_found': return `  ${f.fact_id} not found: ${f.table}.${f.column}=${JSON.stringify(f.value)} (about this table only)`
      case 'project_context_coverage': return `  ${f.fact_id} coverage: ${f.complete ? 'nothing left out' : `left out: ${f.left_out.map((g) => `${g.what} (${g.reason})`).join('; ').slice(0, 300)}`}`
      default: return ''
    }
  })

/** Renders the next prompt from the log and the objects it references (no provider needed). */
export const nextPrompt = async (dir: string): Promise<E.Either<Failure, RenderedPrompt>> => {
  try {
    const { s } = await state(dir)
    return E.right(renderPrompt(s, await promptInputs(dir, s)))
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}

const promptInputs = async (dir: string, s: LifecycleS): Promise<{ report: string; facts: string[]; captures: Map<string, Capture> }> => {
  const report = s.report === null ? '' : must(await readObject(dir, s.report)()).toString('utf8')
  const factsDoc = s.facts === null ? null : (JSON.parse(must(await readObject(dir, s.facts)()).toString('utf8')) as { facts: Fact[] })
  const captures = new Map<string, Capture>()
  // Captures are read through their recorded references (digest and size) in the log.
  for (const [digest, ref] of s.research.evidenceRefs) {
    const bytes = must(await readObject(dir, ref)())
    const decoded = Capture.decode(JSON.parse(bytes.toString('utf8')))
    if (E.isRight(decoded)) captures.set(digest, decoded.right)
  }
  return { report, facts: factsDoc === null ? [] : factLines(factsDoc.facts), captures }
}

export interface StartOptions {
  readonly settings: InvestigationSettings
  readonly env?: Env
}

export const startInvestigation = async (dir: string, opts: StartOptions): Promise<E.Either<Failure, number>> => {
  try {
    const env = opts.env ?? systemEnv
    const { handle, s } = await state(dir)
    return E.right(await append(handle, 'investigation-start', must(decideStart(s, opts.settings, s.facts === null ? 0 : 1)), env))
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}

export interface AdvanceOptions {
  readonly model: ModelFn
  readonly research: ProjectResearch
  readonly env?: Env
  readonly maxTurns?: number
  readonly manualRetry?: boolean
  readonly expectedGeneration?: number
}

export interface AdvanceResult {
  readonly state: string
  readonly reason: string | null
  readonly turns: number
  readonly generation: number
}

/** Resumes a blocked case (see decideResume); `expectedGeneration` guards against a moved case. */
export const resumeCase = async (dir: string, opts: { manualRetry: boolean; expectedGeneration?: number; env?: Env }): Promise<E.Either<Failure, AdvanceResult>> => {
  try {
    const env = opts.env ?? systemEnv
    const { handle, s } = await state(dir)
    if (opts.expectedGeneration !== undefined && opts.expectedGeneration !== handle.cursor.seq) {
      return E.left(failure('GENERATION_CONFLICT', `expected generation ${opts.expectedGeneration}, the case is at ${handle.cursor.seq}`, { expected: opts.expectedGeneration, actual: handle.cursor.seq }))
    }
    const events = must(decideResume(s, { manualRetry: opts.manualRetry, now: env.now() }))
    const generation = await append(handle, `resume-${s.checkpoint + 1}`, events, env)
    const after = await state(dir)
    return E.right({ state: after.s.state, reason: after.s.reason, turns: 0, generation })
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}

export const recordFeedback = async (dir: string, requestId: string, feedback: string, env: Env = systemEnv): Promise<E.Either<Failure, number>> => {
  try {
    const { handle, s } = await state(dir)
    return E.right(await append(handle, `feedback-${requestId}`, must(decideFeedback(s, requestId, feedback)), env))
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}

/**
 * Runs the loop until the case concludes, is exhausted, waits for feedback, is blocked, or
 * maxTurns model turns have run. After a restart the stored evidence and the confirmed plan are
 * authoritative: a confirmed plan is carried out before the model is asked again.
 */
export const advance = async (dir: string, opts: AdvanceOptions): Promise<E.Either<Failure, AdvanceResult>> => {
  try {
    const env = opts.env ?? systemEnv
    let turns = 0
    const first = await state(dir)
    if (opts.expectedGeneration !== undefined && opts.expectedGeneration !== first.handle.cursor.seq) {
      return E.left(failure('GENERATION_CONFLICT', `expected generation ${opts.expectedGeneration}, the case is at ${first.handle.cursor.seq}`, { expected: opts.expectedGeneration, actual: first.handle.cursor.seq }))
    }
    if (first.s.state === 'NOT_STARTED') return E.left(failure('INVESTIGATION_NOT_STARTED', 'start the investigation first'))
    for (;;) {
      const { handle, s } = await state(dir)
      const done = (): AdvanceResult => ({ state: s.state, reason: s.reason, turns, generation: handle.cursor.seq })
      if (s.state === 'CONCLUDED' || s.state === 'EXHAUSTED') return E.right(done())
      if (s.state === 'BLOCKED' && s.reason !== 'RESEARCH_UNAVAILABLE') {
        if (s.reason !== 'INVALID_LLM_RESPONSES') return E.right(done())
        const resumed = decideResume(s, { manualRetry: opts.manualRetry === true, now: env.now() })
        if (E.isLeft(resumed)) return E.right(done())
        await append(handle, `resume-${s.checkpoint + 1}`, resumed.right, env)
        continue
      }
      const plan = s.pendingPlan
      if (plan !== null && plan.reservation !== null) {
        // Carry out the confirmed plan; its answer is frozen here until it is persisted.
        const answer = await opts.research.query(plan.arguments)()
        if (E.isLeft(answer)) {
          if (isUnavailable(answer.left)) {
            await append(handle, `plan-${plan.plan_id}-outage-${s.research.failures + 1}`, [...must(decideRecordFailure(s.research, { reservationId: plan.reservation, failure: answer.left, unavailable: true })), ...decideResearchBlocked(s)], env)
            const blocked = await state(dir)
            return E.right({ state: blocked.s.state, reason: blocked.s.reason, turns, generation: blocked.handle.cursor.seq })
          }
          await append(handle, `plan-${plan.plan_id}-record`, [...must(decideRecordFailure(s.research, { reservationId: plan.reservation, failure: answer.left, unavailable: false })), ...decideResearchResumed(s)], env)
          continue
        }
        // A context started with one source.context contract refuses answers computed with another.
        const ctx = s.settings?.source_context ?? null
        if (answer.right.kind === 'source.context' && ctx !== null && !sameContext(answer.right.settings['source_analysis'], ctx)) {
          const refused = failure('CONTEXT_SETTINGS_DIFFER', 'the source.context settings differ from the ones this investigation started with', {})
          await append(handle, `plan-${plan.plan_id}-record`, [...must(decideRecordFailure(s.research, { reservationId: plan.reservation, failure: refused, unavailable: false })), ...decideResearchResumed(s)], env)
          continue
        }
        const bytes = captureBytes(answer.right)
        const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
        const requestDigest = sha256Digest(must(canonicalJson(answer.right.request)))
        await append(handle, `plan-${plan.plan_id}-record`, [...must(decideRecordCapture(s.research, { reservationId: plan.reservation, capture: ref, kind: answer.right.kind, requestDigest })), ...decideResearchResumed(s)], env, [bytes])
        continue
      }
      if (s.state === 'BLOCKED') return E.right(done())
      if (turns >= (opts.maxTurns ?? 20)) return E.right(done())
      // A model turn: the prompt (stored), the raw answer (stored), and what it means.
      const turn = s.turn + 1
      const prompt = renderPrompt(s, await promptInputs(dir, s))
      const promptBytes = Buffer.from(prompt.text, 'utf8')
      await append(handle, `turn-${turn}-request`, [{ type: 'ModelRequested', actor: 'controller', data: { turn, phase: s.state === 'INTERPRETING' ? 'interpretation' : 'investigation', prompt: objectRefOf(promptBytes, 'text/plain'), prompt_version: prompt.version, prompt_chars: prompt.text.length } }], env, [promptBytes])
      const raw = await opts.model(prompt.text)
      turns++
      const rawBytes = Buffer.from(raw, 'utf8')
      const after = await state(dir)
      const decided = must(decideAnswer(after.s, turn, raw, env.now(), `P${turn}`))
      await append(after.handle, `turn-${turn}-answer`, [{ type: 'ModelResponded', actor: 'model', data: { turn, raw: objectRefOf(rawBytes, 'text/plain') } }, ...decided], env, [rawBytes])
    }
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}

const sameContext = (a: unknown, b: unknown): boolean => {
  const x = canonicalJson(a)
  const y = canonicalJson(b)
  return E.isRight(x) && E.isRight(y) && x.right === y.right
}
