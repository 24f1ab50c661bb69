import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as fc from 'fast-check'
import { isAscii, isUtf8 } from 'node:buffer'
import { checkLine, lineDigestOfBytes } from '../../src/events/chain.js'
import { checkLineFast, type FastLine } from '../../src/events/line-fast.js'
import { digestOf, line, mutated, rewritten, sealed } from '../helpers/line-arbitraries.js'

/** The line alone and inside a piece (after another line, its text the piece's when ASCII), as the scan reads it. */
const readings = (l: string): FastLine[] => {
  const bytes = Buffer.from(l)
  if (!isUtf8(bytes)) return []
  const t = bytes.toString('utf8')
  const before = '{"x":1}\n'
  const piece = Buffer.from(`${before}${l}\n`)
  const s = before.length
  const e = piece.length - 1
  return [
    { bytes, start: 0, end: bytes.length, text: t, from: 0, to: t.length },
    isAscii(piece)
      ? { bytes: piece, start: s, end: e, text: piece.toString('latin1'), from: s, to: e }
      : { bytes: piece, start: s, end: e, text: t, from: 0, to: t.length }
  ]
}

/** The fast way takes a line only where checkLine finds nothing, and gives what checkLine gives. */
let taken = 0
const agrees = (l: string): void => {
  for (const r of readings(l)) {
    const own = r.text.slice(r.from, r.to)
    const prev = /"prev":"(sha256:[0-9a-f]{64})"/.exec(own)?.[1] ?? null
    for (const canonical of [true, false])
      for (const hashBefore of [null, prev, digestOf(own)]) {
        const fast = checkLineFast(r, { canonical, hashBefore })
        if (fast === null) continue
        taken++
        const full = checkLine(own, {
          seq: null,
          prev: null,
          lineNo: 0,
          canonical,
          precomputed: { digest: lineDigestOfBytes(r.bytes.subarray(r.start, r.end)) }
        })
        assert.equal(full.findings, [], `checkLine finds something in a line the fast way takes: ${own}`)
        assert.equal(fast.envelope, full.envelope)
        assert.equal(fast.event, full.event)
        assert.is(JSON.stringify(fast.event), JSON.stringify(full.event))
        assert.equal(Object.keys(fast.envelope ?? {}), Object.keys(full.envelope ?? {}))
        assert.equal(fast.refs, full.refs)
      }
  }
}

const fast = suite('checkLineFast')

/** A sealed operator note 'hello' at seq 7. */
const helloNote = (): string =>
  sealed(
    { type: 'NoteRecorded', actor: 'operator', data: { text: 'hello', format: 'plain' } },
    7,
    'evt-1',
    'cmd-1',
    '2026-01-01T00:00:00.000Z',
    digestOf('x')
  )

fast('takes a writer’s lines, and gives what checkLine gives', () => {
  const l = helloNote()
  for (const r of readings(l)) assert.ok(checkLineFast(r, { canonical: true, hashBefore: null }) !== null)
  agrees(l)
})

fast('refuses what checkLine refuses: an edited hash, a prev that is no digest, a non-canonical number', () => {
  const l = helloNote()
  const [r] = readings(l.replace('hello', 'hellO'))
  assert.is(checkLineFast(r as FastLine, { canonical: false, hashBefore: null }), null)
  const badPrev = l.replace(/"prev":"sha256:[0-9a-f]/, '"prev":"sha256:G')
  assert.is(checkLineFast(readings(badPrev)[0] as FastLine, { canonical: false, hashBefore: null }), null)
  assert.is(
    checkLineFast(readings(l.replace('"seq":7', '"seq":07'))[0] as FastLine, {
      canonical: false,
      hashBefore: null
    }),
    null
  )
})

fast('property: sealed lines, the fast way agrees with checkLine', () => {
  fc.assert(
    fc.property(line, (l) => agrees(l)),
    { numRuns: 400 }
  )
})

fast('property: mutated lines, the fast way takes only what checkLine passes, as checkLine reads it', () => {
  taken = 0
  fc.assert(
    fc.property(mutated, (l) => agrees(l)),
    { numRuns: 3000 }
  )
  // Enough edited lines get through to the checks after the hash's (whitespace in data, a changed note).
  assert.ok(taken > 250, `the fast way took ${taken} readings of edited lines`)
})

fast('property: rewritten members and data, the fast way takes only what checkLine passes', () => {
  fc.assert(
    fc.property(rewritten, (l) => agrees(l)),
    { numRuns: 2000 }
  )
})

fast.run()
