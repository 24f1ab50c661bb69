import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as fc from 'fast-check'
import { checkLine, type RecordedEvent } from '../../../src/events/chain.js'
import { digestLines, givenDigests } from '../../../src/events/line-digests.js'
import { checkPiece } from '../../../src/adapters/case-store/piece-lines.js'
import {
  eventOfLine,
  KIND_BYTES,
  KIND_CHECKED_REFS,
  L_AT,
  L_KIND,
  LINE_INTS
} from '../../../src/adapters/case-store/line-layout.js'
import { edited, edits, linkedLines, rewrites } from '../../helpers/line-arbitraries.js'

/**
 * checkPiece is the line check both the line workers and the folding thread run on a piece of the
 * log, on its bytes: a line it passes must be one checkLine passes, and the event the folding thread
 * makes of its ints must be the one checkLine decodes, member for member and in the same order
 * (spreading and serialising an event read them), its references the same, for a line alone, after
 * the line of its command, after a line of another, and after a line that did not pass.
 */
const pieces = suite('checkPiece')

let taken = 0
let linkedTaken = 0
let sameTimeTaken = 0

/** Ints hold a seq and a version up to 2^31 - 1: a line with a larger one is left to the inline check. */
const fitsInts = (l: string): boolean => !/"(seq|version)":\d{10,}/.test(l)

/**
 * Checks the piece of `text` (lines joined by LF) both ways; true when every line that checkLine
 * passes (and whose integers fit the ints) was taken too.
 */
const agrees = (text: readonly string[], canonical: boolean): boolean => {
  const piece = Buffer.from(`${text.join('\n')}\n`)
  const lines = piece.toString('utf8').split('\n').slice(0, -1)
  const { meta, lines: count, stopAt } = checkPiece(piece, canonical)
  assert.is(stopAt, -1)
  assert.is(count, lines.length)
  let before: RecordedEvent | null = null
  let all = true
  lines.forEach((l, i) => {
    const at = i * LINE_INTS
    const full = checkLine(l, { seq: null, prev: null, lineNo: 0, canonical })
    const kind = meta[at + L_KIND]
    if (kind === KIND_BYTES) {
      if (full.findings.length === 0 && fitsInts(l)) all = false
      before = null
      return
    }
    taken++
    if (i > 0 && before !== null) linkedTaken++
    if ((meta[at + L_AT] as number) < 0) sameTimeTaken++
    assert.equal(full.findings, [], `checkLine finds something in a line checkPiece passes: ${l}`)
    const event = eventOfLine(piece, meta, at, before)
    assert.equal({ ...event }, full.event)
    assert.is(JSON.stringify(event), JSON.stringify(full.event))
    assert.equal(Object.keys(event), Object.keys(full.event ?? {}))
    assert.is(kind === KIND_CHECKED_REFS, full.refs.length > 0)
    before = event
  })
  return all
}

pieces('property: linked lines a writer sealed are all taken, and read as checkLine reads them', () => {
  taken = 0
  linkedTaken = 0
  sameTimeTaken = 0
  fc.assert(
    fc.property(linkedLines, fc.boolean(), ([a, b], canonical) => {
      assert.ok(agrees([a, b], canonical), 'a sealed line was left to the inline check')
      assert.ok(agrees(['{"x":1}', a, b], canonical), 'a sealed line after a line that did not pass was left')
    }),
    { numRuns: 500 }
  )
  assert.ok(linkedTaken > 250, `lines read after the line before them: ${linkedTaken}`)
  // Half of the second lines have the first's time: read as that line's string.
  assert.ok(sameTimeTaken > 100, `lines with the time of the line before: ${sameTimeTaken}`)
})

pieces(
  'property: an edited second line is taken only where checkLine passes it, and read as checkLine reads it',
  () => {
    taken = 0
    fc.assert(
      fc.property(linkedLines, edits, fc.boolean(), ([a, b], e, canonical) => {
        agrees([a, edited(b, e)], canonical)
        agrees([edited(a, e), b], canonical)
      }),
      { numRuns: 2000 }
    )
    // Enough edited lines get through to the checks after the hash's (whitespace in data, a changed note).
    assert.ok(taken > 1000, `checkPiece took ${taken} lines`)
  }
)

pieces('property: rewritten members and data are taken only where checkLine passes them', () => {
  fc.assert(
    fc.property(
      linkedLines,
      fc.nat({ max: rewrites.length - 1 }),
      fc.boolean(),
      fc.boolean(),
      ([a, b], pick, reseal, canonical) => {
        const r = (rewrites[pick] as (l: string) => string)(b)
        agrees([a, reseal ? edited(r, [[], true]) : r], canonical)
      }
    ),
    { numRuns: 1500 }
  )
})

pieces('a line not valid UTF-8 is left to the inline check, and the line after it stands alone', () => {
  const [a, b] = fc.sample(linkedLines, { numRuns: 1, seed: 7 })[0] as [string, string]
  const piece = Buffer.concat([Buffer.from(`${a}\n`), Buffer.from([0x7b, 0xff, 0x7d, 0x0a]), Buffer.from(`${b}\n`)])
  const { meta } = checkPiece(piece, true)
  assert.ok(meta[L_KIND] !== KIND_BYTES)
  assert.is(meta[LINE_INTS + L_KIND], KIND_BYTES)
  // b's prev is a's hash, but a is not the line before it: b's prev is read from its own bytes.
  const event = eventOfLine(piece, meta, 2 * LINE_INTS, null)
  assert.is(event.prev, checkLine(b, { seq: null, prev: null, lineNo: 0 }).event?.prev)
})

/** checkPiece of `piece` with the digests its lines have (computed as the folding thread does). */
const withDigests = (piece: Buffer, canonical: boolean, edit?: (d: ArrayBuffer, lines: number) => void) => {
  const lines = piece.toString('latin1').split('\n').length - 1
  const digests = digestLines(piece, lines)
  edit?.(digests, lines)
  return checkPiece(piece, canonical, givenDigests(digests, lines))
}

pieces('property: lines whose digests were given are judged as lines whose digests are computed', () => {
  fc.assert(
    fc.property(linkedLines, edits, fc.boolean(), ([a, b], e, canonical) => {
      for (const text of [
        [a, b],
        [a, edited(b, e)],
        [edited(a, e), b]
      ]) {
        const piece = Buffer.from(`${text.join('\n')}\n`)
        assert.equal(withDigests(piece, canonical), checkPiece(piece, canonical))
      }
    }),
    { numRuns: 1000 }
  )
})

pieces("a given digest that is not the line's is never taken for it; one given for another cut is not used", () => {
  const [a, b] = fc.sample(linkedLines, { numRuns: 1, seed: 11 })[0] as [string, string]
  const piece = Buffer.from(`${a}\n${b}\n`)
  assert.ok(checkPiece(piece, true).meta[LINE_INTS + L_KIND] !== KIND_BYTES)
  // The second line's digest changed in its last hex digit: the line no longer checks out.
  const wrong = withDigests(piece, true, (d, lines) => {
    const { hex } = givenDigests(d, lines)
    hex[2 * 64 - 1] = hex[2 * 64 - 1] === 0x30 ? 0x31 : 0x30
  })
  assert.is(wrong.meta[LINE_INTS + L_KIND], KIND_BYTES)
  // A digest said to be of another cut of the line: the worker hashes the line itself.
  const moved = withDigests(piece, true, (d, lines) => {
    const { cuts, hex } = givenDigests(d, lines)
    cuts[1] = (cuts[1] as number) - 1
    hex.fill(0x30, 64, 128)
  })
  assert.equal(moved, checkPiece(piece, true))
})

pieces.run()
