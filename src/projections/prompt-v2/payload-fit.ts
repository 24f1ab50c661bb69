/**
 * What the prompt guard (guard.ts) knows of its payloads before it fits them to a room: each
 * payload's sizes and notes, made once per payload, and the sizing of one working set, the arrays
 * its trim and drops read. Verify renders every prompt of a case again, and a working set mostly
 * begins with the payloads of the one before it (the same objects, working-set.ts): a sizing made
 * from the sizing before takes over what it holds of that common beginning and sizes the rest. Either
 * way it holds the same numbers (guard-reference compares the guard with its frozen copy). Pure.
 */
import type { CaptureView } from '../capture-text.js'
import { linesSize, viewSizes, type ViewSizes } from './view-sizes.js'
import type { OlderLine, Payload } from './working-set.js'
import type { TrimSizing } from './trim-ahead.js'

/** Items a payload keeps before the guard drops it to its summary. */
export const MIN_ITEMS = 3

export const OLDER_HEADER = 'Older evidence (cite it, or ask its query again, to see it):'

/** The line that names the older entries left out (none when `from` is 0). */
export const olderMarker = (older: readonly OlderLine[], from: number): string[] =>
  from === 0
    ? []
    : [
        `  [${older[0]?.id ?? ''}–${older[from - 1]?.id ?? ''}: ${from} older evidence entries are not listed (the prompt limit); asking their query again shows them]`
      ]

/** What the guard derives from one payload, whatever the room and the other payloads. */
export interface PayloadFit {
  /** The size of its lines with `shown` items (null: its summary), without rendering them. */
  readonly sizeOf: (shown: number | null) => number
  /** Its view's sizes and blocks (view-sizes.ts). */
  readonly sizes: ViewSizes
  /** Its size is `fixed` plus its view's (view-sizes.ts): its header, and the view's head. */
  readonly fixed: number
  /** Its items, and its size with all of them and as its summary. */
  readonly items: number
  readonly whole: number
  readonly summary: number
  /** Its floor (items kept at least) and the size there, when it is kept whole and when not. */
  readonly floor: { readonly kept: number; readonly plain: number }
  readonly floorSize: { readonly kept: number; readonly plain: number }
  /** The note when it is shown as its summary. */
  readonly summaryNote: string
  /** The length of the longest note on it (see longestNotes in render.ts). */
  readonly longestNote: number
}

/**
 * Payloads are immutable and, in verify, the same object across the prompts of a case
 * (working-set.ts): what the guard derives from one is made once per payload.
 */
const payloadFits = new WeakMap<Payload, PayloadFit>()
export const payloadFit = (p: Payload): PayloadFit => {
  let known = payloadFits.get(p)
  if (known === undefined) {
    const v = viewSizes(p.view)
    const fixed = p.header.length + 1 + v.head
    const summary = p.summary.length + 1
    const sizeOf = (shown: number | null): number => (shown === null ? summary : fixed + v.upTo(shown))
    const items = p.view.items.length
    const plain = Math.min(MIN_ITEMS, items)
    const kept = p.latest ? items : plain
    known = {
      sizeOf,
      sizes: v,
      fixed,
      items,
      whole: sizeOf(items),
      summary,
      floor: { kept, plain },
      floorSize: { kept: sizeOf(kept), plain: sizeOf(plain) },
      summaryNote: `${p.id} shown as a one-line summary`,
      longestNote: Math.max(
        `${p.id}: ${p.view.unit} ${items}-${items} not shown`.length,
        `${p.id} shown as a one-line summary`.length
      )
    }
    payloadFits.set(p, known)
  }
  return known
}

/**
 * The size of the older-evidence lines from `from` on, without rendering them: suffix sums of
 * their entries (made once per list: verify's working sets share one while it stays the same).
 */
