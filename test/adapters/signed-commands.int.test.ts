/**
 * Signed commands: every command of a signer-configured writer ends with CommandSigned, and verify
 * names who signed what. Each forgery of "Done when" is a finding here: a command re-signed by a
 * key outside the trust file, a signature moved to another case or command, a command replayed
 * into another case, an operator key signing a model decision, a key used after its valid-before,
 * a rewritten and re-chained case, an unsigned command under --require-signed; and ssh-keygen
 * accepts a signature extracted from a case.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { readSigner, writeNewKey, type Signer } from '../../src/adapters/ssh-keys.js'
import { useProcessSigner } from '../../src/adapters/env.js'
import { signedMessage, type CommandSigned } from '../../src/events/command-signature.js'
import { armor } from '../../src/events/ssh-sig.js'
import type { EventEnvelope } from '../../src/events/envelope.js'
import { openVba, type VerifyReport } from '../../src/index.js'
import { forger } from '../helpers/forger.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { postgresStore } from '../helpers/stores.js'

const root = tempDir('signed')
const keys = tempDir('signed-keys')
const keyOf = async (name: string): Promise<{ file: string; line: string; signer: Signer }> => {
  const file = path.join(keys, name)
  const made = await writeNewKey(file, name)
  return { file, line: made.allowedSigners, signer: made.signer }
}
const op = await keyOf('op@example.org')
const w1 = await keyOf('worker-1')
const w2 = await keyOf('worker-2')
const evil = await keyOf('evil')
const trustFile = path.join(root, 'allowed_signers')
writeFileSync(trustFile, `${op.line}\n${w1.line}\n${w2.line}\n`)
const trust = { allowedSigners: readFileSync(trustFile, 'utf8') }

const codes = (r: VerifyReport): string[] => r.findings.filter((f) => f.severity === 'error').map((f) => f.code)
const log = (dir: string): EventEnvelope[] =>
  readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as EventEnvelope)

/** A case with one note signed by `signer`. */
const signedCase = async (name: string, signer: Signer, text = 'checked the spawn table'): Promise<string> => {
  const dir = path.join(root, name)
  const client = await openVba({ signer })
  await client.cases.create(dir, { id: `case-${name}` })
  await client.cases.note(dir, { text })
  await client.close()
  return dir
}
const verify = async (dir: string, o: Parameters<Awaited<ReturnType<typeof openVba>>['cases']['verify']>[1] = {}) => {
  const client = await openVba({})
  try {
    return await client.cases.verify(dir, o)
  } finally {
    await client.close()
  }
}

const t = suite('signed commands')

t(
  'a signed note: one CommandSigned ends the command; verify --trust names the signer; unsigned writers unchanged',
  async () => {
    const dir = await signedCase('basic', op.signer)
    const events = log(dir)
    assert.equal(
      events.map((e) => e.type),
      ['NoteRecorded', 'CommandSigned']
    )
    assert.is(events[1]?.command_id, events[0]?.command_id)
    const r = await verify(dir, { trust })
    assert.ok(r.valid, JSON.stringify(r.findings))
    assert.equal(r.signatures?.signers, [
      { principal: 'op@example.org', fingerprint: op.signer.fingerprint, commands: 1, trusted: true }
    ])
    const plain = path.join(root, 'plain')
    const client = await openVba({})
    await client.cases.create(plain, { id: 'case-plain' })
    await client.cases.note(plain, { text: 'x' })
    await client.close()
    assert.equal(
      log(plain).map((e) => e.type),
      ['NoteRecorded']
    )
    const report = await verify(plain)
    assert.is(report.signatures, undefined, 'nothing about signers in the report of an unsigned case')
    assert.equal(codes(await verify(plain, { requireSigned: true })), ['UNSIGNED_COMMAND'])
  }
)

t('ssh-keygen -Y verify accepts a signature extracted from a case, with the same allowed_signers line', async () => {
  const dir = await signedCase('extract', w1.signer)
  const sig = log(dir)[1]?.data as CommandSigned
  const sigFile = path.join(root, 'extract.sig')
  writeFileSync(sigFile, armor(Buffer.from(sig.signature, 'base64')))
  const r = spawnSync(
    'ssh-keygen',
    ['-Y', 'verify', '-f', trustFile, '-I', sig.principal, '-n', 'vba-case', '-s', sigFile],
    { input: signedMessage(sig), encoding: 'utf8' }
  )
  assert.is(r.status, 0, r.stderr + r.stdout)
  assert.match(r.stdout, 'Good "vba-case" signature for worker-1')
})

t('a command re-signed by a key outside the trust file is SIGNER_UNTRUSTED', async () => {
  const dir = await signedCase('evil', evil.signer)
  const r = await verify(dir, { trust })
  assert.equal(codes(r), ['SIGNER_UNTRUSTED'])
  assert.match(r.findings[0]?.message ?? '', 'is not in the trust file')
  assert.is(r.signatures?.signers[0]?.trusted, false)
})

