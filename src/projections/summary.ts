/**
 * The case summary: generation, head hash, events by type and actor, and the objects referenced.
 */
import { collectRefs } from '../events/refs.js'
import { registry } from '../events/catalog.js'
import { refFree } from '../events/ref-free.js'
import type { Projection } from './projection.js'

export interface SummaryState {
  generation: number
  lastHash: string | null
  firstAt: string | null
  lastAt: string | null
  byType: Map<string, number>
  byActor: Map<string, number>
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

const sortedRecord = (m: Map<string, number>): Record<string, number> =>
  Object.fromEntries([...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))

const bump = (m: Map<string, number>, key: string): void => {
  m.set(key, (m.get(key) ?? 0) + 1)
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
    bump(s.byType, e.type)
    bump(s.byActor, e.actor)
    if (e.command_id !== s.lastCommand) {
      s.commands += 1
      s.lastCommand = e.command_id
    }
    if (e.version < latestVersionOf(e)) s.upcast += 1
    if (!refFree(e.type)) for (const ref of collectRefs(e.data).refs) s.objects.set(ref.digest, ref.size)
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

const latestVersionOf = (e: { readonly type: string }): number => registry.definitions.get(e.type)?.latest ?? 0
