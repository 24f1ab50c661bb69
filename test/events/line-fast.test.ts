import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as fc from 'fast-check'
import { createHash } from 'node:crypto'
import { isAscii, isUtf8 } from 'node:buffer'
import { checkLine, lineDigest, lineDigestOfBytes, sealEvent, type EventDraft } from '../../src/events/chain.js'
import { checkLineFast, type FastLine } from '../../src/events/line-fast.js'
import { right } from '../helpers/fs.js'

const digestOf = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`

/** A sealed line of a note or an attachment, as a writer gives it. */
const sealed = (d: EventDraft, seq: number, id: string, commandId: string, at: string, prev: string): string =>
  right(sealEvent(d, { seq, prev, id, at, commandId })).line

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    'plain',
    'a"b',
    'a\\b',
    'line\nnext',
    '\u0001\u001f\u007f',
    'é ü 😀',
    '\u2028',
    '},"format":"vba-event/1","hash":"'
  )
)
const identifier = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/)
const draft: fc.Arbitrary<EventDraft> = fc.oneof(
  fc.record({
    type: fc.constant('NoteRecorded'),
    actor: fc.constantFrom('operator', 'controller', 'model', 'system') as fc.Arbitrary<EventDraft['actor']>,
    data: fc.record({ text, format: fc.constantFrom('plain', 'markdown') })
  }),
  fc.record({
    type: fc.constant('AttachmentAdded'),
    actor: fc.constant('controller') as fc.Arbitrary<EventDraft['actor']>,
    data: fc.record({
      name: text,
      object: fc.record({ digest: fc.string().map(digestOf), size: fc.nat(), media_type: fc.constant('text/plain') })
    })
  })
)
const line = fc
  .record({
    d: draft,
    seq: fc.oneof(
      fc.integer({ min: 1, max: 1000 }),
      fc.constant(999_999_999_999_999),
      fc.constant(1_000_000_000_000_000)
    ),
    id: identifier,
    commandId: identifier,
    at: fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString()),
    prev: fc.string().map(digestOf)
  })
  .filter((r) => r.d.type !== 'NoteRecorded' || !/[\ud800-\udfff]/.test(String((r.d.data as { text: string }).text)))
  .map((r) => sealed(r.d, r.seq, r.id, r.commandId, r.at, r.prev))

/** Mutations of a line's text: what a careless hand or a broken disk does to it. */
const nasty = fc.constantFrom(
  '"',
  '\\',
  ',',
  '}',
  '{',
  ' ',
  '0',
  '1',
  '9',
  'a',
  'F',
  ':',
  '.',
  '-',
  'é',
  '\n',
  '\\u0041',
  '[]',
  'null'
)
const mutated = fc
  .tuple(
    line,
    fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.constantFrom(0, 1, 2), nasty), { minLength: 1, maxLength: 3 }),
    fc.boolean()
  )
  .map(([l, edits, reseal]) => {
    let s = l
    for (const [at, len, kind, put] of edits) {
      const i = at % (s.length + 1)
      s =
        kind === 0
          ? s.slice(0, i) + put + s.slice(i)
          : kind === 1
            ? s.slice(0, i) + s.slice(i + len + 1)
            : s.slice(0, i) + put + s.slice(i + put.length)
    }
    // Sealed again over the edit (the hash holds), so the checks after the hash's see it.
    const h = s.lastIndexOf(',"hash":"')
    if (reseal && h >= 0 && s.length >= h + 81) s = s.slice(0, h + 9) + lineDigest(s) + s.slice(h + 9 + 71)
    return s
  })

/** Rewrites of a line's members and data that keep it JSON, each a form a writer never gives (or a value checkLine refuses). */
const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const rewrites: ReadonlyArray<(l: string) => string> = [
  (l) => l.replace('"data":{', '"data":{ '),
  (l) => l.replace('"data":{', '"data": {'),
  (l) => l.replace(',"format":"vba-event/1"', ' ,"format":"vba-event/1"'),
  (l) => l.replace(/"size":(\d+)/, '"size":$1.0'),
  (l) => l.replace(/"size":(\d+)/, '"size":$1e0'),
  (l) => l.replace(/"size":(\d+)/, '"size":-0'),
  (l) => l.replace(/"size":(\d+)/, '"size":-1'),
  (l) => l.replace(/"seq":(\d+)/, '"seq":0$1'),
  (l) => l.replace(/"seq":(\d+)/, '"seq":$1.0'),
  (l) => l.replace(/"seq":(\d+)/, '"seq":0'),
  (l) => l.replace(/"version":(\d+)/, '"version":99'),
  (l) => l.replace(/"version":(\d+)/, '"version":0$1'),
  (l) => l.replace('"digest":"sha256:', '"digest":"sha256:Z'),
  (l) => l.replace('"digest":"sha256:', '"digest":"../'),
  (l) => l.replace('"format":"plain"', '"format":"plain","format":"plain"'),
  (l) => l.replace('{"format":"plain","text":', '{"text":"x","format":"plain","text":'),
  (l) =>
    l.replace(
      /"text":"([^"\\]*)"/,
      (_m, t: string) => `"text":"${t.replace(/[a-z]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)}"`
    ),
  (l) => l.replace(/"text":"/, '"text":"\\/'),
  (l) => l.replace(/"type":"([A-Za-z0-9]+)"/, '"type":"X$1"'),
  (l) => l.replace(/"type":"([A-Za-z0-9]+)"/, (_m, t: string) => `"type":"${t.toLowerCase()}"`),
  (l) => l.replace(/"type":"([A-Za-z0-9]+)"/, `"type":"N${'a'.repeat(63)}"`),
  (l) => l.replace(/"id":"([^"]*)"/, `"id":"${'i'.repeat(128)}"`),
  (l) => l.replace(/"id":"([^"]*)"/, `"id":"${'i'.repeat(129)}"`),
  (l) => l.replace(/"id":"([^"]*)"/, '"id":"-x"'),
  (l) => l.replace(/"id":"([^"]*)"/, '"id":""'),
  (l) => l.replace(/"command_id":"([^"]*)"/, `"command_id":"${'c'.repeat(129)}"`),
  (l) => l.replace(/"at":"([^"]*)"/, '"at":"2026-01-01T00:00:00Z"'),
  (l) => l.replace(/"actor":"([^"]*)"/, '"actor":"nobody"'),
  (l) => l.replace(/"prev":"sha256:([0-9a-f]*)"/, (_m, h: string) => `"prev":"sha256:${h.toUpperCase()}"`),
  (l) => l.replace(/"prev":"sha256:([0-9a-f]*)"/, (_m, h: string) => `"prev":"sha256:${h.slice(1)}"`),
  (l) => `${l.slice(0, -1)},"zzz":1}`,
  (l) => l.replace('{"actor"', '{"zz":1,"actor"'),
  (l) => l.replace(/"data":\{/, '"data":[{').replace(',"format":"vba-event/1"', '],"format":"vba-event/1"'),
  (l) => l.replace(/"data":\{/, `"data":{"a":${deep(62)},`),
  (l) => l.replace(/"data":\{/, `"data":{"a":${deep(63)},`),
  (l) => l.replace(/"data":\{/, '"data":{"x":{"digest":"sha256:1","size":1},')
]
const rewritten = fc
  .tuple(line, fc.array(fc.nat({ max: rewrites.length - 1 }), { minLength: 1, maxLength: 2 }), fc.boolean())
  .map(([l, picks, reseal]) => {
    let s = l
    for (const i of picks) s = (rewrites[i] as (l: string) => string)(s)
    const h = s.lastIndexOf(',"hash":"')
    if (reseal && h >= 0 && s.length >= h + 81) s = s.slice(0, h + 9) + lineDigest(s) + s.slice(h + 9 + 71)
    return s
  })

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
      for (const fresh of [true, false])
        for (const hashBefore of [null, prev, digestOf(own)]) {
          const fast = checkLineFast(r, { canonical, fresh, hashBefore })
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
  for (const r of readings(l)) assert.ok(checkLineFast(r, { canonical: true, fresh: false, hashBefore: null }) !== null)
  agrees(l)
})

fast('refuses what checkLine refuses: an edited hash, a prev that is no digest, a non-canonical number', () => {
  const l = helloNote()
  const [r] = readings(l.replace('hello', 'hellO'))
  assert.is(checkLineFast(r as FastLine, { canonical: false, fresh: false, hashBefore: null }), null)
  const badPrev = l.replace(/"prev":"sha256:[0-9a-f]/, '"prev":"sha256:G')
  assert.is(checkLineFast(readings(badPrev)[0] as FastLine, { canonical: false, fresh: false, hashBefore: null }), null)
  assert.is(
    checkLineFast(readings(l.replace('"seq":7', '"seq":07'))[0] as FastLine, {
      canonical: false,
      fresh: false,
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
  assert.ok(taken > 500, `the fast way took ${taken} readings of edited lines`)
})

fast('property: rewritten members and data, the fast way takes only what checkLine passes', () => {
  fc.assert(
    fc.property(rewritten, (l) => agrees(l)),
    { numRuns: 2000 }
  )
})

fast.run()