t('a signature moved from one case to another, or between commands, is SIGNATURE_INVALID', async () => {
  const a = await signedCase('move-a', op.signer)
  const b = await signedCase('move-b', op.signer)
  const fromA = log(a)[1]?.data as CommandSigned
  forger(b).rewrite(2, () => fromA)
  const moved = await verify(b, { trust })
  assert.ok(codes(moved).includes('SIGNATURE_INVALID'), JSON.stringify(moved.findings))
  // the same signer, two notes: their signatures swapped
  const c = await signedCase('move-c', op.signer)
  const client = await openVba({ signer: op.signer })
  await client.cases.note(c, { text: 'second' })
  await client.close()
  const [s1, s2] = [log(c)[1]?.data, log(c)[3]?.data]
  const f = forger(c)
  f.rewrite(2, () => s2)
  f.rewrite(4, () => s1)
  const swapped = await verify(c, { trust })
  assert.ok(codes(swapped).filter((x) => x === 'SIGNATURE_INVALID').length === 2, JSON.stringify(swapped.findings))
})

t('a signed command replayed into another case is SIGNATURE_INVALID', async () => {
  const a = await signedCase('replay-a', w2.signer, 'the fix is in SmartAI')
  const b = path.join(root, 'replay-b')
  const client = await openVba({})
  await client.cases.create(b, { id: 'case-replay-b' })
  await client.close()
  const [note, sig] = log(a)
  forger(b).append(
    'replayed',
    [note, sig].map((e) => ({ type: e?.type ?? '', actor: e?.actor ?? 'operator', data: e?.data })),
    [],
    { at: note?.at ?? '' }
  )
  const r = await verify(b, { trust })
  assert.ok(codes(r).includes('SIGNATURE_INVALID'), JSON.stringify(r.findings))
})

t('a rewritten and re-chained case: the chain holds, its signature does not', async () => {
  const dir = await signedCase('rewrite', op.signer, 'no bug here')
  const f = forger(dir)
  f.rewrite(1, (d) => ({ ...(d as object), text: 'the bug is in the core' }))
  const r = await verify(dir, { trust })
  assert.equal(codes(r), ['RULE_COMMAND', 'SIGNATURE_INVALID'], 'the rule sees the stale hash, verify the signature')
  assert.match(r.findings[1]?.message ?? '', 'was made for events 1–1 ending in')
  // a forger who also writes the new hash into the signature event: the signature no longer holds
  const newHash = log(dir)[0]?.hash
  f.rewrite(2, (d) => ({ ...(d as object), last_hash: newHash }))
  const again = await verify(dir, { trust })
  assert.equal(codes(again), ['SIGNATURE_INVALID'])
  assert.match(again.findings[0]?.message ?? '', 'does not hold')
})

t('a key used after its valid-before is SIGNER_UNTRUSTED', async () => {
  const dir = await signedCase('expired', op.signer)
  const expired = op.line.replace('namespaces="vba-case"', 'namespaces="vba-case",valid-before="20200101Z"')
  const r = await verify(dir, { trust: { allowedSigners: `${expired}\n` } })
  assert.equal(codes(r), ['SIGNER_UNTRUSTED'])
  assert.match(r.findings[0]?.message ?? '', 'valid-before')
})

t("an operator key signing a model's decisions is SIGNER_UNTRUSTED under its actor binding", async () => {
  const dir = path.join(root, 'investigation')
  useProcessSigner(async () => op.signer)
  try {
    await writeInvestigation(dir, tempDir('signed-world'))
  } finally {
    useProcessSigner(undefined)
  }
  const events = log(dir)
  const commands = new Set(events.map((e) => e.command_id))
  assert.is(events.filter((e) => e.type === 'CommandSigned').length, commands.size, 'every command signed')
  const plain = await verify(dir, { trust, requireSigned: true })
  assert.ok(plain.valid, JSON.stringify(plain.findings.slice(0, 3)))
  const bound = await verify(dir, { trust: { ...trust, actors: { 'op@example.org': ['operator'] } } })
  const untrusted = bound.findings.filter((f) => f.code === 'SIGNER_UNTRUSTED')
  assert.ok(untrusted.length > 0)
  assert.ok(untrusted.every((f) => /may sign operator commands only/.test(f.message)))
  assert.ok(untrusted.some((f) => /written by .*model/.test(f.message)))
  const cli = vba(['verify', dir, '--trust', trustFile, '--trust-actor', 'op@example.org=operator,controller,system'])
  assert.is(cli.code, 1)
  assert.match(cli.stdout, 'SIGNER_UNTRUSTED')
  assert.match(cli.stdout, `signed by op@example.org ${op.signer.fingerprint}`)
})

