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
import { linesSize, viewSizes } from './view-sizes.js'
import type { OlderLine, Payload } from './working-set.js'
import { candidateHeap, precedes } from './candidate-heap.js'
import { trimAhead, type TrimSizing } from './trim-ahead.js'

/** Items a payload keeps before the guard drops it to its summary. */
export const MIN_ITEMS = 3

export const WORKING_SET_HEADER = 'Working set (evidence your hypotheses cite, then your latest results):'
export const OLDER_HEADER = 'Older evidence (cite it, or ask its query again, to see it):'

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
  /** Characters of `lines` joined with LF (plus one LF per line). */
  readonly size: number
}

const payloadLines = (p: Payload, shown: number | null): string[] =>
  shown === null ? [p.summary] : [p.header, ...viewLines(p.view, shown)]

/** The line that names the older entries left out (none when `from` is 0). */
const olderMarker = (older: readonly OlderLine[], from: number): string[] =>
  from === 0
    ? []
    : [
        `  [${older[0]?.id ?? ''}–${older[from - 1]?.id ?? ''}: ${from} older evidence entries are not listed (the prompt limit); asking their query again shows them]`
      ]

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

/** Whether payload `p` is kept whole under `o`. */
const kept = (p: Payload | undefined, o: GuardOptions): boolean => o.newestWhole === true && (p?.latest ?? false)

