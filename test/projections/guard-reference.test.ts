/**
 * Property: the prompt guard of version 2 fits exactly as its frozen copy of df62d4c
 * (test/reference) on random working sets, with and without `newestWhole`: the same lines (and,
 * joined, the same text in the runs a prompt is made of), the same notes on what was left out, the
 * same size; and a prompt's two fits (without a guard line, then with room for one) give what they gave. Today's guard sizes each capture view once, trims
 * after a drop only where a trim can fit, and fits once when the working set does not fit whole.
 * Recorded v2 prompts are rendered again by verify, so a difference of one character would make
 * honest cases fail turn.prompt.
 *
 * The generated views lean on the guard's harder paths: continuation markers longer than the items
 * they replace (a payload larger at its floor than whole, where every drop trims anew), markers
 * whose length changes with the items shown, many payloads of equal size and age (the ties), and
 * rooms from nothing to more than everything.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import { fitWorkingSet, workingSetFitter } from '../../src/projections/prompt-v2/guard.js'
import type { OlderLine, Payload } from '../../src/projections/prompt-v2/working-set.js'
import type { CaptureView } from '../../src/projections/capture-text.js'
import { referenceFitWorkingSet } from '../reference/prompt-v2-guard-df62d4c.js'

/** A view like the capture views: a head, items of one or more lines, a tail from the items shown. */
const view = (head: string[], items: string[][], offset: number, marker: number, markers: string[]): CaptureView => ({
  head,
  items: items.map((lines) => ({ lines })),
  tail: (shown) => [
    ...(shown < items.length && marker > 0
      ? [`  … ${items.length - shown} more rows (continue at offset ${offset + shown})${'.'.repeat(marker - 1)}`]
      : []),
    ...markers
  ],
  unit: 'rows',
  summary: `${items.length} rows`
})

const line = fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('', 'x', '  12 | same line'))
const payload = fc.record({
  head: fc.array(line, { maxLength: 3 }),
  items: fc.oneof(
    fc.array(fc.array(line, { minLength: 1, maxLength: 3 }), { maxLength: 30 }),
    // equal items: ties between payloads of the same size
    fc.nat(40).map((n) => Array.from({ length: n }, () => ['  row | 1 | 2'])),
    fc.array(fc.array(line, { minLength: 1, maxLength: 2 }), { minLength: 3, maxLength: 6 })
  ),
  offset: fc.oneof(fc.nat(100_000), fc.constantFrom(0, 7, 95, 995)),
  // 0: no marker; small: shorter than an item; large: longer than the items it replaces
  marker: fc.oneof(fc.constant(0), fc.nat(3), fc.integer({ min: 50, max: 400 })),
  markers: fc.array(line, { maxLength: 2 }),
  cited: fc.boolean(),
  latest: fc.boolean(),
  age: fc.oneof(fc.nat(50), fc.constant(7)),
  summaryPad: fc.nat(200)
})

type Generated = typeof payload extends fc.Arbitrary<infer T> ? T : never

const payloadsOf = (ps: readonly Generated[]): Payload[] => {
  // at most one latest result, as working sets have
  const latest = ps.findIndex((p) => p.latest)
  return ps.map((p, i) => ({
    id: `E${i + 1}`,
    header: `${i === latest ? 'Latest result ' : ''}E${i + 1} (result):`,
    view: view(p.head, p.items, p.offset, p.marker, p.markers),
    summary: `E${i + 1}: ${p.items.length} rows [not shown]${' '.repeat(p.summaryPad)}`,
    cited: p.cited,
    latest: i === latest,
    age: p.age
  }))
}

const olderOf = (texts: readonly string[]): OlderLine[] =>
  texts.map((text, i) => ({ id: `E${100 + i}`, text: `  E${100 + i} ${text}` }))

test('the guard fits exactly as its frozen copy: lines, notes and size, with and without newestWhole', () => {
  let cut = 0
  let dropped = 0
  fc.assert(
    fc.property(
      fc.array(payload, { maxLength: 16 }),
      fc.array(line, { maxLength: 30 }),
      fc.oneof(fc.nat(8000), fc.nat(400), fc.integer({ min: 8000, max: 40_000 })),
      fc.boolean(),
      fc.nat(3000),
      (ps, olderTexts, room, newestWhole, guardLine) => {
        const payloads = payloadsOf(ps)
        const older = olderOf(olderTexts)
        const o = { newestWhole }
        const want = referenceFitWorkingSet(payloads, older, room, o)
        // twice: the second fit reads the sizes the first one memoised for the same views
        for (const got of [fitWorkingSet(payloads, older, room, o), fitWorkingSet(payloads, older, room, o)]) {
          assert.equal(got.lines, want.lines)
          // the runs a prompt is made of are the same text
          assert.is(got.pieces.join('\n'), want.lines.join('\n'))
          assert.equal(got.notes, want.notes)
          assert.is(got.size, want.size)
        }
        // How the prompt fits: in `room` when nothing is left out there, else with room for a guard line.
        const fitter = workingSetFitter(payloads, older, o)
        const prompt = fitter.fit(fitter.fitsWhole(room) ? room : room - guardLine)
        const then = want.notes.length > 0 ? referenceFitWorkingSet(payloads, older, room - guardLine, o) : want
        assert.equal(prompt.lines, then.lines)
        assert.equal(prompt.notes, then.notes)
        assert.is(prompt.size, then.size)
        if (want.notes.length > 0) cut++
        if (want.notes.some((n) => n.endsWith('one-line summary'))) dropped++
      }
    ),
    fcOptions(1200)
  )
  // the generator reaches the trims and the drops (the comparison above can fail)
  assert.ok(cut > 300, `${cut} fits left something out`)
  assert.ok(dropped > 150, `${dropped} fits dropped a payload to its summary`)
})

test('a room that shrinks by one character at a time gives the same fits as the frozen copy', () => {
  fc.assert(
    fc.property(fc.array(payload, { minLength: 2, maxLength: 8 }), fc.array(line, { maxLength: 8 }), (ps, texts) => {
      const payloads = payloadsOf(ps)
      const older = olderOf(texts)
      const whole = referenceFitWorkingSet(payloads, older, 1_000_000).size
      // one fitter for every room, as a prompt's last resort fits one working set again and again
      const fitters = [false, true].map((newestWhole) => workingSetFitter(payloads, older, { newestWhole }))
      for (let room = whole + 2; room >= Math.max(0, whole - 300); room--)
        for (const [k, newestWhole] of [false, true].entries()) {
          const want = referenceFitWorkingSet(payloads, older, room, { newestWhole })
          const got = fitters[k]?.fit(room) ?? fitWorkingSet(payloads, older, room)
          assert.equal(got.lines, want.lines, `room ${room}`)
          assert.is(got.pieces.join('\n'), want.lines.join('\n'), `room ${room}`)
          assert.equal(got.notes, want.notes, `room ${room}`)
        }
    }),
    fcOptions(20)
  )
})

test.run()
