/**
 * The profile's [signing] section: the key (relative to the profile) and principal every command
 * appended under the profile is signed with, by the CLI's verbs that take --config and by
 * openVba({ profile }); --sign-key wins over it; a bad section is CONFIG_INVALID.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeNewKey } from '../../src/adapters/ssh-keys.js'
import { openVba } from '../../src/index.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { writeWorld } from '../helpers/investigation.js'

const world = tempDir('profile-signing')
const profile = writeWorld(world)
const key = await writeNewKey(path.join(path.dirname(profile), 'signing.key'), 'key-comment')
const other = await writeNewKey(path.join(world, 'other.key'), 'other')
appendFileSync(profile, '\n[signing]\nkey = "signing.key"\nprincipal = "worker-from-profile"\n')
const trustFile = path.join(world, 'allowed_signers')
writeFileSync(trustFile, `worker-from-profile namespaces="vba-case" ${key.signer.publicKey}\n${other.allowedSigners}\n`)
const input = path.join(world, 'report.json')
writeFileSync(
  input,
  JSON.stringify({ report: 'Quest 11117 cannot be completed.', entities: [{ type: 'quest', id: 11117 }] })
)

const t = suite('[signing] in the profile')

t('vba case prepare --config signs with the profile key and principal; --sign-key wins', () => {
  const dir = path.join(world, 'case')
  assert.is(vba(['case', 'init', dir, '--id', 'case-profile-signing']).code, 0)
  const prep = vba(['case', 'prepare', dir, '--config', profile, '--input', input])
  assert.is(prep.code, 0, prep.stderr)
  const v = vba(['verify', dir, '--trust', trustFile])
  assert.is(v.code, 0, v.stdout + v.stderr)
  assert.match(v.stdout, `signed by worker-from-profile ${key.signer.fingerprint}`)
  assert.match(v.stdout, 'unsigned commands: 0', v.stdout)
  const again = vba([
    '--sign-key',
    path.join(world, 'other.key'),
    'case',
    'prepare',
    dir,
    '--config',
    profile,
    '--input',
    input,
    '--again'
  ])
  assert.is(again.code, 0, again.stderr)
  assert.match(vba(['verify', dir, '--trust', trustFile]).stdout, `signed by other ${other.signer.fingerprint}`)
  for (const out of [prep, v, again]) assert.not.match(out.stdout + out.stderr, 'PRIVATE KEY')
})

t('openVba({ profile }) signs with [signing]; an unknown key in it is CONFIG_INVALID', async () => {
  const client = await openVba({ profile })
  const dir = path.join(world, 'api-case')
  await client.cases.create(dir, { id: 'case-profile-api' })
  await client.cases.note(dir, { text: 'signed by the profile key' })
  const r = await client.cases.verify(dir, {
    trust: { allowedSigners: readFileSync(trustFile, 'utf8') },
    requireSigned: true
  })
  await client.close()
  assert.ok(r.valid, JSON.stringify(r.findings))
  assert.is(r.signatures?.signers[0]?.principal, 'worker-from-profile')
  const bad = path.join(world, 'bad.toml')
  writeFileSync(
    bad,
    `${readFileSync(profile, 'utf8')}\n`.replace('principal = "worker-from-profile"', 'principle = "x"')
  )
  const refused = await openVba({ profile: bad }).then(
    () => 'opened',
    (e: unknown) => (e as { code?: string; message?: string }).code + String((e as Error).message)
  )
  assert.match(refused, /^CONFIG_INVALID.*unknown key \[signing\]\.principle/)
})

t.run()