/** The order payloads are dropped to their summary: older results, then cited (last first), the latest last. */
const dropOrder = (payloads: readonly Payload[], o: GuardOptions): number[] => {
  const idx = payloads.map((_, i) => i)
  const recent = idx.filter((i) => !(payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse()
  const cited = idx.filter((i) => (payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse()
  const latest = idx.filter((i) => (payloads[i]?.latest ?? false) && !kept(payloads[i], o))
  return [...recent, ...cited, ...latest]
}

/** What the guard derives from one payload, whatever the room and the other payloads. */
interface PayloadFit {
  /** The size of its lines with `shown` items (null: its summary), without rendering them. */
  readonly sizeOf: (shown: number | null) => number
  /** Its size is `fixed` plus its view's (view-sizes.ts): its header, and the view's head. */
  readonly fixed: number
  /** Its size whole. */
  readonly whole: number
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
const payloadFit = (p: Payload): PayloadFit => {
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
      fixed,
      whole: sizeOf(items),
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

/** The length of the longest note the guard can write on `p`. */
export const longestNoteOf = (p: Payload): number => payloadFit(p).longestNote

/** The size of the older-evidence lines from `from` on, without rendering them: suffix sums of their entries. */
const olderSizer = (older: readonly OlderLine[]): ((from: number) => number) => {
  const suffix = new Array<number>(older.length + 1).fill(0)
  for (let i = older.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + (older[i]?.text.length ?? 0) + 1
  return (from) =>
    older.length === 0 ? 0 : OLDER_HEADER.length + 1 + linesSize(olderMarker(older, from)) + (suffix[from] ?? 0)
}

/** What the trim and the drops read of one working set, computed once for every room it is fitted to. */
interface Sizing extends TrimSizing {
  readonly payloads: readonly Payload[]
  /** Each payload's size at its floor. */
  readonly floorSizes: readonly number[]
}

/**
 * Trims inside the kept payloads, largest first, until `room` holds them or every one is at its
 * floor: one item at a time from the payload that is largest then (the older among equals); with
 * `newestWhole`, the uncited before the cited.
 */
const trim = (z: Sizing, shown: Array<number | null>, fixed: number, room: number): void => {
  const sizes = shown.map((n, i) => z.sizeOf[i]?.(n) ?? 0)
  let total = fixed
  for (const size of sizes) total += size
  if (total <= room) return
  // When no state on the way fits (a payload is never smaller than at its floor or as it is now:
  // a continuation marker only shrinks as items go), trimming ends with all of them at the floor.
  let atFloor = fixed
  shown.forEach((n, i) => {
    atFloor += n === null || n <= (z.floors[i] ?? 0) ? (sizes[i] ?? 0) : Math.min(z.floorSizes[i] ?? 0, sizes[i] ?? 0)
  })
  if (atFloor > room) {
    shown.forEach((n, i) => {
      if (n !== null && n > (z.floors[i] ?? 0)) shown[i] = z.floors[i] ?? 0
    })
    return
  }
  // The steps no state on the way can fit with, at once (trim-ahead.ts).
  total = trimAhead(z, shown, sizes, total, room)
  const heap = candidateHeap()
  shown.forEach((n, i) => {
    if (n !== null && n > (z.floors[i] ?? 0))
      heap.push({ i, rank: z.ranks[i] ?? 0, size: sizes[i] ?? 0, age: z.payloads[i]?.age ?? 0 })
  })
  while (total > room) {
    const c = heap.pop()
    if (c === undefined) return
    const { i, rank: r, age } = c
    const least = z.floors[i] ?? 0
    const sizeAt = z.sizeOf[i] ?? (() => 0)
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
      if (n <= least) break
      if (total <= room) return
      if (next !== undefined && !precedes(r, size, age, i, next)) {
        heap.push({ i, rank: r, size, age })
        break
      }
    }
  }
}

/** Fits with everything given way: every payload a summary, no older entry listed (see `fit`). */
const leastFits = new WeakSet<Fitted>()

/** {@link render} in runs of lines: each payload's view as one block (see Fitted). */
const renderPieces = (
  payloads: readonly Payload[],
  shown: ReadonlyArray<number | null>,
  older: readonly OlderLine[],
  olderFrom: number
): string[] => {
  const out: string[] = payloads.length === 0 ? [] : [WORKING_SET_HEADER]
  payloads.forEach((p, i) => {
    const n = shown[i] ?? null
    if (n === null) out.push(p.summary)
    else {
      out.push(p.header)
      const block = viewSizes(p.view).block(n)
      if (block !== null) out.push(block)
    }
  })
  if (older.length > 0) out.push(OLDER_HEADER, ...olderMarker(older, olderFrom))
  for (let k = olderFrom; k < older.length; k++) out.push(older[k]?.text ?? '')
  return out
}

/** The fit showing `shown` items of each payload (null: its summary) and the older entries from `olderFrom` on; `around`: the size of the headers and older entries. */
const fittedOf = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  shown: ReadonlyArray<number | null>,
  olderFrom: number,
  around: number,
  sizeOf: ReadonlyArray<(shown: number | null) => number>
): Fitted => {
  const notes: string[] = []
  let size = around
  payloads.forEach((p, i) => {
    const n = shown[i] ?? null
    size += sizeOf[i]?.(n) ?? 0
    if (n === null) notes.push(payloadFit(p).summaryNote)
    else if (n < p.view.items.length) notes.push(`${p.id}: ${p.view.unit} ${n + 1}-${p.view.items.length} not shown`)
  })
  if (olderFrom > 0) notes.push(`older evidence ${older[0]?.id ?? ''}–${older[olderFrom - 1]?.id ?? ''} not listed`)
  // Rendered when read: a prompt is fitted more than once and shows only its last fit.
  let lines: readonly string[] | undefined
  let pieces: readonly string[] | undefined
  const made: Fitted = {
    get lines() {
      lines ??= render(payloads, shown, older, olderFrom)
      return lines
    },
    get pieces() {
      pieces ??= renderPieces(payloads, shown, older, olderFrom)
      return pieces
    },
    notes,
    size
  }
  if (olderFrom === older.length && shown.every((n) => n === null)) leastFits.add(made)
  return made
}

/**
 * The guard of one working set, for any room: what does not depend on the room is computed once
 * (a prompt is fitted with and without room for the guard's line, and again at each step of the
 * last resort). `fitsWhole(room)`: whether the working set fits whole, when `fit(room)` leaves
 * nothing out.
 */
export const workingSetFitter = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  o: GuardOptions = {}
): { readonly fit: (room: number) => Fitted; readonly fitsWhole: (room: number) => boolean } => {
  const fits = payloads.map(payloadFit)
  const sizeOf = fits.map((f) => f.sizeOf)
  const keep = o.newestWhole === true
  const z: Sizing = {
    payloads,
    sizeOf,
    views: payloads.map((p) => p.view),
    fixed: fits.map((f) => f.fixed),
    floors: fits.map((f) => (keep ? f.floor.kept : f.floor.plain)),
    floorSizes: fits.map((f) => (keep ? f.floorSize.kept : f.floorSize.plain)),
    ranks: payloads.map((p) => (keep && p.cited ? 1 : 0))
  }
  const { floors } = z
  const wholeSizes = fits.map((f) => f.whole)
  const olderSize = olderSizer(older)
  const header = payloads.length === 0 ? 0 : WORKING_SET_HEADER.length + 1
  const wholeTotal = header + wholeSizes.reduce((n, size) => n + size, 0) + olderSize(0)
  const order = dropOrder(payloads, o)
  const full = (dropped: ReadonlySet<number>): Array<number | null> =>
    payloads.map((p, k) => (dropped.has(k) ? null : p.view.items.length))
  // The payloads at their floors (or whole, where that is smaller): no trim ends smaller.
  const least = payloads.map((_, i) => Math.min(z.floorSizes[i] ?? 0, wholeSizes[i] ?? 0))
  const usual = payloads.every((_, i) => (z.floorSizes[i] ?? 0) <= (wholeSizes[i] ?? 0))
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
    let shown: Array<number | null> = payloads.map((p) => p.view.items.length)
    // The size of render(payloads, shown, older, from), computed from the parts' sizes.
    const payloadsSize = (): number => shown.reduce<number>((n, k, i) => n + (sizeOf[i]?.(k) ?? 0), header)
    let bound = header + olderSize(0) + least.reduce((n, size) => n + size, 0)
    if (usual) {
      // No payload is larger at its floor than whole (the usual case): a trim fits exactly when
      // the payloads at their floors fit, so the drops it takes are counted without trimming after each.
      const dropped = new Set<number>()
      for (const i of order) {
        if (bound <= room) break
        dropped.add(i)
        bound += (sizeOf[i]?.(null) ?? 0) - (least[i] ?? 0)
      }
      shown = full(dropped)
      trim(z, shown, header + olderSize(0), room)
      if (payloadsSize() + olderSize(0) <= room) return fitted(shown, 0)
    } else {
      // Every drop trims anew from whole. A trim cannot fit when the payloads at their floors do
      // not: it then leaves them at their floors. Only the drops where they fit are trimmed; the
      // others are known without it.
      const dropped = new Set<number>()
      for (let j = 0; ; j++) {
        if (bound <= room) {
          shown = full(dropped)
          trim(z, shown, header + olderSize(0), room)
          if (payloadsSize() + olderSize(0) <= room) return fitted(shown, 0)
        } else if (j === order.length) shown = payloads.map((_, k) => (dropped.has(k) ? null : (floors[k] ?? 0)))
        const i = order[j]
        if (i === undefined) break
        dropped.add(i)
        bound += (sizeOf[i]?.(null) ?? 0) - (least[i] ?? 0)
      }
    }
    // The older evidence gives way, oldest first.
    const shownSize = payloadsSize()
    let from = 0
    while (from < older.length && shownSize + olderSize(from) > room) from++
    // The latest result alone is larger than what is left: fit as without the option.
    if (o.newestWhole === true && shownSize + olderSize(from) > room && payloads.some((p) => p.latest)) {
      withoutOption ??= workingSetFitter(payloads, older).fit
      return withoutOption(room)
    }
    return fitted(shown, from)
  }
  const fitted = (shown: ReadonlyArray<number | null>, olderFrom: number): Fitted =>
    fittedOf(payloads, older, shown, olderFrom, header + olderSize(olderFrom), sizeOf)
  return { fit, fitsWhole: (room) => wholeTotal <= room }
}

/** Fits the working set and the older evidence into `room` characters (see the module comment). */
export const fitWorkingSet = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  room: number,
  o: GuardOptions = {}
): Fitted => workingSetFitter(payloads, older, o).fit(room)
