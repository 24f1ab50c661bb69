/**
 * The prompt guard of version 2: fits the working set into the room the fixed parts leave, and
 * says exactly what it left out. In this order, stopping as soon as the prompt fits:
 *
 * 1. trim inside payloads, largest first (the oldest first among equals): the last rows, lines,
 *    hits or blocks of a payload go, down to MIN_ITEMS of them; every continuation marker then
 *    describes what is shown (a page cut after 20 rows continues at the offset of row 21);
 * 2. drop payloads to their one-line summary: older results first, then cited evidence (the last
 *    cited first), the latest result last; after each drop the others are trimmed anew from whole;
 * 3. leave out the one-line entries of older evidence, oldest first (a marker names them).
 *
 * With `newestWhole` (investigations whose start recorded `newest_result_whole`) the latest result
 * is never trimmed nor dropped, and uncited payloads are trimmed before cited ones: older and
 * uncited material gives way first. Only when the latest result alone is larger than the room left
 * with everything else given way does the guard fit as without the option.
 *
 * Deterministic: the same payloads and room give the same lines.
 */
import { viewLines } from '../capture-text.js'
import type { OlderLine, Payload } from './working-set.js'
import { candidateHeap, precedes } from './candidate-heap.js'
import { rankOf, trimAhead } from './trim-ahead.js'
import {
  dropOrder,
  floorOf,
  floorSizeOf,
  leastOf,
  OLDER_HEADER,
  olderMarker,
  olderSizer,
  sizingOf,
  type PayloadFit,
  type Sizing
} from './payload-fit.js'

export { MIN_ITEMS, OLDER_HEADER } from './payload-fit.js'

export const WORKING_SET_HEADER = 'Working set (evidence your hypotheses cite, then your latest results):'

export interface Fitted {
  /** The working set section and the older-evidence section, as lines. */
  readonly lines: readonly string[]
  /**
   * The same lines in runs (a payload's view is one run, made once per view and items shown):
   * joined with LF they are `lines` joined with LF. What a prompt is made of.
   */
  readonly pieces: readonly string[]
  /** What was left out, in words (one entry per payload or range). */
  readonly notes: readonly string[]
  /** The characters of the notes, all together. */
  readonly noteChars: number
  /** Characters of `lines` joined with LF (plus one LF per line). */
  readonly size: number
}

const payloadLines = (p: Payload, shown: number | null): string[] =>
  shown === null ? [p.summary] : [p.header, ...viewLines(p.view, shown)]

const olderLines = (older: readonly OlderLine[], from: number): string[] =>
  older.length === 0 ? [] : [OLDER_HEADER, ...olderMarker(older, from), ...older.slice(from).map((o) => o.text)]

const render = (
  payloads: readonly Payload[],
  shown: ReadonlyArray<number | null>,
  older: readonly OlderLine[],
  olderFrom: number
): string[] => [
  ...(payloads.length === 0
    ? []
    : [WORKING_SET_HEADER, ...payloads.flatMap((p, i) => payloadLines(p, shown[i] ?? null))]),
  ...olderLines(older, olderFrom)
]

/** How the guard gives way: whether the latest result is kept whole (see the module comment). */
export interface GuardOptions {
  readonly newestWhole?: boolean
}

/**
 * Trims inside the kept payloads, largest first, until `room` holds them or every one is at its
 * floor: one item at a time from the payload that is largest then (the older among equals); with
 * `newestWhole`, the uncited before the cited. `shown` is each payload whole or a summary, `sizes`
 * their sizes and `total` their sum with `fixed`; both are updated, and the total returned.
 */
