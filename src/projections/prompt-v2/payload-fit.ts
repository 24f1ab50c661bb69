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
  /** The payload's view, age (its trim order's third key) and flags. */
  readonly view: CaptureView
  readonly age: number
  readonly cited: boolean
  readonly latest: boolean
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
  /**
   * Its floor (items kept at least), the size there, and the least of that and its whole size (no
   * trim ends smaller), when it is kept whole (`newestWhole`) and when not.
   */
  readonly floorKept: number
  readonly floorPlain: number
  readonly floorSizeKept: number
  readonly floorSizePlain: number
  readonly leastKept: number
  readonly leastPlain: number
  /** The note when it is shown as its summary. */
  readonly summaryNote: string
  /** The length of the longest note on it (see longestNotes in render.ts). */
  readonly longestNote: number
}

/** A payload's floor, its size there and its least size, under option `keep`. */
export const floorOf = (f: PayloadFit, keep: boolean): number => (keep ? f.floorKept : f.floorPlain)
export const floorSizeOf = (f: PayloadFit, keep: boolean): number => (keep ? f.floorSizeKept : f.floorSizePlain)
export const leastOf = (f: PayloadFit, keep: boolean): number => (keep ? f.leastKept : f.leastPlain)

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
    const whole = sizeOf(items)
    known = {
      view: p.view,
      age: p.age,
      cited: p.cited,
      latest: p.latest,
      sizeOf,
      sizes: v,
      fixed,
      items,
      whole,
      summary,
      floorKept: kept,
      floorPlain: plain,
      floorSizeKept: sizeOf(kept),
      floorSizePlain: sizeOf(plain),
      leastKept: Math.min(sizeOf(kept), whole),
      leastPlain: Math.min(sizeOf(plain), whole),
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
export interface Sizing {
  readonly payloads: readonly Payload[]
  /** Whether the latest result is kept whole (`newestWhole`). */
  readonly keep: boolean
  /** Each payload's fit, in order, and its items and size whole (a fit starts from them). */
  readonly fits: readonly PayloadFit[]
  readonly items: readonly number[]
  readonly wholes: readonly number[]
  /** Sums over the payloads: whole sizes, least sizes (under `keep`), longest notes. */
  readonly wholeTotal: number
  readonly leastTotal: number
  readonly notesTotal: number
  /** How many payloads are larger at their floor than whole (under `keep`), and how many are latest results. */
  readonly unusual: number
  readonly latest: number
}

/**
 * The sizing of `payloads` under `keep`; `before`: the sizing of a working set before (of either
 * option), whose fits it takes over where a payload is the same object at the same place, fitting
 * only the payloads that differ and adjusting its sums for them.
 */
export const sizingOf = (payloads: readonly Payload[], keep: boolean, before?: Sizing): Sizing => {
  const n = payloads.length
  const b = before
  const k = b === undefined ? 0 : Math.min(n, b.payloads.length)
  const fits = b === undefined ? [] : b.fits.slice(0, k)
  const items = b === undefined ? [] : b.items.slice(0, k)
  const wholes = b === undefined ? [] : b.wholes.slice(0, k)
  let wholeTotal = b?.wholeTotal ?? 0
  let notesTotal = b?.notesTotal ?? 0
  let latest = b?.latest ?? 0
  // the sums of the option, from the sizing before when it has the same
  const same = b?.keep === keep
  let leastTotal = same ? (b?.leastTotal ?? 0) : 0
  let unusual = same ? (b?.unusual ?? 0) : 0
  const drop = (f: PayloadFit): void => {
    wholeTotal -= f.whole
    notesTotal -= f.longestNote
    if (f.latest) latest--
    if (same) {
      leastTotal -= leastOf(f, keep)
      if (floorSizeOf(f, keep) > f.whole) unusual--
    }
  }
  const add = (f: PayloadFit): void => {
    wholeTotal += f.whole
    notesTotal += f.longestNote
    if (f.latest) latest++
    if (same) {
      leastTotal += leastOf(f, keep)
      if (floorSizeOf(f, keep) > f.whole) unusual++
    }
  }
  if (b !== undefined) for (let i = k; i < b.fits.length; i++) drop(b.fits[i] as PayloadFit)
  for (let i = 0; i < n; i++) {
    const p = payloads[i] as Payload
    if (b !== undefined && i < k && p === b.payloads[i]) continue
    const f = payloadFit(p)
    if (i < k) drop(fits[i] as PayloadFit)
    fits[i] = f
    items[i] = f.items
    wholes[i] = f.whole
    add(f)
  }
  if (!same)
    for (const f of fits) {
      leastTotal += leastOf(f, keep)
      if (floorSizeOf(f, keep) > f.whole) unusual++
    }
  return { payloads, keep, fits, items, wholes, wholeTotal, leastTotal, notesTotal, unusual, latest }
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
