/**
 * One project.query inside a case (minimal form; the investigation loop builds on it): reserve
 * action budget, run the query, then append the capture (stored as an object), its evidence and
 * the budget consumption in one atomic command, or the failure. Research itself never writes into
 * the case: this function decides with the case's deciders and appends through the store.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import { isUnavailable } from '../domain/research-failures.js'
import { decideRecordCapture, decideRecordFailure, decideReserve, evidenceFor } from '../domain/research-decider.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { Capture } from '../events/capture.js'
import { researchProjection } from '../projections/research.js'
import { openCaseWithState } from '../adapters/case-store/open.js'
import { appendCommand, type AppendOutcome } from '../adapters/case-store/append.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import type { Env } from '../adapters/env.js'
import { FailureError } from '../adapters/fs-util.js'
import { captureBytes } from './capture.js'
import type { ProjectResearch } from './project-research.js'

export const CAPTURE_MEDIA_TYPE = 'application/vnd.vba.capture+json'

export interface CaseQueryResult {
  readonly outcome: 'recorded' | 'failed'
  readonly capture?: Capture
  readonly evidenceId?: string
  readonly repeat?: boolean
  readonly failure?: Failure
  readonly generation: number
}

const must = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) throw new FailureError(r.left)
  return r.right
}

/** Runs `args` as a project.query inside the case at `dir`. `commandId` makes a retry idempotent. */
export const queryInCase = async (dir: string, research: ProjectResearch, args: unknown, commandId: string, env?: Env): Promise<E.Either<Failure, CaseQueryResult>> => {
  try {
    const reservationId = `res-${commandId}`
    const options = env === undefined ? {} : { env }
    const first = must(await openCaseWithState(dir, researchProjection)())
    if (!first.state.open.has(reservationId) && !first.state.closed.has(reservationId)) {
      const drafts = must(decideReserve(first.state, { reservationId, amount: 1, planId: null }))
      must(await appendCommand(first.handle, { commandId: `${commandId}.reserve`, expectedGeneration: first.handle.cursor.seq, events: drafts }, options)())
    }
    const { handle, state } = must(await openCaseWithState(dir, researchProjection)())
    if (state.closed.has(reservationId)) {
      return E.left(failure('COMMAND_DONE', `command ${commandId} already completed; use a new command id for a new query`, { command_id: commandId }))
    }
    // The answer is computed once and frozen here until it is persisted.
    const answer = await research.query(args)()
    let outcome: AppendOutcome
    if (E.isLeft(answer)) {
      const unavailable = isUnavailable(answer.left)
      outcome = must(await appendCommand(handle, { commandId: `${commandId}.record`, expectedGeneration: handle.cursor.seq, events: must(decideRecordFailure(state, { reservationId, failure: answer.left, unavailable })) }, options)())
      return E.right({ outcome: 'failed', failure: answer.left, generation: outcome.generation })
    }
    const bytes = captureBytes(answer.right)
    const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
    const request = canonicalJson(answer.right.request)
    const drafts = must(decideRecordCapture(state, { reservationId, capture: ref, kind: answer.right.kind, requestDigest: E.isRight(request) ? sha256Digest(request.right) : sha256Digest('') }))
    outcome = must(await appendCommand(handle, { commandId: `${commandId}.record`, expectedGeneration: handle.cursor.seq, events: drafts, objects: [bytes] }, options)())
    const evidence = evidenceFor(state, ref.digest)
    return E.right({ outcome: 'recorded', capture: answer.right, evidenceId: evidence.id, repeat: evidence.repeat, generation: outcome.generation })
  } catch (e) {
    if (e instanceof FailureError) return E.left(e.failure)
    throw e
  }
}
