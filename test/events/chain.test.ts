import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { checkLine, sealEvent, genesisHash, type EventDraft } from '../../src/events/chain.js'
import { CASE_FORMAT, CASE_FORMAT_VERSION } from '../../src/events/envelope.js'
import { right, left } from '../helpers/fs.js'

const declaration = {
  format: CASE_FORMAT,
  format_version: CASE_FORMAT_VERSION,
  case_id: 'case-1',
  created_at: '2026-01-01T00:00:00.000Z'
} as const
const genesis = right(genesisHash(declaration))
const note = (text: string): EventDraft => ({
  type: 'NoteRecorded',
  actor: 'operator',
  data: { text, format: 'plain' }
})
const ctx = (seq: number, prev: string) => ({
  seq,
  prev,
  id: `evt-${seq}`,
  at: '2026-01-01T00:00:00.000Z',
  commandId: `cmd-${seq}`
})

const seal = suite('sealEvent')

seal('produces a canonical line whose hash covers everything but the hash', () => {
  const s = right(sealEvent(note('hello'), ctx(1, genesis)))
  assert.ok(s.line.startsWith('{"actor":"operator","at":'))
  assert.is(s.envelope.version, 2)
  assert.is(s.envelope.prev, genesis)
  const checked = checkLine(s.line, { seq: 1, prev: genesis, lineNo: 1 })
  assert.equal(checked.findings, [])
  assert.is(checked.event?.type, 'NoteRecorded')
})

seal('refuses unknown types, unknown versions and invalid data before anything is written', () => {
  assert.is(left(sealEvent({ type: 'Nope', actor: 'system', data: {} }, ctx(1, genesis))).code, 'EVENT_UNKNOWN_TYPE')
  assert.is(
    left(sealEvent({ type: 'NoteRecorded', version: 9, actor: 'system', data: { text: 'x' } }, ctx(1, genesis))).code,
    'EVENT_UNKNOWN_VERSION'
  )
  assert.is(
    left(sealEvent({ type: 'NoteRecorded', actor: 'system', data: { text: 3 } }, ctx(1, genesis))).code,
    'EVENT_DATA_INVALID'
  )
  assert.is(
    left(
      sealEvent({ type: 'NoteRecorded', actor: 'system', data: { text: 'x', format: 'plain', n: 1 } }, ctx(1, genesis))
    ).code,
    'EVENT_DATA_INVALID',
    'a member the schema does not name'
  )
  assert.is(
    left(
      sealEvent({ type: 'NoteRecorded', actor: 'system', data: { text: 'x\ud800', format: 'plain' } }, ctx(1, genesis))
    ).code,
    'NOT_CANONICALIZABLE'
  )
})

seal.run()

const check = suite('checkLine')
const first = right(sealEvent(note('one'), ctx(1, genesis)))
const second = right(sealEvent(note('two'), ctx(2, first.envelope.hash)))
const codes = (line: string, seq = 2, prev: string | null = first.envelope.hash): string[] =>
  checkLine(line, { seq, prev, lineNo: seq }).findings.map((f) => f.code)

check('accepts the next event of the chain', () => {
  assert.equal(codes(second.line), [])
})

check('finds an edited event (content no longer matches its hash)', () => {
  assert.equal(codes(second.line.replace('"two"', '"tw0"')), ['EVENT_HASH_MISMATCH'])
})

check('finds a re-hashed edit by the broken link to the next event', () => {
  const forged = right(sealEvent(note('TWO'), ctx(2, first.envelope.hash)))
  const third = right(sealEvent(note('three'), ctx(3, second.envelope.hash)))
  assert.equal(codes(forged.line), [])
  assert.equal(codes(third.line, 3, forged.envelope.hash), ['CHAIN_BROKEN'])
})

check('finds gaps and reordering', () => {
  assert.equal(codes(second.line, 1, genesis), ['SEQ_GAP', 'CHAIN_BROKEN'])
  assert.equal(codes(first.line, 2), ['SEQ_REORDERED', 'CHAIN_BROKEN'])
})

check('finds non-JSON, non-canonical and non-envelope lines', () => {
  assert.equal(codes('{"actor":'), ['EVENT_MALFORMED'])
  assert.equal(codes(` ${second.line}`), ['EVENT_NOT_CANONICAL'])
  assert.equal(codes(JSON.stringify(JSON.parse(second.line), null, 1).replace(/\n/g, '')), ['EVENT_NOT_CANONICAL'])
  assert.equal(codes('{"seq":2}'), ['EVENT_ENVELOPE_INVALID'])
  const extra = JSON.parse(second.line) as Record<string, unknown>
  extra['zzz'] = 1
  assert.ok(codes(JSON.stringify(extra)).includes('EVENT_ENVELOPE_INVALID'))
})

check('finds object references that smuggle paths', () => {
  const bad = right(
    sealEvent(
      { type: 'NoteRecorded', actor: 'operator', data: { text: 'x', format: 'plain' } },
      ctx(2, first.envelope.hash)
    )
  )
  const env = JSON.parse(bad.line) as Record<string, unknown>
  env['data'] = { text: 'x', format: 'plain', extra: { digest: 'sha256:../../../etc/passwd', size: 1 } }
  assert.ok(codes(JSON.stringify(env)).includes('OBJECT_REF_INVALID'))
})

check.run()
