/**
 * Who worked on a case (`vba status`): every model that answered a turn and every MCP client that
 * answered or asked a query, in order of first appearance. The lifecycle view keeps only the
 * model of the latest answer, so of two MCP agents status named the second alone as the model.
 * Read from what is recorded (the answers' provenance, the reservations' requester); nothing new is.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { Projection } from '../projections/projection.js'

/** One model or MCP client of a case. */
export interface CaseModel {
  /** How it was reached: http, command, function, or mcp (a client). */
  readonly kind: string
  /** The model name its provider reported (an MCP client's own name); null when none was. */
  readonly name: string | null
  /** An MCP client's version as it gave it; null for a model. */
  readonly version: string | null
  readonly endpoint: string | null
  /** It answered a turn. */
  readonly answered: boolean
  /** It asked a query (an MCP client). */
  readonly asked: boolean
}

type Seen = Map<string, CaseModel>

const note = (seen: Seen, m: Omit<CaseModel, 'answered' | 'asked'>, did: 'answered' | 'asked'): void => {
  const key = JSON.stringify([m.kind, m.name, m.version, m.endpoint])
  const before = seen.get(key)
  seen.set(key, { ...m, answered: before?.answered === true, asked: before?.asked === true, [did]: true })
}

const modelsFold = (seen: Seen, e: RecordedEvent): Seen => {
  if (e.type === 'ModelResponded') {
    const p = e.data.provenance
    if (p !== null) {
      const r = p.requester
      note(
        seen,
        { kind: p.kind, name: r?.name ?? p.model, version: r?.version ?? null, endpoint: p.endpoint },
        'answered'
      )
    }
  } else if (e.type === 'BudgetReserved' && e.data.requester !== null) {
    const r = e.data.requester
    note(seen, { kind: r.protocol, name: r.name, version: r.version, endpoint: null }, 'asked')
  }
  return seen
}

/** The models and MCP clients of a case, in the order they first answered or asked. */
export const caseModelsProjection: Projection<Seen, CaseModel[]> = {
  name: 'case-models',
  version: 1,
  init: () => new Map(),
  evolve: modelsFold,
  view: (seen) => [...seen.values()]
}

/** One model as `vba status` names it: `name version at endpoint (kind)`. */
export const caseModelText = (m: CaseModel): string =>
  `${m.name ?? 'unnamed'}${m.version === null || m.version === '' ? '' : ` ${m.version}`}${m.endpoint === null ? '' : ` at ${m.endpoint}`} (${m.kind}${m.answered ? '' : ', asked only'})`
