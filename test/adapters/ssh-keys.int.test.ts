import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { readSigner, signOffThread, type Signer } from '../../src/adapters/ssh-keys.js'
import { armor, dearmor, verifySshsig } from '../../src/events/ssh-sig.js'
import { parseAllowedSigners, signerRefusal } from '../../src/events/allowed-signers.js'
import { FailureError } from '../../src/failures/error.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

/** The machine's OpenSSH, the reference every format here is held to. */
const keygen = (args: readonly string[], input?: string): { code: number; stdout: string; stderr: string } => {
  const r = spawnSync('ssh-keygen', args, { encoding: 'utf8', input: input ?? '' })
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}

const keys = suite('ssh keys and SSHSIG against ssh-keygen')

const codeOf = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p
    return 'no failure'
  } catch (e) {
    return e instanceof FailureError ? e.failure.code : String(e)
  }
}

keys('vba keys new writes a key ssh-keygen reads: same public key, same fingerprint, mode 0600', async () => {
  const dir = tempDir('keys')
  const file = path.join(dir, 'alice')
  const r = vba(['keys', 'new', file, '--principal', 'alice@example.org', '--json'])
  assert.is(r.code, 0, r.stderr)
  const out = JSON.parse(r.stdout) as { fingerprint: string; allowed_signers: string }
  assert.is(statSync(file).mode & 0o777, 0o600)
  const listed = keygen(['-l', '-f', file])
  assert.is(listed.code, 0, listed.stderr)
  assert.is(listed.stdout.split(' ')[1], out.fingerprint)
  assert.match(listed.stdout, 'alice@example.org (ED25519)')
  const pub = keygen(['-y', '-f', file])
  assert.is(pub.stdout.trim(), readFileSync(`${file}.pub`, 'utf8').trim())
  assert.ok(out.allowed_signers.startsWith('alice@example.org namespaces="vba-case" ssh-ed25519 '))
  const again = vba(['keys', 'new', file, '--principal', 'bob'])
  assert.is(again.code, 2)
  assert.match(again.stderr, 'vba: OUTPUT_EXISTS:')
  assert.not.match(r.stdout + r.stderr, 'PRIVATE KEY')
})

keys('a key ssh-keygen made is read with the fingerprint ssh-keygen -l prints', async () => {
  const file = path.join(tempDir('keys'), 'bob')
  assert.is(keygen(['-q', '-t', 'ed25519', '-N', '', '-C', 'bob@host', '-f', file]).code, 0)
  const signer = await readSigner(file)
  assert.is(signer.principal, 'bob@host')
  assert.is(signer.fingerprint, keygen(['-l', '-f', file]).stdout.split(' ')[1])
  assert.is(`${signer.publicKey} bob@host`, readFileSync(`${file}.pub`, 'utf8').trim())
  assert.is((await readSigner(file, 'worker-b')).principal, 'worker-b')
})