const trim = (z: Sizing, shown: Array<number | null>, sizes: number[], total: number, room: number): number => {
  const { fits, keep } = z
  if (total <= room) return total
  // When no state on the way fits (a payload is never smaller than at its floor or as it is now:
  // a continuation marker only shrinks as items go), trimming ends with all of them at the floor.
  let atFloor = total
  for (let i = 0; i < shown.length; i++) {
    const n = shown[i] ?? null
    const size = sizes[i] ?? 0
    const f = fits[i] as PayloadFit
    if (n !== null && n > floorOf(f, keep)) atFloor += Math.min(floorSizeOf(f, keep), size) - size
  }
  if (atFloor > room) {
    for (let i = 0; i < shown.length; i++) {
      const n = shown[i] ?? null
      const f = fits[i] as PayloadFit
      if (n !== null && n > floorOf(f, keep)) {
        shown[i] = floorOf(f, keep)
        total += floorSizeOf(f, keep) - (sizes[i] ?? 0)
        sizes[i] = floorSizeOf(f, keep)
      }
    }
    return total
  }
  // The steps no state on the way can fit with, at once (trim-ahead.ts).
  total = trimAhead(z, shown, sizes, total, room)
  const heap = candidateHeap()
  for (let i = 0; i < shown.length; i++) {
    const n = shown[i] ?? null
    const f = fits[i] as PayloadFit
    if (n !== null && n > floorOf(f, keep)) heap.push({ i, rank: rankOf(f, keep), size: sizes[i] ?? 0, age: f.age })
  }
  while (total > room) {
    const c = heap.pop()
    if (c === undefined) return total
    const { i, rank: r, age } = c
    const f = fits[i] as PayloadFit
    const least = floorOf(f, keep)
    const sizeAt = f.sizeOf
    const next = heap.peek()
    // One item at a time from this payload while it stays the next to trim (the heap's order is
    // strict, so it is next exactly while it comes before the heap's top).
    let size = c.size
    for (let n = shown[i] ?? 0; ; ) {
      n--
      shown[i] = n
      const smaller = sizeAt(n)
      total += smaller - size
      size = smaller
      sizes[i] = size
      if (n <= least) break
      if (total <= room) return total
      if (next !== undefined && !precedes(r, size, age, i, next)) {
        heap.push({ i, rank: r, size, age })
        break
      }
    }
  }
  return total
}

/** Fits with everything given way: every payload a summary, no older entry listed (see `fit`). */
const leastFits = new WeakSet<Fitted>()

/** {@link render} in runs of lines: each payload's view as one block (see Fitted). */
const renderPieces = (
  payloads: readonly Payload[],
  fits: readonly PayloadFit[],
  shown: ReadonlyArray<number | null>,
  older: readonly OlderLine[],
  olderFrom: number
): string[] => {
  const out: string[] = payloads.length === 0 ? [] : [WORKING_SET_HEADER]
  for (let i = 0; i < payloads.length; i++) {
    const p = payloads[i] as Payload
    const n = shown[i] ?? null
    if (n === null) out.push(p.summary)
    else {
      out.push(p.header)
      const block = (fits[i] as PayloadFit).sizes.block(n)
      if (block !== null) out.push(block)
    }
  }
  if (older.length > 0) out.push(OLDER_HEADER, ...olderMarker(older, olderFrom))
  for (let k = olderFrom; k < older.length; k++) out.push(older[k]?.text ?? '')
  return out
}

/** A fit whose lines and runs are made when read; a class (a literal defines its getters at each fit). */
class FitOf implements Fitted {
  #lines: readonly string[] | undefined = undefined
  #pieces: readonly string[] | undefined = undefined
  constructor(
    private readonly payloads: readonly Payload[],
    private readonly fits: readonly PayloadFit[],
    private readonly older: readonly OlderLine[],
    private readonly shown: ReadonlyArray<number | null>,
    private readonly olderFrom: number,
    readonly notes: readonly string[],
    readonly noteChars: number,
    readonly size: number
  ) {}
  get lines(): readonly string[] {
    this.#lines ??= render(this.payloads, this.shown, this.older, this.olderFrom)
    return this.#lines
  }
  get pieces(): readonly string[] {
    this.#pieces ??= renderPieces(this.payloads, this.fits, this.shown, this.older, this.olderFrom)
    return this.#pieces
  }
}

