/**
 * The case summary: generation, head hash, events by type and actor, and the objects referenced.
 */
import { collectRefs } from '../events/refs.js'
import { registry } from '../events/catalog.js'
import { refFree } from '../events/ref-free.js'
import type { Projection } from './projection.js'

/** The events of one type so far, with what the summary asks of every event of it. */
interface TypeCount {
  readonly type: string
  n: number
  /** The latest version of the type (an older one was upcast). */
  readonly latest: number
  /** Whether its data can hold no object reference (see refFree). */
  readonly refFree: boolean
}

export interface SummaryState {
  generation: number
  lastHash: string | null
  firstAt: string | null
  lastAt: string | null
  byType: Map<string, TypeCount>
  byActor: Map<string, { n: number }>
  /** The last event's type and actor counts: the next event is nearly always of the same (no lookup then). */
  lastType: TypeCount | null
  lastActor: { readonly actor: string; n: number } | null
  upcast: number
  commands: number
  lastCommand: string | null
  objects: Map<string, number>
}

export interface SummaryView {
  readonly generation: number
  readonly last_hash: string | null
  readonly first_event_at: string | null
  readonly last_event_at: string | null
  readonly events: number
  readonly events_by_type: Readonly<Record<string, number>>
  readonly events_by_actor: Readonly<Record<string, number>>
  readonly events_upcast: number
  readonly commands: number
  readonly objects: { readonly count: number; readonly bytes: number }
}

const sortedRecord = (m: Map<string, { readonly n: number }>): Record<string, number> =>
  Object.fromEntries(
    [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]): [string, number] => [k, v.n])
  )

const typeCount = (s: SummaryState, type: string): TypeCount => {
  let c = s.byType.get(type)
  if (c === undefined) {
    c = { type, n: 0, latest: registry.definitions.get(type)?.latest ?? 0, refFree: refFree(type) }
    s.byType.set(type, c)
  }
  return c
}

const actorCount = (s: SummaryState, actor: string): { readonly actor: string; n: number } => {
  let c = s.byActor.get(actor) as { readonly actor: string; n: number } | undefined
  if (c === undefined) {
    c = { actor, n: 0 }
    s.byActor.set(actor, c)
  }
  return c
}

export const summaryProjection: Projection<SummaryState, SummaryView> = {
  name: 'summary',
  version: 1,
  init: () => ({
    generation: 0,
    lastHash: null,
    firstAt: null,
    lastAt: null,
    byType: new Map(),
    byActor: new Map(),
    lastType: null,
    lastActor: null,
    upcast: 0,
    commands: 0,
    lastCommand: null,
    objects: new Map()
  }),
  evolve: (s, e) => {
    s.generation = e.seq
    s.lastHash = e.hash
    s.firstAt ??= e.at
    s.lastAt = e.at
    let t = s.lastType
    if (t === null || t.type !== e.type) {
      t = typeCount(s, e.type)
      s.lastType = t
    }
    t.n++
    let a = s.lastActor
    if (a === null || a.actor !== e.actor) {
      a = actorCount(s, e.actor)
      s.lastActor = a
    }
    a.n++
    if (e.command_id !== s.lastCommand) {
      s.commands += 1
      s.lastCommand = e.command_id
    }
    if (e.version < t.latest) s.upcast += 1
    if (!t.refFree) for (const ref of collectRefs(e.data).refs) s.objects.set(ref.digest, ref.size)
    return s
  },
  view: (s) => ({
    generation: s.generation,
    last_hash: s.lastHash,
    first_event_at: s.firstAt,
    last_event_at: s.lastAt,
    events: s.generation,
    events_by_type: sortedRecord(s.byType),
    events_by_actor: sortedRecord(s.byActor),
    events_upcast: s.upcast,
    commands: s.commands,
    objects: { count: s.objects.size, bytes: [...s.objects.values()].reduce((a, b) => a + b, 0) }
  })
}
