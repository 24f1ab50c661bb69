/**
 * vba status of a case in a store that a worker holds under a lease: the next steps are to wait
 * for the lease or to release it for a holder that stopped, never a vba investigate that the lease
 * refuses (CASE_LEASED); the release it names works, and then the usual next steps return.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { writeWorld } from '../helpers/investigation.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'

const test = suite('vba status of a leased case')
let t: TestStore
const profile = writeWorld(tempDir('leased-status-world'))

test.before(async () => {
  t = await postgresStore('leasedst')
})
test.after(async () => {
  await t.drop()
})

const nextLines = (stdout: string): string[] => stdout.split('\n').filter((l) => /^(next|or)[:,]/.test(l))

test('wait for the holder, or release the case once it stopped', () => {
  assert.is(vba(['store', 'migrate', '--store', t.url]).code, 0)
  assert.is(vba(['case', 'init', 'case-l', '--store', t.url]).code, 0)
  const input = path.join(tempDir('leased-status-input'), 'report.json')
  writeFileSync(input, JSON.stringify({ report: 'Quest 11117 fails.', entities: [{ type: 'quest', id: 11117 }] }))
  assert.is(vba(['case', 'prepare', 'case-l', '--config', profile, '--input', input, '--store', t.url]).code, 0)
  const claim = vba(['queue', 'claim', '--store', t.url, '--worker', 'host-9.77:2', '--lease-ms', '600000'])
  assert.is(claim.code, 0, claim.stderr)
  const held = vba(['status', 'case-l', '--store', t.url])
  assert.is(held.code, 0, held.stderr)
  const lines = nextLines(held.stdout)
  assert.is(lines.length, 2, held.stdout)
  assert.match(lines[0] ?? '', /^next: wait: host-9\.77:2 advances the case; its lease ends at \d{4}-/)
  assert.not.match(held.stdout, 'vba investigate')
  const release = /vba queue release (.*) \(then/.exec(lines[1] ?? '')?.[1]
  assert.ok(release !== undefined, lines[1])
  assert.match(release, `--worker host-9.77:2`)
  const args = ['queue', 'release', 'case-l', '--store', t.url, '--worker', 'host-9.77:2']
  assert.is(vba(args).code, 0)
  const free = vba(['status', 'case-l', '--store', t.url])
  assert.match(nextLines(free.stdout)[0] ?? '', /^next: vba investigate case-l --store /)
})

test.run()
