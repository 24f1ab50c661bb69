/**
 * Property: the prompt guard of version 2 (sizes from prefix sums, a heap of trim candidates, the
 * drops counted at the floors) fits exactly as the guard it replaced did: one item at a time from
 * the largest payload, every drop followed by a trim anew from whole. The replaced guard is kept
 * here as the reference model; recorded prompts are rendered again by verify, so a difference of
 * one character would make honest cases fail turn.prompt.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import { fitWorkingSet, MIN_ITEMS, OLDER_HEADER, WORKING_SET_HEADER } from '../../src/projections/prompt-v2/guard.js'
import type { OlderLine, Payload } from '../../src/projections/prompt-v2/working-set.js'
import { viewLines, type CaptureView } from '../../src/projections/capture-text.js'

// --- the reference model: the guard before its rewrite -------------------------------------------

const linesSize = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0)
const payloadLines = (p: Payload, shown: number | null): string[] =>
  shown === null ? [p.summary] : [p.header, ...viewLines(p.view, shown)]
const olderLines = (older: readonly OlderLine[], from: number): string[] => {
  if (older.length === 0) return []
  const left = older.slice(0, from)
  const marker =
    left.length === 0
      ? []
      : [
          `  [${left[0]?.id ?? ''}–${left[left.length - 1]?.id ?? ''}: ${left.length} older evidence entries are not listed (the prompt limit); asking their query again shows them]`
        ]
  return [OLDER_HEADER, ...marker, ...older.slice(from).map((o) => o.text)]
}
const render = (
  payloads: readonly Payload[],
  shown: ReadonlyArray<number | null>,
  older: readonly OlderLine[],
  from: number
): string[] => [
  ...(payloads.length === 0
    ? []
    : [WORKING_SET_HEADER, ...payloads.flatMap((p, i) => payloadLines(p, shown[i] ?? null))]),
  ...olderLines(older, from)
]
const dropOrder = (payloads: readonly Payload[]): number[] => {
  const idx = payloads.map((_, i) => i)
  return [
    ...idx.filter((i) => !(payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse(),
    ...idx.filter((i) => (payloads[i]?.cited ?? false) && !(payloads[i]?.latest ?? false)).reverse(),
    ...idx.filter((i) => payloads[i]?.latest ?? false)
  ]
}
const trim = (payloads: readonly Payload[], shown: Array<number | null>, fixed: number, room: number): void => {
  const sizes = payloads.map((p, i) => linesSize(payloadLines(p, shown[i] ?? null)))
  let total = fixed + sizes.reduce((a, b) => a + b, 0)
  while (total > room) {
    let pick = -1
    for (const [i, p] of payloads.entries()) {
      const n = shown[i]
      if (n === null || n === undefined || n <= Math.min(MIN_ITEMS, p.view.items.length) || n === 0) continue
      const best = payloads[pick]
      if (
        pick < 0 ||
        (sizes[i] ?? 0) > (sizes[pick] ?? 0) ||
        ((sizes[i] ?? 0) === (sizes[pick] ?? 0) && best !== undefined && p.age < best.age)
      )
        pick = i
    }
    const p = payloads[pick]
    const n = shown[pick]
    if (p === undefined || n === null || n === undefined) return
    shown[pick] = n - 1
    const size = linesSize(payloadLines(p, n - 1))
    total += size - (sizes[pick] ?? 0)
    sizes[pick] = size
  }
}
const reference = (
  payloads: readonly Payload[],
  older: readonly OlderLine[],
  room: number
): { lines: string[]; shown: Array<number | null>; from: number } => {
  const full = (): Array<number | null> => payloads.map((p) => p.view.items.length)
  let shown = full()
  const olderSize = linesSize(olderLines(older, 0))
  const header = payloads.length === 0 ? 0 : WORKING_SET_HEADER.length + 1
  trim(payloads, shown, header + olderSize, room)
  for (const i of dropOrder(payloads)) {
    if (linesSize(render(payloads, shown, older, 0)) <= room)
      return { lines: render(payloads, shown, older, 0), shown, from: 0 }
    shown = full().map((n, k) => (shown[k] === null || k === i ? null : n))
    trim(payloads, shown, header + olderSize, room)
  }
  let from = 0
  while (from < older.length && linesSize(render(payloads, shown, older, from)) > room) from++
  return { lines: render(payloads, shown, older, from), shown, from }
}

// --- generated working sets ----------------------------------------------------------------------

/** A view like the capture views: a head, items of one or more lines, a continuation marker once items are cut. */
const view = (head: string[], items: string[][], offset: number, marker: boolean): CaptureView => ({
  head,
  items: items.map((lines) => ({ lines })),
  tail: (shown) =>
    shown < items.length && marker
      ? [`  … ${items.length - shown} more rows (continue at offset ${offset + shown})`]
      : [],
  unit: 'rows',
  summary: `${items.length} rows`
})

const line = fc.string({ minLength: 0, maxLength: 60 })
const payload = fc.record({
  head: fc.array(line, { maxLength: 3 }),
  items: fc.array(fc.array(line, { minLength: 1, maxLength: 3 }), { maxLength: 30 }),
  offset: fc.nat(100_000),
  marker: fc.boolean(),
  cited: fc.boolean(),
  latest: fc.boolean(),
  age: fc.nat(50)
})

test('the guard fits exactly as the guard it replaced (lines, and what it names as left out)', () => {
  fc.assert(
    fc.property(
      fc.array(payload, { maxLength: 12 }),
      fc.array(line, { maxLength: 20 }),
      fc.nat(6000),
      (ps, olderTexts, room) => {
        const payloads: Payload[] = ps.map((p, i) => ({
          id: `E${i + 1}`,
          header: `E${i + 1} (result):`,
          view: view(p.head, p.items, p.offset, p.marker),
          summary: `E${i + 1}: ${p.items.length} rows [not shown]`,
          cited: p.cited,
          latest: p.latest,
          age: p.age
        }))
        const older = olderTexts.map((text, i) => ({ id: `E${100 + i}`, text: `  E${100 + i} ${text}` }))
        const fitted = fitWorkingSet(payloads, older, room)
        const want = reference(payloads, older, room)
        assert.equal(fitted.lines, want.lines)
        assert.is(fitted.size, linesSize(want.lines))
      }
    ),
    fcOptions(3000)
  )
})

test.run()
