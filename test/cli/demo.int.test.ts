/**
 * `npm run demo` (src/cli/demo.ts, after the build `npm test` has already done): run once, as a new
 * user would, into a directory of the test's own. Every step it announces happens, and the case it
 * leaves is one the CLI and the library read: valid, concluded, with its prompts and answers.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import * as path from 'node:path'
import { verifyCase } from '../../src/fp.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

test('npm run demo: every step, a valid concluded case, and where it is', async () => {
  const tmp = tempDir('demo-tmp')
  const target = path.join(tempDir('demo'), 'case')
  const r = spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'src', 'cli', 'demo.js'), target], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: tmp }
  })
  assert.is(r.status, 0, r.stderr)
  assert.is(r.stderr, '')
  const lines = r.stdout.split('\n')
  const steps = lines.map((l) => /^(\d+)\. /.exec(l)?.[1]).filter((n) => n !== undefined)
  assert.equal(steps, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'], 'the steps, in order, once each')
  assert.match(r.stdout, '3. resubmitted the same command id: duplicate, nothing appended (generation 2)')
  assert.match(r.stdout, '4. a command based on generation 0: vba: GENERATION_CONFLICT: expected generation 0')
  assert.match(r.stdout, 'a table outside the allowlist: vba: TABLE_NOT_ALLOWED')
  assert.match(r.stdout, /10\. scripted investigation: \d+ model turns, state CONCLUDED/)
  assert.match(r.stdout, /11\. verify: VALID, generation \d+/)
  assert.match(r.stdout, `case directory: ${target}`)
  const generation = Number(/11\. verify: VALID, generation (\d+)/.exec(r.stdout)?.[1])
  const report = right(await verifyCase(target)())
  assert.ok(report.valid, JSON.stringify(report.findings.slice(0, 3)))
  assert.is(report.generation, generation, 'the generation it printed is the case’s')
  const status = vba(['status', target, '--json'])
  assert.is(status.code, 0, status.stderr)
  assert.match(status.stdout, '"CONCLUDED"')
  // Its world (the SQLite snapshot it researched) went to the temporary directory it was given.
  assert.ok(readdirSync(tmp).some((d) => d.startsWith('vba-demo-world-')))
  assert.ok(existsSync(path.join(target, 'events.jsonl')))
})

test.run()
