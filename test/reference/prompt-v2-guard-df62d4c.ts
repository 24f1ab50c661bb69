/**
 * FROZEN reference: the prompt guard of version 2 as it was before its drops stopped trimming anew
 * when a trim cannot fit (`git show df62d4c:src/projections/prompt-v2/guard.ts`, unchanged until
 * then), kept so that a seeded property test (test/projections/guard-reference.test.ts) compares
 * it with today's guard. Recorded v2 prompts are rendered again by verify, so the two must never
 * differ. Only the imports and the export's name are new; never edited.
 */
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
import { viewLines } from '../../src/projections/capture-text.js'
import type { OlderLine, Payload } from '../../src/projections/prompt-v2/working-set.js'

/** Items a payload keeps before the guard drops it to its summary. */
const MIN_ITEMS = 3

const WORKING_SET_HEADER = 'Working set (evidence your hypotheses cite, then your latest results):'
const OLDER_HEADER = 'Older evidence (cite it, or ask its query again, to see it):'

export interface Fitted {
  /** The working set section and the older-evidence section, as lines. */
  readonly lines: readonly string[]
  /** What was left out, in words (one entry per payload or range). */
  readonly notes: readonly string[]
  /** Characters of `lines` joined with LF (plus one LF per line). */
  readonly size: number
}

const linesSize = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0)

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

/** The items payload `p` keeps at least: MIN_ITEMS, or all of them when it is kept whole. */
const floorOf = (p: Payload | undefined, o: GuardOptions): number =>
  kept(p, o) ? (p?.view.items.length ?? 0) : Math.min(MIN_ITEMS, p?.view.items.length ?? 0)

