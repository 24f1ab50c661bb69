/**
 * The projection framework. A projection is a left fold over recorded events with a JSON view:
 * replay needs nothing but the log, and the same log always yields byte-identical views.
 *
 * Ownership: the engine hands `evolve` a state it will never look at again, so `evolve` may return
 * an updated copy or update that state in place. This keeps replay of large logs linear while
 * every observer still only sees states produced by folding events in order.
 */
import type { RecordedEvent } from '../events/chain.js'
import { fail } from '../failures/error.js'

/** @category Projections */
export interface Projection<S, V> {
  /** Stable name, used as the key of the view in replay output. */
  readonly name: string
  /** Bumped whenever the view's shape or meaning changes. */
  readonly version: number
  readonly init: () => S
  readonly evolve: (state: S, event: RecordedEvent) => S
  /** A JSON-serialisable view of the state. */
  readonly view: (state: S) => V
}

/** @category Projections */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
// biome-ignore lint/suspicious/noExplicitAny: a projection of any state (the fold engine runs a list of them)
export type AnyProjection = Projection<any, unknown>

/** Folds events into several projections at once; events at or below the last seen seq are ignored. */
export interface Fold {
  readonly feed: (event: RecordedEvent) => void
  /** Views keyed by projection name, in the order the projections were given. */
  readonly views: () => Record<string, { readonly version: number; readonly view: unknown }>
  readonly lastSeq: () => number
}

/**
 * Folds `projections` (the caller's: a name twice is INVALID_ARGUMENT naming it, as each view is
 * keyed by its projection's name).
 */
export const fold = (projections: readonly AnyProjection[]): Fold => {
  const seen = new Set<string>()
  for (const p of projections) {
    if (seen.has(p.name))
      fail('INVALID_ARGUMENT', `two projections are named ${JSON.stringify(p.name)}: each view is keyed by its name`, {
        name: p.name
      })
    seen.add(p.name)
  }
  const states: unknown[] = projections.map((p) => p.init())
  let last = 0
  return {
    feed: (event) => {
      // Idempotent delivery: an event already folded (same or lower seq) changes nothing.
      if (event.seq <= last) return
      last = event.seq
      // A loop, not forEach: its callback would be a new closure per event.
      for (let i = 0; i < projections.length; i++)
        states[i] = (projections[i] as AnyProjection).evolve(states[i], event)
    },
    views: () =>
      Object.fromEntries(projections.map((p, i) => [p.name, { version: p.version, view: p.view(states[i]) }])),
    lastSeq: () => last
  }
}

/** Folds a finite sequence of events through one projection and returns its view. */
export const project = <S, V>(p: Projection<S, V>, events: Iterable<RecordedEvent>): V => {
  let state = p.init()
  let last = 0
  for (const e of events) {
    if (e.seq <= last) continue
    last = e.seq
    state = p.evolve(state, e)
  }
  return p.view(state)
}

/**
 * A projection that pushes every event into `events` (its view is null): what a reader that wants
 * the whole recorded log hands a replay.
 */
export const collectInto = (events: RecordedEvent[]): Projection<RecordedEvent[], null> => ({
  name: 'events',
  version: 1,
  init: () => events,
  evolve: (s, e) => {
    s.push(e)
    return s
  },
  view: () => null
})
