/**
 * One project.query inside a case, outside the model's plans (an operator's or a controller's
 * question): decode the request, reserve action budget for exactly that request, run the query,
 * then append the capture (stored as an object), its evidence and the consumption in one atomic
 * command, or the failure. Refused once the investigation is CONCLUDED or EXHAUSTED, or when the
 * cost exceeds what is left. The same command id retries the same reservation (after an outage)
 * or returns the recorded outcome; research itself never writes into the case.
 *
 * Concurrent writers of one case: when another writer moved the case on so that this call's
 * decision no longer holds (GENERATION_CONFLICT), the call re-reads the case and decides again, up
 * to {@link QUERY_CONFLICT_ROUNDS} times, without running the query twice; a refusal decided on
 * the re-read state is returned as itself (BUDGET_EXHAUSTED, CASE_CLOSED). A caller is told an
 * answer is its own only when its own appends recorded it (`origin`, see query-outcome.ts).
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { decodeQuery, type ProjectQuery } from '../domain/query.js'
import { isUnavailable } from '../domain/research-failures.js'
import { command, decide } from '../domain/decider.js'
import { queryCost } from '../domain/budget.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { Capture } from '../events/capture.js'
import type { Requester } from '../events/catalog.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { AppendOutcome, Receipt } from '../adapters/case-store/append.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { FailureError, must } from '../failures/error.js'
import { captureBytes } from '../research/capture.js'
import type { ProjectResearch } from '../research/project-research.js'
import { asDecided, decideAndAppend, deciding, intentIs, openAt } from './run.js'
import {
  attemptsOf,
  budgetLeftOf,
  closedOutcome,
  outcomeOfEvents,
  reservationOf,
  type QueryOrigin,
  type QueryReservation,
  type RecordedPart
} from './query-outcome.js'

export const CAPTURE_MEDIA_TYPE = 'application/vnd.vba.capture+json'

/**
 * How many times a query is decided again on the re-read case when other writers moved it on
 * meanwhile (GENERATION_CONFLICT) before the conflict is returned: the query itself runs once.
 * @category research
 */
export const QUERY_CONFLICT_ROUNDS = 5

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
  /**
   * True when this call recorded no outcome: it was recorded before (a retried command id) or by
   * another writer under the same command id while this call ran (`origin`); nothing was appended for it.
   */
  readonly answeredFromCase: boolean
  /** Whose answer this is, as the log says (`own` only when this call's appends recorded it). */
  readonly origin: QueryOrigin
  /** The reservation the outcome was recorded under (null when the log holds none under the command id). */
  readonly reservation: QueryReservation | null
  /** Budget the investigation has left in the state right after the call's append (null before it starts: no limit). */
  readonly budgetLeft: number | null
}

/** @category research */
export interface CaseQueryOptions {
  readonly env?: Env
  /** The program that asks (an MCP client), recorded with the reservation. */
  readonly requester?: Requester
}

/** One call across its rounds: what it asks, and what it has done so far. */
interface QueryCall {
  readonly research: ProjectResearch
  readonly query: ProjectQuery
  readonly commandId: string
  readonly requestDigest: string
  readonly reservationId: string
  readonly options: CaseQueryOptions
  readonly env: Env
  /** This call appended the reservation (in an earlier round, or this one). */
  reservedHere: boolean
  /** The research's answer, computed once and frozen until it is persisted. */
  answer?: E.Either<Failure, Capture>
}

const result = async (
  handle: CaseHandle,
  call: QueryCall,
  part: RecordedPart,
  origin: QueryOrigin,
  at: { generation: number; receipt: Receipt }
): Promise<CaseQueryResult> => ({
  ...part,
  commandId: call.commandId,
  generation: at.generation,
  receipt: at.receipt,
  answeredFromCase: origin === 'before' || origin === 'concurrent',
  origin,
  reservation: await reservationOf(handle, call.commandId),
  budgetLeft: budgetLeftOf(handle)
})

/** A closed reservation's outcome: recorded before this call (`before`) or while it ran (`concurrent`). */
const closed = async (handle: CaseHandle, call: QueryCall, origin: QueryOrigin): Promise<CaseQueryResult> => {
  const { part, receipt } = await closedOutcome(handle, call.commandId, call.requestDigest)
  return result(handle, call, part, origin, { generation: handle.cursor.seq, receipt })
}

const reserve = (handle: CaseHandle, call: QueryCall): Promise<AppendOutcome> =>
  decideAndAppend(
    handle,
    `${call.commandId}.reserve`,
    (s, now) =>
      asDecided(
        decide(
          command(
            'Reserve',
            {
              reservationId: call.reservationId,
              amount: queryCost(s),
              requestDigest: call.requestDigest,
              requester: call.options.requester ?? null,
              request: call.query
            },
            now
          ),
          s
        )
      ),
    {
      env: call.env,
      sameIntent: intentIs('BudgetReserved', { request_digest: call.requestDigest })
    }
  )