/** The order payloads are dropped to their summary: older results, then cited (last first), the latest last. */
const dropOrder = (payloads: readonly Payload[], o: GuardOptions): number[] => {
  const idx = payloads.map((_, i) => i)
  const recent = idx.filter((i) => !(payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse()
  const cited = idx.filter((i) => (payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse()
  const latest = idx.filter((i) => (payloads[i]?.latest ?? false) && !kept(payloads[i], o))
  return [...recent, ...cited, ...latest]
}

/** The size of a payload's lines with `shown` items (null: its summary), without rendering them: prefix sums of its items. */
const sizer = (p: Payload): ((shown: number | null) => number) => {
  const fixed = p.header.length + 1 + linesSize(p.view.head)
  const prefix = [0]
  for (const item of p.view.items) prefix.push((prefix[prefix.length - 1] ?? 0) + linesSize(item.lines))
  const sizes = new Map<number, number>()
  return (shown) => {
    if (shown === null) return p.summary.length + 1
    let size = sizes.get(shown)
    if (size === undefined) {
      size = fixed + (prefix[shown] ?? 0) + linesSize(p.view.tail(shown))
      sizes.set(shown, size)
    }
    return size
  }
}

/** The size of the older-evidence lines from `from` on, without rendering them: suffix sums of their entries. */
const olderSizer = (older: readonly OlderLine[]): ((from: number) => number) => {
  const suffix = new Array<number>(older.length + 1).fill(0)
  for (let i = older.length - 1; i >= 0; i--) suffix[i] = (suffix[i + 1] ?? 0) + (older[i]?.text.length ?? 0) + 1
  return (from) =>
    older.length === 0 ? 0 : OLDER_HEADER.length + 1 + linesSize(olderMarker(older, from)) + (suffix[from] ?? 0)
}

/** Entries of the trim heap: a payload's index, its rank (0 first), its current size and age. */
interface Candidate {
  readonly i: number
  readonly rank: number
  readonly size: number
  readonly age: number
}

/** Whether `a` is trimmed before `b`: the lower rank, the larger, the older among equals, then the first listed. */
const before = (a: Candidate, b: Candidate): boolean =>
  a.rank < b.rank ||
  (a.rank === b.rank && (a.size > b.size || (a.size === b.size && (a.age < b.age || (a.age === b.age && a.i < b.i)))))

/** A binary heap of candidates, the next to trim on top. */
const candidateHeap = () => {
  const h: Candidate[] = []
  const swap = (a: number, b: number): void => {
    const x = h[a] as Candidate
    h[a] = h[b] as Candidate
    h[b] = x
  }
  const push = (c: Candidate): void => {
    h.push(c)
    for (let k = h.length - 1; k > 0; ) {
      const up = (k - 1) >> 1
      if (!before(h[k] as Candidate, h[up] as Candidate)) break
      swap(k, up)
      k = up
    }
  }
  const pop = (): Candidate | undefined => {
    const top = h[0]
    const last = h.pop()
    if (h.length === 0 || last === undefined) return top
    h[0] = last
    for (let k = 0; ; ) {
      const l = 2 * k + 1
      const r = l + 1
      let m = k
      if (l < h.length && before(h[l] as Candidate, h[m] as Candidate)) m = l
      if (r < h.length && before(h[r] as Candidate, h[m] as Candidate)) m = r
      if (m === k) break
      swap(k, m)
      k = m
    }
    return top
  }
  return { push, pop }
}

/**
 * Trims inside the kept payloads, largest first, until `room` holds them or every one is at its
 * floor: one item at a time from the payload that is largest then (the older among equals); with
 * `newestWhole`, the uncited before the cited.
 */
const trim = (
  payloads: readonly Payload[],
  sizeOf: ReadonlyArray<(shown: number | null) => number>,
  shown: Array<number | null>,
  fixed: number,
  room: number,
  o: GuardOptions
): void => {
  const floor = (i: number): number => floorOf(payloads[i], o)
  const rank = (i: number): number => (o.newestWhole === true && (payloads[i]?.cited ?? false) ? 1 : 0)
  const sizes = payloads.map((_, i) => sizeOf[i]?.(shown[i] ?? null) ?? 0)
  let total = fixed + sizes.reduce((a, b) => a + b, 0)
  if (total <= room) return
  // When no state on the way fits (a payload is never smaller than at its floor or as it is now:
  // a continuation marker only shrinks as items go), trimming ends with all of them at the floor.
  const atFloor = shown.map((n, i) => (n === null || n <= floor(i) ? n : floor(i)))
  if (fixed + atFloor.reduce<number>((sum, n, i) => sum + Math.min(sizeOf[i]?.(n) ?? 0, sizes[i] ?? 0), 0) > room) {
    atFloor.forEach((n, i) => {
      shown[i] = n
    })
    return
  }
  const heap = candidateHeap()
  shown.forEach((n, i) => {
    if (n !== null && n > floor(i)) heap.push({ i, rank: rank(i), size: sizes[i] ?? 0, age: payloads[i]?.age ?? 0 })
  })
  while (total > room) {
    const c = heap.pop()
    const n = c === undefined ? null : shown[c.i]
    if (c === undefined || n === null || n === undefined) return
    shown[c.i] = n - 1
    const size = sizeOf[c.i]?.(n - 1) ?? 0
    total += size - c.size
    if (n - 1 > floor(c.i)) heap.push({ ...c, size })
  }
}

/** Fits the working set and the older evidence into `room` characters (see the module comment). */
export const referenceFitWorkingSet = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  room: number,
  o: GuardOptions = {}
): Fitted => {
  const full = (): Array<number | null> => payloads.map((p) => p.view.items.length)
  let shown = full()
  const sizeOf = payloads.map(sizer)
  const olderSize = olderSizer(older)
  const header = payloads.length === 0 ? 0 : WORKING_SET_HEADER.length + 1
  // The size of render(payloads, shown, older, from), computed from the parts' sizes.
  const total = (from: number): number =>
    header + shown.reduce<number>((n, k, i) => n + (sizeOf[i]?.(k) ?? 0), 0) + olderSize(from)
  const done = (olderFrom: number): Fitted => {
    const lines = render(payloads, shown, older, olderFrom)
    const notes: string[] = []
    payloads.forEach((p, i) => {
      const n = shown[i]
      if (n === null || n === undefined) notes.push(`${p.id} shown as a one-line summary`)
      else if (n < p.view.items.length) notes.push(`${p.id}: ${p.view.unit} ${n + 1}-${p.view.items.length} not shown`)
    })
    if (olderFrom > 0) notes.push(`older evidence ${older[0]?.id ?? ''}–${older[olderFrom - 1]?.id ?? ''} not listed`)
    return { lines, notes, size: linesSize(lines) }
  }
  const order = dropOrder(payloads, o)
  const floorSize = (i: number): number => sizeOf[i]?.(floorOf(payloads[i], o)) ?? 0
  if (payloads.every((p, i) => floorSize(i) <= (sizeOf[i]?.(p.view.items.length) ?? 0))) {
    // No payload is larger at its floor than whole (the usual case): a trim fits exactly when the
    // payloads at their floors fit, so the drops it takes are counted without trimming after each.
    let atFloor = header + olderSize(0) + payloads.reduce((n, _, i) => n + floorSize(i), 0)
    let drops = 0
    for (; drops < order.length && atFloor > room; drops++) {
      const i = order[drops] ?? 0
      atFloor += (sizeOf[i]?.(null) ?? 0) - floorSize(i)
    }
    const dropped = new Set(order.slice(0, drops))
    shown = full().map((n, k) => (dropped.has(k) ? null : n))
    trim(payloads, sizeOf, shown, header + olderSize(0), room, o)
    if (total(0) <= room) return done(0)
  } else {
    trim(payloads, sizeOf, shown, header + olderSize(0), room, o)
    for (const i of order) {
      if (total(0) <= room) return done(0)
      shown = full().map((n, k) => (shown[k] === null || k === i ? null : n))
      trim(payloads, sizeOf, shown, header + olderSize(0), room, o)
    }
  }
  let from = 0
  while (from < older.length && total(from) > room) from++
  // The latest result alone is larger than what is left: fit as without the option.
  if (o.newestWhole === true && total(from) > room && payloads.some((p) => p.latest))
    return referenceFitWorkingSet(payloads, older, room)
  return done(from)
}
