/**
 * Lines of events.jsonl for property tests of the line checks: sealed as a writer seals them, and
 * mutated or rewritten the ways a careless hand, a broken disk or a forger would.
 */
import * as fc from 'fast-check'
import { createHash } from 'node:crypto'
import { lineDigest, sealEvent, type EventDraft } from '../../src/events/chain.js'
import { right } from './fs.js'

export const digestOf = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`

/** A sealed line of a note or an attachment, as a writer gives it. */
export const sealed = (d: EventDraft, seq: number, id: string, commandId: string, at: string, prev: string): string =>
  right(sealEvent(d, { seq, prev, id, at, commandId })).line

export const text = fc.oneof(
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
export const identifier = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/)
export const draft: fc.Arbitrary<EventDraft> = fc.oneof(
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
/** What a sealed line is made of. */
const lineParts = fc
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

export const line = lineParts.map((r) => sealed(r.d, r.seq, r.id, r.commandId, r.at, r.prev))

/**
 * Two sealed lines, the second linked to the first (its prev the first's hash), of the same
 * command or of another and at the same time or another, as a writer appends them.
 */
export const linkedLines = fc
  .tuple(lineParts, lineParts, fc.boolean(), fc.boolean())
  .map(([a, b, sameCommand, sameAt]): [string, string] => {
    const first = sealed(a.d, a.seq, a.id, a.commandId, a.at, a.prev)
    const hash = /"hash":"(sha256:[0-9a-f]{64})"/.exec(first.slice(first.lastIndexOf(',"hash":"')))?.[1] ?? a.prev
    return [first, sealed(b.d, a.seq + 1, b.id, sameCommand ? a.commandId : b.commandId, sameAt ? a.at : b.at, hash)]
  })

/** Mutations of a line's text: what a careless hand or a broken disk does to it. */
export const nasty = fc.constantFrom(
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
/** Sealed again over an edit (the hash holds), so the checks after the hash's see it. */
export const resealed = (s: string): string => {
  const h = s.lastIndexOf(',"hash":"')
  return h >= 0 && s.length >= h + 81 ? s.slice(0, h + 9) + lineDigest(s) + s.slice(h + 9 + 71) : s
}

/** Edits of a line's text (insert, delete, overwrite), sealed again over them or not. */
export const edits = fc.tuple(
  fc.array(fc.tuple(fc.nat(), fc.nat({ max: 3 }), fc.constantFrom(0, 1, 2), nasty), { minLength: 1, maxLength: 3 }),
  fc.boolean()
)

/** `l` with `e`'s edits. */
export const edited = (
  l: string,
  [changes, reseal]: [ReadonlyArray<[number, number, 0 | 1 | 2, string]>, boolean]
): string => {
  let s = l
  for (const [at, len, kind, put] of changes) {
    const i = at % (s.length + 1)
    s =
      kind === 0
        ? s.slice(0, i) + put + s.slice(i)
        : kind === 1
          ? s.slice(0, i) + s.slice(i + len + 1)
          : s.slice(0, i) + put + s.slice(i + put.length)
  }
  return reseal ? resealed(s) : s
}

export const mutated = fc.tuple(line, edits).map(([l, e]) => edited(l, e))

/** Rewrites of a line's members and data that keep it JSON, each a form a writer never gives (or a value checkLine refuses). */
export const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)
export const rewrites: ReadonlyArray<(l: string) => string> = [
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
export const rewritten = fc
  .tuple(line, fc.array(fc.nat({ max: rewrites.length - 1 }), { minLength: 1, maxLength: 2 }), fc.boolean())
  .map(([l, picks, reseal]) => {
    let s = l
    for (const i of picks) s = (rewrites[i] as (l: string) => string)(s)
    return reseal ? resealed(s) : s
  })