/** Appends the answer under the next record attempt; a duplicate is another writer's outcome. */
const record = async (handle: CaseHandle, call: QueryCall, answer: E.Either<Failure, Capture>) => {
  const attempt = `${call.commandId}.record-${attemptsOf(handle, call.commandId).length + 1}`
  const { reservationId, requestDigest, env } = call
  if (E.isLeft(answer)) {
    const unavailable = isUnavailable(answer.left)
    const out = await decideAndAppend(
      handle,
      attempt,
      deciding('RecordResearchFailure', { reservationId, failure: answer.left, unavailable }),
      { env }
    )
    return { out, part: { outcome: 'failed', failure: answer.left } as RecordedPart }
  }
  const bytes = captureBytes(answer.right)
  const ref = objectRefOf(bytes, CAPTURE_MEDIA_TYPE)
  const out = await decideAndAppend(
    handle,
    attempt,
    deciding('RecordCapture', { reservationId, capture: ref, kind: answer.right.kind, requestDigest }, [bytes]),
    { env }
  )
  const d = out.events.find((e) => e.type === 'CaptureRecorded')?.data as
    | { evidence_id: string; repeat: boolean }
    | undefined
  const part: RecordedPart = {
    outcome: 'recorded',
    capture: answer.right,
    evidenceId: d?.evidence_id ?? '?',
    repeat: d?.repeat ?? false
  }
  return { out, part }
}

/** One round on a freshly opened handle: reserve unless open, ask once, record. */
const round = async (handle: CaseHandle, call: QueryCall, first: boolean): Promise<CaseQueryResult> => {
  const { commandId, reservationId } = call
  const existing = handle.cursor.state.research
  // Done before: the recorded outcome, not a second query (of the same request only).
  if (existing.closed.has(reservationId)) return closed(handle, call, first ? 'before' : 'concurrent')
  const open = existing.open.get(reservationId)
  if (open !== undefined && open.request_digest !== call.requestDigest) {
    throw new FailureError(
      failure('COMMAND_ID_CONFLICT', `command ${commandId} reserved budget for another query`, {
        command_id: commandId
      })
    )
  }
  if (open === undefined) {
    const out = await reserve(handle, call)
    if (out.status === 'appended' && out.events.length > 0) call.reservedHere = true
    // Another writer reserved under this id meanwhile, and may have recorded its outcome already.
    else if (handle.cursor.state.research.closed.has(reservationId)) return closed(handle, call, 'concurrent')
  }
  call.answer ??= await call.research.query(call.query)()
  const { out, part } = await record(handle, call, call.answer)
  if (out.status === 'duplicate') {
    // Another writer recorded this attempt first: its outcome, told as such.
    const theirs = await outcomeOfEvents(handle, out.events, true)
    if (theirs === null) throw new FailureError(failure('INTERNAL_ERROR', 'a record attempt holds no outcome'))
    return result(handle, call, theirs, 'concurrent', out)
  }
  return result(handle, call, part, call.reservedHere ? 'own' : 'resumed', out)
}

/**
 * Runs `args` as a project.query inside the case at `at`. `commandId` makes a retry idempotent;
 * concurrent writers are handled as the module comment says.
 */
export const queryInCase = async (
  at: CaseAt,
  research: ProjectResearch,
  args: unknown,
  commandId: string,
  options: CaseQueryOptions = {}
): Promise<CaseQueryResult> => {
  const query = must(decodeQuery(args))
  const call: QueryCall = {
    research,
    query,
    commandId,
    requestDigest: sha256Digest(must(canonicalJson(query))),
    reservationId: `res-${commandId}`,
    options,
    env: options.env ?? systemEnv,
    reservedHere: false
  }
  let last: Failure | null = null
  for (let n = 1; n <= QUERY_CONFLICT_ROUNDS; n++) {
    try {
      return await round(await openAt(at), call, n === 1)
    } catch (e) {
      if (!(e instanceof FailureError) || e.failure.code !== 'GENERATION_CONFLICT') throw e
      last = e.failure
    }
  }
  throw new FailureError(
    failure(
      'GENERATION_CONFLICT',
      `other writers moved the case on ${QUERY_CONFLICT_ROUNDS} times while command ${commandId} was recorded (last: ${last?.message ?? 'a conflict'}); retry the same call: a kept reservation is resumed, nothing is recorded twice`,
      { command_id: commandId, rounds: QUERY_CONFLICT_ROUNDS, cause: last?.data['cause'] ?? null }
    )
  )
}
