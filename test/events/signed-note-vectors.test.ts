/**
 * The signed head's note format against an independent C2SP signed-note implementation: the test
 * vectors of golang.org/x/mod/sumdb/note (note_test.go; only the data is copied: PeterNeumann's and
 * EnochRoot's keys and the notes they signed). The key ids this library computes
 * (SHA-256(name || 0x0A || 0x01 || key)[:4]) are the ones in those keys, its Ed25519 signature line
 * over the text is byte for byte the one Go wrote (Ed25519 is deterministic), and the judgement of
 * a note accepts both signatures, ignores an untrusted key's line and refuses an altered one.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createPrivateKey, sign } from 'node:crypto'
import { parseAllowedSigners } from '../../src/events/allowed-signers.js'
import { judgeSignedHead, noteKeyId, signatureLine, type SignedHead } from '../../src/events/signed-note.js'
import { publicKeyLine, type SshPublicKey } from '../../src/events/ssh-sig.js'
import { right } from '../helpers/fs.js'

// golang.org/x/mod/sumdb/note/note_test.go: verifier keys NAME+HASH+BASE64(0x01 || key), the
// signer key PRIVATE+KEY+NAME+HASH+BASE64(0x01 || seed), the signed text and its signature lines.
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'
const PETER_SKEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz'
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop'
const TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n"
const PETER_SIG =
  '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n'
const ENOCH_SIG =
  '\u2014 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n'

const keyOf = (vkey: string): { name: string; id: string; key: SshPublicKey } => {
  const [name, id, b64] = vkey.split('+')
  const bytes = Buffer.from(b64 as string, 'base64')
  assert.is(bytes[0], 0x01, 'an Ed25519 verifier key')
  return { name: name as string, id: id as string, key: { raw: bytes.subarray(1) } }
}
const peter = keyOf(PETER_VKEY)
const enoch = keyOf(ENOCH_VKEY)
const trustOf = (...keys: ReadonlyArray<{ name: string; key: SshPublicKey }>) =>
  right(parseAllowedSigners(keys.map((k) => `${k.name} namespaces="vba-case" ${publicKeyLine(k.key)}`).join('\n')))
/** A note of the vectors' text as judgeSignedHead takes it (the text is not a case head, so it is built, not parsed). */
const noteOf = (...lines: string[]): SignedHead => ({
  text: TEXT,
  caseId: 'vectors',
  seq: 1,
  hash: '',
  signatures: lines.map((line) => {
    const [, name, b64] = /^\u2014 (\S+) (\S+)\n$/.exec(line) as RegExpExecArray
    const bytes = Buffer.from(b64 as string, 'base64')
    return { name: name as string, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) }
  })
})

const t = suite('C2SP signed-note vectors (golang.org/x/mod/sumdb/note)')

t('key ids are the ones in the verifier keys', () => {
  assert.is(noteKeyId(peter.name, peter.key).toString('hex'), peter.id)
  assert.is(noteKeyId(enoch.name, enoch.key).toString('hex'), enoch.id)
})

t("signing the text with PeterNeumann's key gives Go's signature line byte for byte", () => {
  const seed = Buffer.from(PETER_SKEY.split('+').slice(4).join('+'), 'base64').subarray(1)
  const key = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: peter.key.raw.toString('base64url') },
    format: 'jwk'
  })
  assert.is(signatureLine(peter.name, peter.key, sign(null, Buffer.from(TEXT), key)), PETER_SIG)
})

t("Go's notes verify: both signers trusted, an unknown key's line ignored, an altered signature refused", () => {
  const both = judgeSignedHead(noteOf(PETER_SIG, ENOCH_SIG), null, trustOf(peter, enoch), Date.now())
  assert.equal(both.findings, [])
  assert.equal(
    both.signers.map((s) => [s.principal, s.trusted]),
    [
      ['PeterNeumann', true],
      ['EnochRoot', true]
    ]
  )
  const peterOnly = judgeSignedHead(noteOf(PETER_SIG, ENOCH_SIG), null, trustOf(peter), Date.now())
  assert.equal(peterOnly.findings, [])
  assert.equal(
    peterOnly.signers.map((s) => [s.principal, s.trusted]),
    [
      ['PeterNeumann', true],
      ['EnochRoot', null]
    ]
  )
  // A byte of the signature altered, its key id kept.
  const flipped = PETER_SIG.replace('SffcvIAQ', 'SffcvIAR')
  const bad = judgeSignedHead(noteOf(flipped), null, trustOf(peter), Date.now())
  assert.equal(
    bad.findings.map((f) => f.code),
    ['SIGNED_HEAD_SIGNATURE_INVALID']
  )
  const untrusted = judgeSignedHead(noteOf(ENOCH_SIG), null, trustOf(peter), Date.now())
  assert.equal(
    untrusted.findings.map((f) => f.code),
    ['SIGNED_HEAD_UNTRUSTED']
  )
})

t.run()
