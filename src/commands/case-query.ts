/**
 * One project.query inside a case, outside the model's plans (an operator's or a controller's
 * question): decode the request, reserve action budget for exactly that request, run the query,
 * then append the capture (stored as an object), its evidence and the consumption in one atomic
 * command, or the failure. Refused once the investigation is CONCLUDED or EXHAUSTED, or when the
 * cost exceeds what is left. The same command id retries the same reservation (after an outage)
 * or returns the recorded outcome; research itself never writes into the case.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, isFailureCode, type Failure } from '../failures/failure.js'
import { decodeQuery } from '../domain/query.js'
import { isUnavailable } from '../domain/research-failures.js'
import { command, decide } from '../domain/decider.js'
import { queryCost, remainingBudget } from '../domain/budget.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { Capture } from '../events/capture.js'
import type { EventEnvelope } from '../events/envelope.js'
import type { Requester } from '../events/catalog.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { recordedOutcome, type Receipt } from '../adapters/case-store/append.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { FailureError, must } from '../failures/error.js'
import { captureBytes } from '../research/capture.js'
import type { ProjectResearch } from '../research/project-research.js'
import { asDecided, decideAndAppend, deciding, firstIs, openAt } from './run.js'
import { Capture as CaptureCodec } from '../events/capture.js'
import { parseBoundedBytes } from '../events/bounds.js'

export const CAPTURE_MEDIA_TYPE = 'application/vnd.vba.capture+json'

/**
 * The outcome of a query recorded in a case: the capture as evidence (or a repeat), or the failure.
 * @category research
 */
export interface CaseQueryResult {
  readonly outcome: 'recorded' | 'failed'
  /** The command id used (print it: retrying with it retries the same reservation). */
  readonly commandId: string
  readonly capture?: Capture
  readonly evidenceId?: string
  readonly repeat?: boolean
  readonly failure?: Failure
  readonly generation: number
  readonly receipt: Receipt
  /** True when the outcome was recorded before (a retried command id): nothing ran, nothing was appended. */
  readonly answeredFromCase: boolean
  /** Budget the investigation has left after the call (null before it starts: no limit). */
  readonly budgetLeft: number | null
}

/** @category research */
export interface CaseQueryOptions {
  readonly env?: Env
  /** The program that asks (an MCP client), recorded with the reservation. */
  readonly requester?: Requester
}

const budgetLeft = (handle: CaseHandle): number | null =>
  handle.cursor.state.settings === null ? null : remainingBudget(handle.cursor.state)

/** The outcome recorded for a reservation by an earlier attempt (a retried command id). */
const recorded = async (
  handle: CaseHandle,
  commandId: string,
  events: readonly EventEnvelope[],
  generation: number,
  receipt: Receipt
): Promise<CaseQueryResult | null> => {
  const from = { answeredFromCase: true, budgetLeft: budgetLeft(handle) }
  for (const e of events) {
    if (e.type === 'CaptureRecorded') {
      const d = e.data as { capture: { digest: string; size: number }; evidence_id: string; repeat: boolean }
      const bytes = await handle.store.readObject(handle.ref, d.capture)
      const decoded = CaptureCodec.decode(parseBoundedBytes(bytes))
      return {
        outcome: 'recorded',
        commandId,
        ...(E.isRight(decoded) ? { capture: decoded.right } : {}),
        evidenceId: d.evidence_id,
        repeat: d.repeat,
        generation,
        receipt,
        ...from
      }
    }
    if (e.type === 'ResearchFailed' && (e.data as { unavailable: boolean }).unavailable === false) {
      const d = e.data as { code: string; message: string }
      return {
        outcome: 'failed',
        commandId,
        failure: failure(isFailureCode(d.code) ? d.code : 'INTERNAL_ERROR', d.message),
        generation,
        receipt,
        ...from
      }
    }
  }
  return null
}