t('the CLI: --sign-key, VBA_SIGN_KEY, --trust, --require-signed; a bad trust file is TRUST_INVALID', async () => {
  const dir = path.join(root, 'cli')
  assert.is(vba(['case', 'init', dir, '--id', 'case-cli-signed']).code, 0)
  assert.is(vba(['--sign-key', op.file, 'case', 'note', dir, 'by the operator']).code, 0)
  assert.is(vba(['case', 'note', dir, 'by the worker'], { env: { VBA_SIGN_KEY: w1.file } }).code, 0)
  const ok = vba(['verify', dir, '--trust', trustFile, '--require-signed'])
  assert.is(ok.code, 0, ok.stdout + ok.stderr)
  assert.match(ok.stdout, `signed by op@example.org ${op.signer.fingerprint}: 1 command, trusted`)
  assert.match(ok.stdout, `signed by worker-1 ${w1.signer.fingerprint}: 1 command, trusted`)
  assert.is(vba(['case', 'note', dir, 'unsigned']).code, 0)
  const unsigned = vba(['verify', dir, '--require-signed', '--json'])
  assert.is(unsigned.code, 1)
  assert.match(unsigned.stdout, '"code":"UNSIGNED_COMMAND"')
  const tar = path.join(root, 'cli.tar')
  assert.is(vba(['export', dir, tar]).code, 0)
  const refusedImport = vba(['import', tar, path.join(root, 'cli-imported'), '--require-signed'])
  assert.is(refusedImport.code, 1)
  assert.match(refusedImport.stderr, 'UNSIGNED_COMMAND')
  assert.is(vba(['import', tar, path.join(root, 'cli-imported'), '--trust', trustFile]).code, 0)
  const bad = path.join(root, 'bad_signers')
  writeFileSync(bad, `op cert-authority ${op.signer.publicKey}\n`)
  const refused = vba(['verify', dir, '--trust', bad])
  assert.is(refused.code, 2)
  assert.match(refused.stderr, 'vba: TRUST_INVALID: allowed_signers line 1: cert-authority')
  const missing = vba(['--sign-key', path.join(root, 'nope'), 'case', 'note', dir, 'x'])
  // a key file that is not there is the operator's to fix (exit 2), not an outage to retry (3)
  assert.is(missing.code, 2)
  assert.match(missing.stderr, `vba: KEY_INVALID: the signing key ${path.join(root, 'nope')} cannot be read (ENOENT)`)
  assert.not.match(missing.stderr + ok.stdout, 'PRIVATE KEY')
  assert.is((await readSigner(op.file)).fingerprint, op.signer.fingerprint)
})

t(
  'PostgreSQL: signatures travel in the log; verify --trust names the signers there and in an exported bag',
  async () => {
    const store = await postgresStore('signed')
    try {
      const client = await openVba({ store: store.url, migrate: true, signer: w2.signer })
      await client.cases.create('case-pg', { id: 'case-pg' })
      await client.cases.note('case-pg', { text: 'from a worker' })
      const r = await client.cases.verify('case-pg', { trust, requireSigned: true })
      assert.ok(r.valid, JSON.stringify(r.findings))
      assert.is(r.signatures?.signers[0]?.principal, 'worker-2')
      const bag = path.join(root, 'pg.tar')
      await client.transport.export('case-pg', bag)
      await client.close()
      const cli = vba(['verify', bag, '--trust', trustFile])
      assert.is(cli.code, 0, cli.stdout + cli.stderr)
      assert.match(cli.stdout, 'signed by worker-2')
    } finally {
      await store.drop()
    }
  }
)

t(
  'vba store import --require-signed --trust refuses an unsigned case or an untrusted signer, and imports a trusted one',
  async () => {
    const store = await postgresStore('signedimport')
    try {
      const s = ['--store', store.url]
      assert.is(vba([...s, 'store', 'migrate']).code, 0)
      const trusted = await signedCase('import-trusted', w1.signer)
      const untrusted = await signedCase('import-evil', evil.signer)
      const plain = path.join(root, 'import-plain')
      const client = await openVba({})
      await client.cases.create(plain, { id: 'case-import-plain' })
      await client.cases.note(plain, { text: 'unsigned' })
      await client.close()
      const unsigned = vba([...s, 'store', 'import', plain, '--require-signed'])
      assert.is(unsigned.code, 1, unsigned.stderr)
      assert.match(unsigned.stderr, 'CASE_CORRUPT')
      assert.match(unsigned.stderr, 'UNSIGNED_COMMAND')
      const bag = path.join(root, 'import-evil.tar')
      assert.is(vba(['export', untrusted, bag]).code, 0)
      const evilImport = vba([...s, 'store', 'import', bag, '--trust', trustFile])
      assert.not.equal(evilImport.code, 0)
      assert.match(evilImport.stderr, 'SIGNER_UNTRUSTED')
      const ok = vba([...s, 'store', 'import', trusted, '--trust', trustFile, '--require-signed'])
      assert.is(ok.code, 0, ok.stderr)
      assert.is(ok.stdout.trim(), 'case-import-trusted')
      assert.is(vba([...s, 'store', 'import', plain]).code, 0, 'without the options, as before')
    } finally {
      await store.drop()
    }
  }
)

t.run()