/** The fit showing `shown` items of each payload (null: its summary) and the older entries from `olderFrom` on, `size` characters in all. */
const fittedOf = (
  payloads: readonly Payload[],
  fits: readonly PayloadFit[],
  older: readonly OlderLine[],
  shown: ReadonlyArray<number | null>,
  olderFrom: number,
  size: number
): Fitted => {
  const notes: string[] = []
  let noteChars = 0
  let least = olderFrom === older.length
  for (let i = 0; i < payloads.length; i++) {
    const n = shown[i] ?? null
    if (n === null) {
      const note = (fits[i] as PayloadFit).summaryNote
      notes.push(note)
      noteChars += note.length
    } else {
      least = false
      const items = (fits[i] as PayloadFit).items
      if (n < items) {
        const p = payloads[i] as Payload
        const note = `${p.id}: ${p.view.unit} ${n + 1}-${items} not shown`
        notes.push(note)
        noteChars += note.length
      }
    }
  }
  if (olderFrom > 0) {
    const note = `older evidence ${older[0]?.id ?? ''}–${older[olderFrom - 1]?.id ?? ''} not listed`
    notes.push(note)
    noteChars += note.length
  }
  const made = new FitOf(payloads, fits, older, shown, olderFrom, notes, noteChars, size)
  if (least) leastFits.add(made)
  return made
}

/** Every payload whole but the first `dropped` of the drop order (summaries): what each shows, the sizes, their sum. */
const wholeBut = (
  z: Sizing,
  order: readonly number[],
  dropped: number
): { shown: Array<number | null>; sizes: number[]; total: number } => {
  const shown: Array<number | null> = z.items.slice()
  const sizes = z.wholes.slice()
  let total = z.wholeTotal
  for (let j = 0; j < dropped; j++) {
    const i = order[j] ?? 0
    const summary = z.fits[i]?.summary ?? 0
    shown[i] = null
    total += summary - (sizes[i] ?? 0)
    sizes[i] = summary
  }
  return { shown, sizes, total }
}

/** The guard of one working set (see workingSetFitter). */
export interface WorkingSetFitter {
  readonly fit: (room: number) => Fitted
  readonly fitsWhole: (room: number) => boolean
  /** The notes of the longest guard line a fit of its payloads can need: how many, and their characters. */
  readonly longestNotes: { readonly count: number; readonly chars: number }
}

/** The sizings a case's working sets were fitted with last, one per option (see sizingOf in payload-fit.ts). */
export interface SizingMemo {
  kept: Sizing | undefined
  plain: Sizing | undefined
}

export const sizingMemo = (): SizingMemo => ({ kept: undefined, plain: undefined })

/** The sizing of `payloads` under `keep`, from the one made last for the same case (or `also`) when there is a memo. */
const sizingFor = (
  payloads: readonly Payload[],
  keep: boolean,
  memo: SizingMemo | undefined,
  also?: Sizing
): Sizing => {
  const z = sizingOf(payloads, keep, (keep ? memo?.kept : memo?.plain) ?? also)
  if (memo !== undefined) {
    if (keep) memo.kept = z
    else memo.plain = z
  }
  return z
}

/**
 * The guard of one working set, for any room: what does not depend on the room is computed once
 * (a prompt is fitted with and without room for the guard's line, and again at each step of the
 * last resort). `fitsWhole(room)`: whether the working set fits whole, when `fit(room)` leaves
 * nothing out. `memo`: the sizings of the working sets fitted before for the same case (verify).
 */
export const workingSetFitter = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  o: GuardOptions = {},
  memo?: SizingMemo
): WorkingSetFitter => fitterOf(sizingFor(payloads, o.newestWhole === true, memo), older, memo)