keys('our SSHSIG passes ssh-keygen -Y verify; ssh-keygen -Y sign passes ours', async () => {
  const dir = tempDir('keys')
  const file = path.join(dir, 'k')
  const made = JSON.parse(vba(['keys', 'new', file, '--principal', 'alice@example.org', '--json']).stdout) as {
    allowed_signers: string
  }
  const allowed = path.join(dir, 'allowed_signers')
  writeFileSync(allowed, `${made.allowed_signers}\n`)
  const message = Buffer.from('case-1 1..3 sha256:00\n', 'utf8')
  const signer = await readSigner(file)
  const sigFile = path.join(dir, 'ours.sig')
  writeFileSync(sigFile, armor(Buffer.from(await signer.sign('vba-case', message))))
  const ok = keygen(
    ['-Y', 'verify', '-f', allowed, '-I', 'alice@example.org', '-n', 'vba-case', '-s', sigFile],
    message.toString()
  )
  assert.is(ok.code, 0, ok.stderr + ok.stdout)
  assert.match(ok.stdout, 'Good "vba-case" signature for alice@example.org')
  const other = keygen(['-Y', 'verify', '-f', allowed, '-I', 'alice@example.org', '-n', 'vba-case', '-s', sigFile], 'x')
  assert.is.not(other.code, 0, 'another message does not verify')
  const wrongNs = keygen(
    ['-Y', 'verify', '-f', allowed, '-I', 'alice@example.org', '-n', 'git', '-s', sigFile],
    message.toString()
  )
  assert.is.not(wrongNs.code, 0, 'another namespace does not verify')

  const msgFile = path.join(dir, 'msg')
  writeFileSync(msgFile, message)
  const signed = keygen(['-Y', 'sign', '-f', file, '-n', 'vba-case', msgFile])
  assert.is(signed.code, 0, signed.stderr)
  const theirs = E.getOrElseW(() => Buffer.alloc(0))(dearmor(readFileSync(`${msgFile}.sig`, 'utf8')))
  const v = verifySshsig(theirs, 'vba-case', message)
  assert.ok(E.isRight(v), JSON.stringify(v))
  assert.ok(E.isLeft(verifySshsig(theirs, 'vba-case', Buffer.from('other'))))
  assert.ok(E.isLeft(verifySshsig(theirs, 'git', message)))
  const flipped = Buffer.from(theirs)
  flipped[flipped.length - 1] = (flipped[flipped.length - 1] as number) ^ 1
  assert.ok(E.isLeft(verifySshsig(flipped, 'vba-case', message)))
})

keys(
  'signed off the main thread: the same bytes as ssh-keygen -Y sign and the signer itself; other signers sign themselves',
  async () => {
    const dir = tempDir('keys')
    const file = path.join(dir, 'k')
    assert.is(vba(['keys', 'new', file, '--principal', 'alice@example.org']).code, 0)
    const signer = await readSigner(file)
    const msgFile = path.join(dir, 'msg')
    for (const [namespace, text] of [
      ['vba-case', 'case-1 1..3 sha256:00'],
      ['vba-case', 'case-2 4..9 sha256:ff'],
      ['git', 'another namespace']
    ] as const) {
      const message = Buffer.from(text, 'utf8')
      const off = Buffer.from(await signOffThread(signer)(namespace, message))
      assert.ok(off.equals(Buffer.from(await signer.sign(namespace, message))), `${namespace}: the signer's own bytes`)
      // Ed25519 is deterministic: OpenSSH's own signature of the same message is the same blob.
      writeFileSync(msgFile, message)
      rmSync(`${msgFile}.sig`, { force: true })
      const signed = keygen(['-Y', 'sign', '-f', file, '-n', namespace, msgFile])
      assert.is(signed.code, 0, signed.stderr)
      const theirs = E.getOrElseW(() => Buffer.alloc(0))(dearmor(readFileSync(`${msgFile}.sig`, 'utf8')))
      assert.ok(off.equals(theirs), `${namespace}: ssh-keygen's bytes`)
    }
    // A signer this module did not make (an agent's, the API's own) signs with its own sign, as itself.
    const calls: string[] = []
    const own: Signer = {
      ...signer,
      sign(namespace, message) {
        calls.push(`${this === own} ${namespace}`)
        return signer.sign(namespace, message)
      }
    }
    const m = Buffer.from('x')
    assert.ok(
      Buffer.from(await signOffThread(own)('vba-case', m)).equals(Buffer.from(await signer.sign('vba-case', m)))
    )
    assert.equal(calls, ['true vba-case'])
  }
)

