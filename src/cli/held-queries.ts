/**
 * Operators' queries whose reservation is still held (`vba status`): a `vba case query` whose
 * provider was unavailable keeps its reservation for a retry under the same command id, before
 * the investigation starts as after; the lifecycle view shows no budget before the start, so the
 * held reservation, and how to retry it, were nowhere to be seen.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { Projection } from '../projections/projection.js'
import { requestText } from '../projections/request-text.js'
import { shellWord } from './next-step.js'

/** One held reservation of an operator's query. */
export interface HeldQuery {
  readonly reservation_id: string
  readonly amount: number
  /** The command id to retry it under (the one `vba case query` printed). */
  readonly command_id: string
  /** Reserved by a case query (`vba case query`, queryInCase), which retries it under command_id; else by another client (an MCP agent). */
  readonly by_query_command: boolean
  /** The query as a line (`source.search "x"`), when its reservation records the request. */
  readonly query: string | null
  /** The MCP client that asked it (its name and version), null for an operator's `vba case query`. */
  readonly requester: string | null
  /** The code of the failure that left it held (an unavailable provider), null while none is recorded. */
  readonly failed: string | null
}

const RESERVE = '.reserve'

const heldFold = (held: Map<string, HeldQuery>, e: RecordedEvent): Map<string, HeldQuery> => {
  switch (e.type) {
    case 'BudgetReserved': {
      if (e.data.plan_id !== null) break
      const request = e.data.request
      const kind = request === null ? null : request['kind']
      held.set(e.data.reservation_id, {
        reservation_id: e.data.reservation_id,
        amount: e.data.amount,
        // `vba case query --command-id ID` (and the library's queryInCase) reserve under `ID.reserve`.
        command_id: e.command_id.endsWith(RESERVE) ? e.command_id.slice(0, -RESERVE.length) : e.command_id,
        // An MCP client's calls reserve through the same case query, under ids of their own: the
        // client retries them (its identical call resumes the reservation).
        by_query_command: e.command_id.endsWith(RESERVE) && (e.data.requester ?? null) === null,
        query: request === null || typeof kind !== 'string' ? null : requestText(kind, request),
        requester:
          e.data.requester === null || e.data.requester === undefined
            ? null
            : `${e.data.requester.name}${e.data.requester.version === '' ? '' : ` ${e.data.requester.version}`}`,
        failed: null
      })
      break
    }
    case 'ResearchFailed': {
      const h = held.get(e.data.reservation_id)
      if (h !== undefined) held.set(h.reservation_id, { ...h, failed: e.data.code })
      break
    }
    case 'BudgetConsumed':
    case 'BudgetReleased':
      held.delete(e.data.reservation_id)
      break
  }
  return held
}

/** The held reservations of operators' queries, in the order they were made. */
export const heldQueriesProjection: Projection<Map<string, HeldQuery>, HeldQuery[]> = {
  name: 'held-queries',
  version: 1,
  init: () => new Map(),
  evolve: heldFold,
  view: (held) => [...held.values()]
}

/** `vba status`'s lines for the held queries of the case named `c` (as a shell word). */
export const heldQueryLines = (held: readonly HeldQuery[], c: string): string[] =>
  held.map((h) => {
    const what = `query held: ${h.query ?? 'a query'} (reservation ${h.reservation_id}, cost ${h.amount}${h.requester === null ? '' : `, asked by ${h.requester} over MCP`}${h.failed === null ? ', in flight or interrupted' : `, failed ${h.failed}`})`
    return h.by_query_command
      ? `${what}: retry with vba case query ${c} --config PROFILE --query FILE --command-id ${shellWord(h.command_id)}`
      : `${what}: the client's identical call retries it (command ${h.command_id})`
  })