const olderSizers = new WeakMap<readonly OlderLine[], (from: number) => number>()
export const olderSizer = (older: readonly OlderLine[]): ((from: number) => number) => {
  let known = olderSizers.get(older)
  if (known === undefined) {
    const suffix = new Array<number>(older.length + 1).fill(0)
    for (let i = older.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + (older[i]?.text.length ?? 0) + 1
    // each size made once: the marker line is built to be measured
    const sizes = new Array<number>(older.length + 1).fill(-1)
    known = (from) => {
      if (older.length === 0) return 0
      let size = sizes[from] ?? -1
      if (size < 0) {
        size = OLDER_HEADER.length + 1 + linesSize(olderMarker(older, from)) + (suffix[from] ?? 0)
        sizes[from] = size
      }
      return size
    }
    olderSizers.set(older, known)
  }
  return known
}

/** What the trim and the drops read of one working set under one option, computed once for every room it is fitted to. */
export interface Sizing extends TrimSizing {
  readonly payloads: readonly Payload[]
  /** Whether the latest result is kept whole (`newestWhole`). */
  readonly keep: boolean
  readonly fits: readonly PayloadFit[]
  /** Each payload's age (its trim order's third key). */
  readonly ages: readonly number[]
  /** Each payload's size whole and as its summary. */
  readonly wholes: readonly number[]
  readonly summaries: readonly number[]
  /** Each payload's size at its floor, and the least of that and its whole size (no trim ends smaller). */
  readonly floorSizes: readonly number[]
  readonly least: readonly number[]
  /** Sums over the payloads: whole sizes, least sizes, longest notes. */
  readonly wholeTotal: number
  readonly leastTotal: number
  readonly notesTotal: number
  /** How many payloads are larger at their floor than whole, and how many are latest results. */
  readonly unusual: number
  readonly latest: number
}

/** The arrays of a sizing one payload at a time: from scratch, or from the sizing before (see sizingOf). */
interface Draft {
  fits: PayloadFit[]
  sizeOf: Array<(shown: number | null) => number>
  views: CaptureView[]
  fixed: number[]
  ages: number[]
  wholes: number[]
  summaries: number[]
  floors: number[]
  floorSizes: number[]
  ranks: number[]
  least: number[]
  wholeTotal: number
  leastTotal: number
  notesTotal: number
  unusual: number
  latest: number
}

/** Sets (or appends) payload `i`'s own entries, adding it to the totals. */
const setOwn = (d: Draft, i: number, p: Payload): void => {
  const f = payloadFit(p)
  d.fits[i] = f
  d.sizeOf[i] = f.sizeOf
  d.views[i] = p.view
  d.fixed[i] = f.fixed
  d.ages[i] = p.age
  d.wholes[i] = f.whole
  d.summaries[i] = f.summary
  d.wholeTotal += f.whole
  d.notesTotal += f.longestNote
  if (p.latest) d.latest++
}

/** Sets (or appends) payload `i`'s entries under option `keep` (its own are set), adding it to the totals. */
const setKept = (d: Draft, i: number, p: Payload, keep: boolean): void => {
  const f = d.fits[i] as PayloadFit
  const floorSize = keep ? f.floorSize.kept : f.floorSize.plain
  d.floors[i] = keep ? f.floor.kept : f.floor.plain
  d.floorSizes[i] = floorSize
  d.ranks[i] = keep && p.cited ? 1 : 0
  d.least[i] = Math.min(floorSize, f.whole)
  d.leastTotal += Math.min(floorSize, f.whole)
  if (floorSize > f.whole) d.unusual++
}

/** Takes payload `i` of sizing `b` out of the totals of `d` (its entries of this option too when `same`). */
const unsetAt = (d: Draft, b: Sizing, i: number, same: boolean): void => {
  d.wholeTotal -= b.wholes[i] ?? 0
  d.notesTotal -= b.fits[i]?.longestNote ?? 0
  if (b.payloads[i]?.latest === true) d.latest--
  if (same) {
    d.leastTotal -= b.least[i] ?? 0
    if ((b.floorSizes[i] ?? 0) > (b.wholes[i] ?? 0)) d.unusual--
  }
}

/**
 * The sizing of `payloads` under `keep`; `before`: the sizing of a working set before (of either
 * option), whose entries it takes over where a payload is the same object at the same place (those
 * of this option only from a sizing of this option), sizing only the payloads that differ.
 */
export const sizingOf = (payloads: readonly Payload[], keep: boolean, before?: Sizing): Sizing => {
  const n = payloads.length
  const b = before
  const k = b === undefined ? 0 : Math.min(n, b.payloads.length)
  const same = b !== undefined && b.keep === keep
  const d: Draft = {
    fits: b === undefined ? [] : b.fits.slice(0, k),
    sizeOf: b === undefined ? [] : b.sizeOf.slice(0, k),
    views: b === undefined ? [] : b.views.slice(0, k),
    fixed: b === undefined ? [] : b.fixed.slice(0, k),
    ages: b === undefined ? [] : b.ages.slice(0, k),
    wholes: b === undefined ? [] : b.wholes.slice(0, k),
    summaries: b === undefined ? [] : b.summaries.slice(0, k),
    floors: b !== undefined && same ? b.floors.slice(0, k) : [],
    floorSizes: b !== undefined && same ? b.floorSizes.slice(0, k) : [],
    ranks: b !== undefined && same ? b.ranks.slice(0, k) : [],
    least: b !== undefined && same ? b.least.slice(0, k) : [],
    wholeTotal: b?.wholeTotal ?? 0,
    leastTotal: b !== undefined && same ? b.leastTotal : 0,
    notesTotal: b?.notesTotal ?? 0,
    unusual: b !== undefined && same ? b.unusual : 0,
    latest: b?.latest ?? 0
  }
  // The entries past this working set's end leave the totals.
  if (b !== undefined) for (let i = k; i < b.payloads.length; i++) unsetAt(d, b, i, same)
  for (let i = 0; i < n; i++) {
    const p = payloads[i] as Payload
    const taken = b !== undefined && i < k && p === b.payloads[i]
    if (taken && same) continue
    if (!taken) {
      if (b !== undefined && i < k) unsetAt(d, b, i, same)
      setOwn(d, i, p)
    }
    setKept(d, i, p, keep)
  }
  return { payloads, keep, ...d }
}

/** The order payloads are dropped to their summary: older results, then cited (last first), the latest last (unless kept). */
export const dropOrder = (payloads: readonly Payload[], keepLatest: boolean): number[] => {
  const order: number[] = []
  for (let i = payloads.length - 1; i >= 0; i--) {
    const p = payloads[i]
    if (p !== undefined && !p.cited && !p.latest) order.push(i)
  }
  for (let i = payloads.length - 1; i >= 0; i--) {
    const p = payloads[i]
    if (p?.cited === true && !p.latest) order.push(i)
  }
  if (!keepLatest) for (let i = 0; i < payloads.length; i++) if (payloads[i]?.latest === true) order.push(i)
  return order
}