keys('passphrase-protected and non-Ed25519 keys are refused with their codes', async () => {
  const dir = tempDir('keys')
  const enc = path.join(dir, 'enc')
  keygen(['-q', '-t', 'ed25519', '-N', 'secret phrase', '-f', enc])
  assert.is(await codeOf(readSigner(enc)), 'KEY_ENCRYPTED')
  const r = vba(['keys', 'show', enc])
  assert.is(r.code, 2)
  assert.match(r.stderr, 'vba: KEY_ENCRYPTED:')
  assert.match(r.stderr, 'passphrase')
  const rsa = path.join(dir, 'rsa')
  keygen(['-q', '-t', 'rsa', '-b', '2048', '-N', '', '-f', rsa])
  assert.is(await codeOf(readSigner(rsa)), 'KEY_INVALID')
  writeFileSync(path.join(dir, 'junk'), 'not a key')
  assert.is(await codeOf(readSigner(path.join(dir, 'junk'))), 'KEY_INVALID')
  assert.is(
    await codeOf(readSigner(path.join(dir, 'missing'))),
    'KEY_INVALID',
    "a key file that is not there is the operator's to fix"
  )
})

keys('allowed_signers: options read as ssh-keygen reads them (valid-before checked by both)', async () => {
  const dir = tempDir('keys')
  const file = path.join(dir, 'k')
  vba(['keys', 'new', file, '--principal', 'op'])
  const pub = readFileSync(`${file}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ')
  const text = `# trust\n\n"op,!evil" namespaces="vba-case,git",valid-after="20250101Z",valid-before="20260101Z" ${pub}\nw-* ${pub} comment\nrsa ssh-rsa AAAAB3NzaC1yc2E=\n`
  const signers = E.getOrElseW((e) => {
    throw new Error(JSON.stringify(e))
  })(parseAllowedSigners(text))
  assert.is(signers.length, 3)
  const fp = (await readSigner(file)).fingerprint
  const at = (iso: string): number => Date.parse(iso)
  const q = { fingerprint: fp, principal: 'op', namespace: 'vba-case', at: at('2025-06-01T00:00:00Z') }
  assert.is(signerRefusal(signers, q), null)
  assert.match(signerRefusal(signers, { ...q, at: at('2026-02-01T00:00:00Z') }) ?? '', 'valid-before')
  assert.match(signerRefusal(signers, { ...q, at: at('2024-02-01T00:00:00Z') }) ?? '', 'valid-after')
  assert.match(signerRefusal(signers, { ...q, namespace: 'file' }) ?? '', 'namespace')
  assert.match(signerRefusal(signers, { ...q, principal: 'evil' }) ?? '', 'not listed for principal evil')
  assert.is(signerRefusal(signers, { ...q, principal: 'w-7', namespace: 'x', at: 0 }), null)
  assert.match(signerRefusal(signers, { ...q, fingerprint: 'SHA256:nope' }) ?? '', 'not in the trust file')

  // ssh-keygen agrees on the window, with the same file and a verify time on each side of it.
  const allowed = path.join(dir, 'allowed')
  writeFileSync(allowed, text)
  writeFileSync(path.join(dir, 'm'), 'm')
  keygen(['-Y', 'sign', '-f', file, '-n', 'vba-case', path.join(dir, 'm')])
  const check = (time: string): number =>
    keygen(
      [
        '-Y',
        'verify',
        '-f',
        allowed,
        '-I',
        'op',
        '-n',
        'vba-case',
        '-s',
        path.join(dir, 'm.sig'),
        '-O',
        `verify-time=${time}`
      ],
      'm'
    ).code
  assert.is(check('20250601Z'), 0)
  assert.is.not(check('20260201Z'), 0)

  const ca = parseAllowedSigners(`op cert-authority ${pub}\n`)
  assert.ok(E.isLeft(ca) && ca.left.code === 'TRUST_INVALID' && /line 1: cert-authority/.test(ca.left.message))
  const unknown = parseAllowedSigners(`op\n`)
  assert.ok(E.isLeft(unknown) && unknown.left.code === 'TRUST_INVALID')
  const badTime = parseAllowedSigners(`op valid-before="tomorrow" ${pub}\n`)
  assert.ok(E.isLeft(badTime) && /valid-before/.test(badTime.left.message))
})

keys.run()