/** The outcome of a query whose reservation is closed: the recorded one, for the same request only. */
const doneBefore = async (
  handle: CaseHandle,
  commandId: string,
  requestDigest: string,
  attempts: readonly string[]
): Promise<CaseQueryResult> => {
  const reserved = (await recordedOutcome(handle, `${commandId}.reserve`))?.events.find(
    (e) => e.type === 'BudgetReserved'
  )
  if ((reserved?.data as { request_digest?: unknown } | undefined)?.request_digest !== requestDigest) {
    throw new FailureError(
      failure('COMMAND_ID_CONFLICT', `command ${commandId} was used for another query`, { command_id: commandId })
    )
  }
  const last = attempts[attempts.length - 1]
  const outcome = last === undefined ? null : await recordedOutcome(handle, last)
  const result =
    outcome === null ? null : await recorded(handle, commandId, outcome.events, handle.cursor.seq, outcome.receipt)
  if (result === null)
    throw new FailureError(failure('COMMAND_DONE', `command ${commandId} completed already`, { command_id: commandId }))
  return result
}

/** Runs `args` as a project.query inside the case at `dir`. `commandId` makes a retry idempotent. */
export const queryInCase = async (
  at: CaseAt,
  research: ProjectResearch,
  args: unknown,
  commandId: string,
  options: CaseQueryOptions = {}
): Promise<CaseQueryResult> => {
  const env = options.env ?? systemEnv
  const query = must(decodeQuery(args))
  const requestDigest = sha256Digest(must(canonicalJson(query)))
  const reservationId = `res-${commandId}`
  const handle = await openAt(at)
  const attempts = [...handle.cursor.commands.keys()]
    .filter((k) => k.startsWith(`${commandId}.record-`))
    .sort((a, b) => Number(a.slice(a.lastIndexOf('-') + 1)) - Number(b.slice(b.lastIndexOf('-') + 1)))
  const existing = handle.cursor.state.research
  // Done before: the recorded outcome, not a second query (of the same request only).
  if (existing.closed.has(reservationId)) return doneBefore(handle, commandId, requestDigest, attempts)
  const open = existing.open.get(reservationId)
  if (open !== undefined && open.request_digest !== requestDigest) {
    throw new FailureError(
      failure('COMMAND_ID_CONFLICT', `command ${commandId} reserved budget for another query`, {
        command_id: commandId
      })
    )
  }
  if (open === undefined) {
    await decideAndAppend(
      handle,
      `${commandId}.reserve`,
      (s, now) =>
        asDecided(
          decide(
            command(
              'Reserve',
              { reservationId, amount: queryCost(s), requestDigest, requester: options.requester ?? null },
              now
            ),
            s
          )
        ),
      {
        env,
        sameIntent: firstIs(
          'BudgetReserved',
          (e) => (e.data as { request_digest?: unknown }).request_digest === requestDigest
        )
      }
    )
  }
  // The answer is computed once and frozen here until it is persisted.
  const answer = await research.query(query)()
  const attempt = `${commandId}.record-${attempts.length + 1}`
  if (E.isLeft(answer)) {
    const unavailable = isUnavailable(answer.left)
    const out = await decideAndAppend(
      handle,
      attempt,
      deciding('RecordResearchFailure', { reservationId, failure: answer.left, unavailable }),
      { env }
    )
    return {
      outcome: 'failed',
      commandId,
      failure: answer.left,
      generation: out.generation,
      receipt: out.receipt,
      answeredFromCase: false,
      budgetLeft: budgetLeft(handle)
    }
  }
  const bytes = captureBytes(answer.right)
  const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
  const out = await decideAndAppend(
    handle,
    attempt,
    deciding('RecordCapture', { reservationId, capture: ref, kind: answer.right.kind, requestDigest }, [bytes]),
    { env }
  )
  const recordedEvent = out.events.find((e) => e.type === 'CaptureRecorded')
  const d = recordedEvent?.data as { evidence_id: string; repeat: boolean } | undefined
  return {
    outcome: 'recorded',
    commandId,
    capture: answer.right,
    evidenceId: d?.evidence_id ?? '?',
    repeat: d?.repeat ?? false,
    generation: out.generation,
    receipt: out.receipt,
    answeredFromCase: false,
    budgetLeft: budgetLeft(handle)
  }
}
