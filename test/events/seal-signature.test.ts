/**
 * The signing writer's shorter ways give the bytes of the generic ones: a CommandSigned sealed by
 * sealEvent (spelled out in member order) is the line the RFC 8785 encoder gives, hashed the same
 * and read back by checkLine without a finding; the signed message spelled out is the canonical
 * one; an SSHSIG frame writes what signedData and sshsigBlob do. Values the short way does not
 * cover (strings beyond printable ASCII) take the generic way, and invalid ones are refused as before.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { generateKeyPairSync } from 'node:crypto'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { checkLine, sealEvent, type SealContext } from '../../src/events/chain.js'
import { Principal, canonicalMessage, signedMessage } from '../../src/events/command-signature.js'
import { EVENT_FORMAT } from '../../src/events/envelope.js'
import { signedData, sshsigBlob, sshsigFrame } from '../../src/events/ssh-sig.js'
import { fcOptions } from '../helpers/seed.js'
import { left, right } from '../helpers/fs.js'

const hex = fc.stringMatching(/^[0-9a-f]{64}$/)
const b64 = (n: number): fc.Arbitrary<string> => fc.stringMatching(new RegExp(`^[A-Za-z0-9+/]{${n}}$`))
const actor = fc.constantFrom('operator', 'controller', 'model', 'system')
const identifier = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,40}$/)
// Principals beyond ASCII too (the generic way seals those).
const principal = fc.oneof(
  fc.stringMatching(/^[!#-+\-.-~]{1,40}$/),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).filter((s) => Principal.is(s))
)
const signedEvent = fc
  .record({
    principal,
    key: b64(43).map((k) => `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${k}`),
    fingerprint: b64(43).map((f) => `SHA256:${f}`),
    case_id: identifier,
    first_seq: fc.integer({ min: 1, max: 2 ** 40 }),
    last_seq: fc.integer({ min: 1, max: 2 ** 40 }),
    last_hash: hex.map((h) => `sha256:${h}`),
    actors: fc.uniqueArray(actor, { minLength: 1 }).map((a) => a.sort()),
    signature: b64(400)
  })
  .map((d) => ({ ...d }))
const context = fc
  .record({
    seq: fc.integer({ min: 1, max: 2 ** 40 }),
    prev: hex.map((h) => `sha256:${h}`),
    id: identifier.map((i) => `evt-${i}`),
    at: fc.date({ min: new Date('2020-01-01'), max: new Date('2099-01-01') }).map((d) => d.toISOString()),
    commandId: identifier
  })
  .map((c) => ({ ...c }))

/** What the generic way writes: the canonical envelope, its hash, then the canonical line with it. */
const generic = (data: unknown, a: string, c: SealContext): { line: string; hash: string } => {
  const unsealed = {
    format: EVENT_FORMAT,
    seq: c.seq,
    id: c.id,
    type: 'CommandSigned',
    version: 1,
    at: c.at,
    actor: a,
    command_id: c.commandId,
    data,
    prev: c.prev
  }
  const hash = sha256Digest(right(canonicalJson(unsealed)))
  return { line: right(canonicalJson({ ...unsealed, hash })), hash }
}

const t = suite('sealing a signature')

t('a sealed CommandSigned is the canonical line, hashed as the generic way hashes it, and reads back clean', () => {
  fc.assert(
    fc.property(signedEvent, actor, context, (data, a, c) => {
      const s = right(sealEvent({ type: 'CommandSigned', actor: a as 'operator', data }, c))
      const g = generic(data, a, c)
      assert.is(s.line, g.line)
      assert.is(s.envelope.hash, g.hash)
      assert.equal(JSON.parse(s.line), { ...s.envelope })
      assert.equal(s.event.data, data)
      const checked = checkLine(s.line, { seq: c.seq, prev: c.prev, lineNo: 1 })
      assert.equal(checked.findings, [])
      assert.equal(checked.envelope, s.envelope)
    }),
    fcOptions(300)
  )
})

t('invalid CommandSigned data and envelopes are refused as the generic way refuses them', () => {
  const data = fc.sample(signedEvent, { numRuns: 1, seed: 7 })[0] as Record<string, unknown>
  const c = fc.sample(context, { numRuns: 1, seed: 7 })[0] as SealContext
  const draft = (d: unknown) => ({ type: 'CommandSigned', actor: 'operator' as const, data: d })
  assert.is(left(sealEvent(draft({ ...data, extra: 1 }), c)).code, 'EVENT_DATA_INVALID')
  assert.is(left(sealEvent(draft({ ...data, signature: 'not base64!' }), c)).code, 'EVENT_DATA_INVALID')
  assert.is(left(sealEvent(draft({ ...data, first_seq: 0 }), c)).code, 'EVENT_DATA_INVALID')
  assert.is(left(sealEvent(draft({ ...data, actors: ['nobody'] }), c)).code, 'EVENT_DATA_INVALID')
  assert.is(left(sealEvent(draft(data), { ...c, id: 'evt with space' })).code, 'EVENT_ENVELOPE_INVALID')
  assert.is(left(sealEvent(draft(data), { ...c, at: 'yesterday' })).code, 'EVENT_ENVELOPE_INVALID')
  assert.is(left(sealEvent({ ...draft(data), actor: 'nobody' as 'operator' }, c)).code, 'EVENT_ENVELOPE_INVALID')
})

t('the signed message spelled out is its canonical JSON', () => {
  fc.assert(
    fc.property(signedEvent, (d) => {
      assert.ok(signedMessage(d).equals(canonicalMessage(d)))
    }),
    fcOptions(300)
  )
})

t("an SSHSIG frame writes signedData's and sshsigBlob's bytes", () => {
  const { publicKey } = generateKeyPairSync('ed25519')
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url')
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ minLength: 64, maxLength: 64 }), (m, sig) => {
      const frame = sshsigFrame({ raw }, 'vba-case')
      assert.ok(frame.data(m).equals(signedData('vba-case', m)))
      assert.ok(frame.blob(sig).equals(sshsigBlob({ raw }, 'vba-case', sig)))
    }),
    fcOptions(100)
  )
})

t.run()
