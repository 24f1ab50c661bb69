/**
 * A passphrase-protected signing key, signed with through OpenSSH's own ssh-agent (started here in
 * a private directory, its key added by ssh-add, killed after): commands and signed heads made
 * through the agent verify as a key file's do, and ssh-keygen -Y verify accepts them; without an
 * agent, or with one that does not hold the key, the key is refused with KEY_ENCRYPTED, and an
 * agent that cannot be reached is KEY_AGENT_FAILED. The passphrase is in no output.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { readSigner } from '../../src/adapters/ssh-keys.js'
import { verifySshsig, CASE_NAMESPACE } from '../../src/events/ssh-sig.js'
import { openVba } from '../../src/index.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const dir = tempDir('ssh-agent')
const socket = path.join(dir, 'agent.sock')
const key = path.join(dir, 'enc')
const PASSPHRASE = 'correct horse battery staple'
const keygen = (args: string[]) => {
  const r = spawnSync('ssh-keygen', args, { encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
  return r.stdout
}
keygen(['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'agent-signer', '-f', key])
const other = path.join(dir, 'other')
keygen(['-q', '-t', 'ed25519', '-N', PASSPHRASE, '-C', 'not-added', '-f', other])
const trustFile = path.join(dir, 'allowed_signers')
writeFileSync(
  trustFile,
  `agent-signer namespaces="vba-case" ${readFileSync(`${key}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`
)

let agent: ChildProcess | null = null
const withAgent = { SSH_AUTH_SOCK: socket }
const codeOf = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => 'none',
    (e: unknown) => (e as { failure?: { code?: string } }).failure?.code ?? String(e)
  )
const saved = process.env['SSH_AUTH_SOCK']

const t = suite('signing through ssh-agent')

t.before(async () => {
  agent = spawn('ssh-agent', ['-D', '-a', socket], { stdio: 'ignore' })
  for (let i = 0; i < 200 && !existsSync(socket); i++) await new Promise((r) => setTimeout(r, 25))
  assert.ok(existsSync(socket), 'ssh-agent listens')
  const askpass = path.join(dir, 'askpass.sh')
  writeFileSync(askpass, `#!/bin/sh\necho '${PASSPHRASE}'\n`, { mode: 0o700 })
  const add = spawnSync('ssh-add', [key], {
    encoding: 'utf8',
    env: { ...process.env, SSH_AUTH_SOCK: socket, SSH_ASKPASS: askpass, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  assert.is(add.status, 0, add.stderr)
})

t.after(() => {
  agent?.kill('SIGTERM')
  if (saved === undefined) delete process.env['SSH_AUTH_SOCK']
  else process.env['SSH_AUTH_SOCK'] = saved
})

t('without an agent, or one that does not hold the key, a passphrase-protected key is KEY_ENCRYPTED', async () => {
  delete process.env['SSH_AUTH_SOCK']
  assert.is(await codeOf(readSigner(key)), 'KEY_ENCRYPTED')
  process.env['SSH_AUTH_SOCK'] = socket
  assert.is(await codeOf(readSigner(other)), 'KEY_ENCRYPTED')
  const r = vba(['keys', 'show', other], { env: withAgent })
  assert.is(r.code, 2)
  assert.match(r.stderr, 'vba: KEY_ENCRYPTED:')
  assert.match(r.stderr, 'does not hold it')
  process.env['SSH_AUTH_SOCK'] = path.join(dir, 'no-such.sock')
  assert.is(await codeOf(readSigner(key)), 'KEY_AGENT_FAILED')
  process.env['SSH_AUTH_SOCK'] = socket
})

t(
  'the agent signs: SSHSIG that ssh-keygen -Y verify accepts, signed commands and a signed head that verify',
  async () => {
    process.env['SSH_AUTH_SOCK'] = socket
    const signer = await readSigner(key)
    assert.is(signer.principal, 'agent-signer')
    assert.is(signer.fingerprint, keygen(['-l', '-f', `${key}.pub`]).split(' ')[1])
    const message = Buffer.from('a message for the agent')
    const blob = Buffer.from(await signer.sign(CASE_NAMESPACE, message))
    assert.ok(verifySshsig(blob, CASE_NAMESPACE, message)._tag === 'Right')
    const sigFile = path.join(dir, 'm.sig')
    writeFileSync(sigFile, `-----BEGIN SSH SIGNATURE-----\n${blob.toString('base64')}\n-----END SSH SIGNATURE-----\n`)
    const ok = spawnSync(
      'ssh-keygen',
      ['-Y', 'verify', '-f', trustFile, '-I', 'agent-signer', '-n', 'vba-case', '-s', sigFile],
      { input: message, encoding: 'utf8' }
    )
    assert.is(ok.status, 0, ok.stderr)
    const caseDir = path.join(dir, 'case')
    const client = await openVba({ signer })
    await client.cases.create(caseDir, { id: 'case-agent' })
    await client.cases.note(caseDir, { text: 'signed in the agent' })
    await client.close()
    const cli = vba(['--sign-key', key, 'case', 'note', caseDir, 'from the CLI'], { env: withAgent })
    assert.is(cli.code, 0, cli.stderr)
    const head = vba(['--sign-key', key, 'head', caseDir], { env: withAgent })
    assert.is(head.code, 0, head.stderr)
    const note = path.join(dir, 'case.note')
    writeFileSync(note, head.stdout)
    const v = vba(['verify', caseDir, '--trust', trustFile, '--require-signed', '--expect-head', note])
    assert.is(v.code, 0, v.stdout + v.stderr)
    assert.match(v.stdout, `signed by agent-signer ${signer.fingerprint}: 2 commands, trusted`)
    assert.match(v.stdout, 'head signed by agent-signer')
    for (const out of [cli, head, v]) assert.not.match(out.stdout + out.stderr, PASSPHRASE)
  }
)

t.run()