/** {@link workingSetFitter} over a sizing of its payloads. */
const fitterOf = (z: Sizing, older: readonly OlderLine[], memo: SizingMemo | undefined): WorkingSetFitter => {
  const { payloads, fits, keep } = z
  const n = payloads.length
  const olderSize = olderSizer(older)
  const header = n === 0 ? 0 : WORKING_SET_HEADER.length + 1
  const wholeTotal = header + z.wholeTotal + olderSize(0)
  const { leastTotal } = z
  // No payload is larger at its floor than whole (the usual case).
  const usual = z.unusual === 0
  const order = dropOrder(payloads, keep)
  let withoutOption: ((room: number) => Fitted) | undefined
  // The largest room fitted with everything given way (every payload a summary, no older entry):
  // a smaller room gives that same fit (drops, trims and the older entries only go further).
  let floor: { readonly room: number; readonly fitted: Fitted } | undefined
  const fit = (room: number): Fitted => {
    if (floor !== undefined && room <= floor.room) return floor.fitted
    const got = fitIn(room)
    if (leastFits.has(got) && (floor === undefined || room > floor.room)) floor = { room, fitted: got }
    return got
  }
  const fitIn = (room: number): Fitted => {
    const olderWhole = olderSize(0)
    let shown: Array<number | null> = []
    // The size of the working set's section as shown (its header and payloads).
    let shownSize = 0
    let bound = header + olderWhole + leastTotal
    if (usual) {
      // A trim fits exactly when the payloads at their floors fit, so the drops it takes are
      // counted without trimming after each.
      let dropped = 0
      for (; dropped < order.length && bound > room; dropped++) {
        const f = fits[order[dropped] ?? 0] as PayloadFit
        bound += f.summary - leastOf(f, keep)
      }
      const start = wholeBut(z, order, dropped)
      shown = start.shown
      const total = trim(z, shown, start.sizes, header + olderWhole + start.total, room)
      if (total <= room) return fitted(shown, 0, total - olderWhole)
      shownSize = total - olderWhole
    } else {
      // Every drop trims anew from whole. A trim cannot fit when the payloads at their floors do
      // not: it then leaves them at their floors. Only the drops where they fit are trimmed; the
      // others are known without it.
      for (let j = 0; ; j++) {
        if (bound <= room) {
          const start = wholeBut(z, order, j)
          shown = start.shown
          const total = trim(z, shown, start.sizes, header + olderWhole + start.total, room)
          if (total <= room) return fitted(shown, 0, total - olderWhole)
          shownSize = total - olderWhole
        } else if (j === order.length) {
          const start = wholeBut(z, order, j)
          shown = start.shown
          shownSize = header + start.total
          for (let k = 0; k < n; k++)
            if (shown[k] !== null) {
              const f = fits[k] as PayloadFit
              shown[k] = floorOf(f, keep)
              shownSize += floorSizeOf(f, keep) - (start.sizes[k] ?? 0)
            }
        }
        const i = order[j]
        if (i === undefined) break
        const f = fits[i] as PayloadFit
        bound += f.summary - leastOf(f, keep)
      }
    }
    // The older evidence gives way, oldest first.
    let from = 0
    while (from < older.length && shownSize + olderSize(from) > room) from++
    // The latest result alone is larger than what is left: fit as without the option.
    if (keep && shownSize + olderSize(from) > room && z.latest > 0) {
      withoutOption ??= fitterOf(sizingFor(payloads, false, memo, z), older, memo).fit
      return withoutOption(room)
    }
    return fitted(shown, from, shownSize)
  }
  /** The fit showing `shown`, whose working set section is `shownSize` characters, and the older entries from `olderFrom` on. */
  const fitted = (shown: ReadonlyArray<number | null>, olderFrom: number, shownSize: number): Fitted =>
    fittedOf(payloads, fits, older, shown, olderFrom, shownSize + olderSize(olderFrom))
  const olderNote =
    older.length === 0
      ? 0
      : `older evidence ${older[0]?.id ?? ''}–${older[older.length - 1]?.id ?? ''} not listed`.length
  return {
    fit,
    fitsWhole: (room) => wholeTotal <= room,
    longestNotes: { count: n + (older.length === 0 ? 0 : 1), chars: z.notesTotal + olderNote }
  }
}

/** Fits the working set and the older evidence into `room` characters (see the module comment). */
export const fitWorkingSet = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  room: number,
  o: GuardOptions = {}
): Fitted => workingSetFitter(payloads, older, o).fit(room)
