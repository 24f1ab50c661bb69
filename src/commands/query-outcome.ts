/**
 * Whose answer a query's outcome is, as the case's log says, and the outcome itself read back
 * from the log. Concurrent writers of one case (two MCP servers, a server and a CLI, parallel
 * calls of one server) may ask under the same command id: only one reservation and one outcome
 * are recorded, and every other caller is told the evidence it got as what it is (recorded before
 * this call, or by another writer while this call ran), never as its own.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, isFailureCode, type Failure } from '../failures/failure.js'
import type { Capture } from '../events/capture.js'
import { Capture as CaptureCodec } from '../events/capture.js'
import type { EventEnvelope } from '../events/envelope.js'
import type { Requester } from '../events/catalog.js'
import { parseBoundedBytes } from '../events/bounds.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { recordedOutcome, type Receipt } from '../adapters/case-store/append.js'
import { remainingBudget } from '../domain/budget.js'
import { FailureError } from '../failures/error.js'

/**
 * Whose answer an outcome is, as the log says.
 * - `own`: this call recorded the reservation and the outcome (new evidence, or a repeat of earlier evidence);
 * - `resumed`: this call recorded the outcome of a reservation recorded before it under the same
 *   command id (a retry after an outage, or another writer's call still running);
 * - `before`: the outcome was recorded before this call (a retried command id): nothing ran or was recorded;
 * - `concurrent`: another writer asking under the same command id recorded the outcome while this
 *   call ran; this call recorded no outcome (its answer, if any, was dropped) and spent no budget of its own.
 * @category research
 */
export type QueryOrigin = 'own' | 'resumed' | 'before' | 'concurrent'

/** The reservation an outcome was recorded under: where it is in the log and whom it names. @category research */
export interface QueryReservation {
  readonly seq: number
  /** The program the reservation was recorded for (an MCP client), or null when none was named. */
  readonly requester: Requester | null
}

/** What a recorded outcome says, before the call's own members are added. */
export interface RecordedPart {
  readonly outcome: 'recorded' | 'failed'
  readonly capture?: Capture
  readonly evidenceId?: string
  readonly repeat?: boolean
  readonly failure?: Failure
}

/** Budget the investigation has left in the handle's state (null before it starts: no limit). */
export const budgetLeftOf = (handle: CaseHandle): number | null =>
  handle.cursor.state.settings === null ? null : remainingBudget(handle.cursor.state)

/** The reservation recorded under `${commandId}.reserve`, if the handle has seen it. */
export const reservationOf = async (handle: CaseHandle, commandId: string): Promise<QueryReservation | null> => {
  const e = (await recordedOutcome(handle, `${commandId}.reserve`))?.events.find((x) => x.type === 'BudgetReserved')
  if (e === undefined) return null
  const d = e.data as { requester?: Requester | null }
  return { seq: e.seq, requester: d.requester ?? null }
}

/** The reservation's request digest recorded under `${commandId}.reserve` (undefined when none is). */
export const reservedDigest = async (handle: CaseHandle, commandId: string): Promise<unknown> =>
  (
    (await recordedOutcome(handle, `${commandId}.reserve`))?.events.find((e) => e.type === 'BudgetReserved')?.data as
      | { request_digest?: unknown }
      | undefined
  )?.request_digest

/**
 * The outcome recorded by a command's events: a capture as evidence, or a failure (an outage's
 * only when `outages`: a closed reservation's outcome is never one). Null when they hold neither.
 */
export const outcomeOfEvents = async (
  handle: CaseHandle,
  events: readonly EventEnvelope[],
  outages = false
): Promise<RecordedPart | null> => {
  for (const e of events) {
    if (e.type === 'CaptureRecorded') {
      const d = e.data as { capture: { digest: string; size: number }; evidence_id: string; repeat: boolean }
      const bytes = await handle.store.readObject(handle.ref, d.capture)
      const decoded = CaptureCodec.decode(parseBoundedBytes(bytes))
      return {
        outcome: 'recorded',
        ...(E.isRight(decoded) ? { capture: decoded.right } : {}),
        evidenceId: d.evidence_id,
        repeat: d.repeat
      }
    }
    if (e.type === 'ResearchFailed' && (outages || (e.data as { unavailable: boolean }).unavailable === false)) {
      const d = e.data as { code: string; message: string }
      return { outcome: 'failed', failure: failure(isFailureCode(d.code) ? d.code : 'INTERNAL_ERROR', d.message) }
    }
  }
  return null
}

/** The record attempts of a command id the handle has seen (`${commandId}.record-N`), in order. */
export const attemptsOf = (handle: CaseHandle, commandId: string): string[] =>
  [...handle.cursor.commands.keys()]
    .filter((k) => k.startsWith(`${commandId}.record-`))
    .sort((a, b) => Number(a.slice(a.lastIndexOf('-') + 1)) - Number(b.slice(b.lastIndexOf('-') + 1)))

/**
 * The outcome of a closed reservation: the last attempt's (for the same request only; another
 * request under the id is COMMAND_ID_CONFLICT), with the receipt of the command that recorded it.
 */
export const closedOutcome = async (
  handle: CaseHandle,
  commandId: string,
  requestDigest: string
): Promise<{ part: RecordedPart; receipt: Receipt }> => {
  if ((await reservedDigest(handle, commandId)) !== requestDigest) {
    throw new FailureError(
      failure('COMMAND_ID_CONFLICT', `command ${commandId} was used for another query`, { command_id: commandId })
    )
  }
  const last = attemptsOf(handle, commandId).at(-1)
  const outcome = last === undefined ? null : await recordedOutcome(handle, last)
  const part = outcome === null ? null : await outcomeOfEvents(handle, outcome.events)
  if (outcome === null || part === null)
    throw new FailureError(failure('COMMAND_DONE', `command ${commandId} completed already`, { command_id: commandId }))
  return { part, receipt: outcome.receipt }
}
