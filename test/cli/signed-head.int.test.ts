/**
 * Signed receipts and witnesses: `vba head --sign-key` prints a C2SP signed note, `verify
 * --expect-head FILE --trust FILE` checks it, a second key cosigns it, and each forgery of a
 * signed receipt is refused with its own findings: a head the signer never signed, an altered
 * signature, a key outside the trust file, a note of another case. No output holds a private key.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeNewKey, type Signer } from '../../src/adapters/ssh-keys.js'
import { openVba } from '../../src/index.js'
import { vba, type CliResult } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { writeShortModel, writeWorld } from '../helpers/investigation.js'
import { postgresStore } from '../helpers/stores.js'

const root = tempDir('signed-head')
const keyOf = async (name: string): Promise<{ file: string; line: string; signer: Signer }> => {
  const file = path.join(root, `${name}.key`)
  const made = await writeNewKey(file, name)
  return { file, line: made.allowedSigners, signer: made.signer }
}
const op = await keyOf('op@example.org')
const witness = await keyOf('witness')
const evil = await keyOf('evil')
const trustFile = path.join(root, 'allowed_signers')
writeFileSync(trustFile, `${op.line}\n${witness.line}\n`)
const witnessOnly = path.join(root, 'witness_signers')
writeFileSync(witnessOnly, `${witness.line}\n`)

const outputs: CliResult[] = []
const run = (args: string[]): CliResult => {
  const r = vba(args)
  outputs.push(r)
  return r
}
const noteCase = async (name: string, notes: number): Promise<string> => {
  const dir = path.join(root, name)
  const client = await openVba({})
  await client.cases.create(dir, { id: `case-${name}` })
  for (let i = 0; i < notes; i++) await client.cases.note(dir, { text: `note ${i}` })
  await client.close()
  return dir
}
const save = (name: string, text: string): string => {
  const file = path.join(root, name)
  writeFileSync(file, text.endsWith('\n') ? text : `${text}\n`)
  return file
}
const errorCodes = (r: CliResult): string[] =>
  r.stdout
    .split('\n')
    .filter((l) => l.startsWith('{"finding"'))
    .map((l) => (JSON.parse(l) as { finding: { code: string; severity: string } }).finding)
    .filter((f) => f.severity === 'error')
    .map((f) => f.code)
    .sort()
const verifyWith = (dir: string, note: string, trust = trustFile): CliResult =>
  run(['verify', dir, '--expect-head', note, '--trust', trust, '--json'])

const dir = await noteCase('a', 3)
const signed = run(['--sign-key', op.file, 'head', dir])
const noteFile = save('a.note', signed.stdout)

const t = suite('signed heads')

t('vba head prints SEQ:HASH; with --sign-key a C2SP signed note, key id and signature as the spec says', () => {
  const plain = run(['head', dir])
  assert.is(plain.code, 0, plain.stderr)
  assert.match(plain.stdout, /^3:sha256:[0-9a-f]{64}\n$/)
  const [seq, hash] = plain.stdout.trim().split(/:(.*)/s)
  assert.is(signed.code, 0, signed.stderr)
  const lines = signed.stdout.split('\n')
  assert.equal(lines.slice(0, 4), ['case-a', seq, hash, ''])
  const m = /^\u2014 op@example\.org ([A-Za-z0-9+/=]+)$/.exec(lines[4] ?? '')
  assert.ok(m !== null, lines[4])
  assert.is(lines.length, 6)
  // key id = SHA-256(name || 0x0A || 0x01 || public key)[:4]; the signature is Ed25519 over the text
  const raw = Buffer.from(op.signer.publicKey.split(' ')[1] as string, 'base64').subarray(-32)
  const keyId = createHash('sha256')
    .update(Buffer.concat([Buffer.from('op@example.org\n'), Buffer.from([1]), raw]))
    .digest()
    .subarray(0, 4)
  const bytes = Buffer.from(m?.[1] as string, 'base64')
  assert.ok(bytes.subarray(0, 4).equals(keyId))
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' })
  assert.ok(cryptoVerify(null, Buffer.from(`case-a\n${seq}\n${hash}\n`), pub, bytes.subarray(4)))
})

t('verify --expect-head NOTE --trust FILE names the head signer; without --trust it is a usage error', () => {
  const ok = run(['verify', dir, '--expect-head', noteFile, '--trust', trustFile])
  assert.is(ok.code, 0, ok.stdout + ok.stderr)
  assert.match(ok.stdout, `head signed by op@example.org ${op.signer.fingerprint}: trusted`)
  const noTrust = run(['verify', dir, '--expect-head', noteFile])
  assert.is(noTrust.code, 2)
  assert.match(noTrust.stderr, 'vba: INVALID_ARGUMENT: a signed head is checked against')
  const garbage = run([
    'verify',
    dir,
    '--expect-head',
    save('garbage.note', 'case-a\n3\n\n— x y'),
    '--trust',
    trustFile
  ])
  assert.is(garbage.code, 2)
  assert.match(garbage.stderr, `INVALID_ARGUMENT: --expect-head ${path.join(root, 'garbage.note')}: not a signed head`)
})

t('forged signed receipts: each refused with its own findings', async () => {
  const note = readFileSync(noteFile, 'utf8')
  const [, seq, hash] = note.split('\n')
  // A head the signer never signed: the case grew, the forger moves the note to the new head.
  await openVba({}).then(async (c) => {
    await c.cases.note(dir, { text: 'later' })
    await c.close()
  })
  const now = run(['head', dir]).stdout.trim().split(/:(.*)/s)
  const moved = save('moved.note', note.replace(`\n${seq}\n${hash}\n`, `\n${now[0]}\n${now[1]}\n`))
  assert.equal(errorCodes(verifyWith(dir, moved)), ['SIGNED_HEAD_SIGNATURE_INVALID'])
  // Its hash altered alone: the signature fails and the case has another event there.
  const otherHash = run(['head', await noteCase('b', 3)])
    .stdout.trim()
    .split(/:(.*)/s)[1] as string
  const altered = save('altered-hash.note', note.replace(hash as string, otherHash))
  assert.equal(errorCodes(verifyWith(dir, altered)), ['HEAD_FORK', 'SIGNED_HEAD_SIGNATURE_INVALID'])
  // The signature's bytes altered (its key id kept).
  const sigLine = note.split('\n')[4] as string
  const b = Buffer.from(sigLine.split(' ')[2] as string, 'base64')
  b[10] = (b[10] as number) ^ 1
  const flipped = save('flipped.note', note.replace(sigLine, `\u2014 op@example.org ${b.toString('base64')}`))
  assert.equal(errorCodes(verifyWith(dir, flipped)), ['SIGNED_HEAD_SIGNATURE_INVALID'])
  // Signed by a key outside the trust file.
  const byEvil = save('evil.note', run(['--sign-key', evil.file, 'head', dir]).stdout)
  const r = verifyWith(dir, byEvil)
  assert.equal(errorCodes(r), ['SIGNED_HEAD_UNTRUSTED'])
  assert.match(r.stdout, 'no key of evil with its key id is in the trust file')
  // A note of another case.
  const other = save('other.note', run(['--sign-key', op.file, 'head', path.join(root, 'b')]).stdout)
  assert.equal(errorCodes(verifyWith(dir, other)), ['SIGNED_HEAD_OTHER_CASE'])
  // The true note still holds for the grown case.
  assert.is(verifyWith(dir, noteFile).code, 0)
})

t('a bag: verify BAG --expect-head NOTE --trust FILE accepts the note, refuses a forged one', async () => {
  const bagged = await noteCase('bagged', 2)
  const note = save('bagged.note', run(['--sign-key', op.file, 'head', bagged]).stdout)
  const bag = path.join(root, 'bagged.tar')
  assert.is(run(['export', bagged, bag]).code, 0)
  const ok = run(['verify', bag, '--expect-head', note, '--trust', trustFile])
  assert.is(ok.code, 0, ok.stdout + ok.stderr)
  assert.match(ok.stdout, `head signed by op@example.org ${op.signer.fingerprint}: trusted`)
  // The signature's bytes altered, and a note by a key outside the trust file: each its finding.
  const text = readFileSync(note, 'utf8')
  const sigLine = text.split('\n')[4] as string
  const b = Buffer.from(sigLine.split(' ')[2] as string, 'base64')
  b[12] = (b[12] as number) ^ 1
  const flipped = save('bagged-flipped.note', text.replace(sigLine, `\u2014 op@example.org ${b.toString('base64')}`))
  const refused = verifyWith(bag, flipped)
  assert.is(refused.code, 1, refused.stdout)
  assert.equal(errorCodes(refused), ['SIGNED_HEAD_SIGNATURE_INVALID'])
  const byEvil = save('bagged-evil.note', run(['--sign-key', evil.file, 'head', bagged]).stdout)
  assert.equal(errorCodes(verifyWith(bag, byEvil)), ['SIGNED_HEAD_UNTRUSTED'])
})

t('a witness cosigns: its copy must hold the head; the note then verifies with both signers', async () => {
  const cosigned = run(['--sign-key', witness.file, 'head', dir, '--cosign', noteFile])
  assert.is(cosigned.code, 0, cosigned.stderr)
  const lines = cosigned.stdout.trim().split('\n')
  assert.is(lines.length, 6)
  assert.match(lines[5] as string, /^\u2014 witness /)
  const both = save('cosigned.note', cosigned.stdout)
  const ok = run(['verify', dir, '--expect-head', both, '--trust', trustFile])
  assert.is(ok.code, 0, ok.stdout)
  assert.match(ok.stdout, `head signed by op@example.org ${op.signer.fingerprint}: trusted`)
  assert.match(ok.stdout, `head signed by witness ${witness.signer.fingerprint}: trusted`)
  // A verifier who trusts the witness alone: the operator's line is ignored, the head holds.
  const byWitness = run(['verify', dir, '--expect-head', both, '--trust', witnessOnly])
  assert.is(byWitness.code, 0, byWitness.stdout)
  assert.match(byWitness.stdout, 'head signed by op@example.org: key not in the trust file (ignored)')
  // Cosigning twice adds nothing; a copy of the case without that head is refused.
  assert.is(run(['--sign-key', witness.file, 'head', dir, '--cosign', both]).stdout, cosigned.stdout)
  const short = await noteCase('short', 1)
  const refused = run(['--sign-key', witness.file, 'head', short, '--cosign', noteFile])
  assert.is(refused.code, 2)
  assert.match(refused.stderr, 'INVALID_ARGUMENT: the signed head is of case case-a')
  const rolledBack = path.join(root, 'rolled')
  await openVba({}).then(async (c) => {
    await c.cases.create(rolledBack, { id: 'case-a' })
    await c.close()
  })
  const fork = run(['--sign-key', witness.file, 'head', rolledBack, '--cosign', noteFile])
  assert.is(fork.code, 1)
  assert.match(fork.stderr, 'not cosigned')
  assert.is(run(['head', dir, '--cosign', noteFile]).code, 2, 'cosigning needs a key')
})

t('PostgreSQL: vba --store head --sign-key and verify --expect-head there', async () => {
  const store = await postgresStore('signedhead')
  try {
    const client = await openVba({ store: store.url, migrate: true })
    await client.cases.create('case-pg-head', { id: 'case-pg-head' })
    await client.cases.note('case-pg-head', { text: 'in the store' })
    await client.close()
    const head = run(['--store', store.url, '--sign-key', op.file, 'head', 'case-pg-head'])
    assert.is(head.code, 0, head.stderr)
    const file = save('pg.note', head.stdout)
    const ok = run(['--store', store.url, 'verify', 'case-pg-head', '--expect-head', file, '--trust', trustFile])
    assert.is(ok.code, 0, ok.stdout + ok.stderr)
    assert.match(ok.stdout, 'head signed by op@example.org')
    const evilNote = save(
      'pg-evil.note',
      run(['--store', store.url, '--sign-key', evil.file, 'head', 'case-pg-head']).stdout
    )
    const bad = run([
      '--store',
      store.url,
      'verify',
      'case-pg-head',
      '--expect-head',
      evilNote,
      '--trust',
      trustFile,
      '--json'
    ])
    assert.equal(errorCodes(bad), ['SIGNED_HEAD_UNTRUSTED'])
  } finally {
    await store.drop()
  }
})

t('a fleet worker with a key prints a signed receipt of every case it finishes', async () => {
  const store = await postgresStore('signedwork')
  const profile = writeWorld(tempDir('signed-head-world'))
  const model = path.join(root, 'model.sh')
  writeShortModel(model)
  try {
    const s = ['--store', store.url]
    assert.is(run([...s, 'store', 'migrate']).code, 0)
    assert.is(run([...s, 'case', 'init', 'case-work']).code, 0)
    const input = save(
      'report.json',
      JSON.stringify({ report: 'Quest 11117 cannot be completed.', entities: [{ type: 'quest', id: 11117 }] })
    )
    assert.is(run([...s, 'case', 'prepare', 'case-work', '--config', profile, '--input', input]).code, 0)
    const w = run([
      ...s,
      '--sign-key',
      witness.file,
      'work',
      '--config',
      profile,
      '--model-command',
      model,
      '--worker',
      'w1',
      '--until-idle'
    ])
    assert.is(w.code, 0, w.stderr)
    const at = w.stdout.indexOf('w1: case-work signed head')
    assert.ok(at >= 0, w.stdout)
    const note = w.stdout.slice(at).split('\n').slice(1, 6).join('\n')
    assert.match(note, /^case-work\n\d+\nsha256:[0-9a-f]{64}\n\n\u2014 witness /)
    const ok = run([...s, 'verify', 'case-work', '--expect-head', save('work.note', note), '--trust', trustFile])
    assert.is(ok.code, 0, ok.stdout + ok.stderr)
    assert.match(ok.stdout, `head signed by witness ${witness.signer.fingerprint}: trusted`)
  } finally {
    await store.drop()
  }
})

t('no output holds a private key', () => {
  for (const k of [op, witness, evil]) {
    const body = readFileSync(k.file, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('-----'))
    for (const r of outputs)
      for (const line of body) assert.not.ok((r.stdout + r.stderr).includes(line), 'a private key line in an output')
  }
  for (const r of outputs) assert.not.match(r.stdout + r.stderr, 'PRIVATE KEY')
})

t.run()
