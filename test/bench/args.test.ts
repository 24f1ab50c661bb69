/**
 * A benchmark's command line (bench/lib.ts benchArgs): a mistyped option or a number option given
 * something else ends the run at once with what is wrong and the usage (exit 2), before any case,
 * repository or database is made; `--help` prints the usage.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { repoRoot } from '../helpers/fs.js'

const bench = (name: string, ...args: string[]) =>
  spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'bench', `${name}.js`), ...args], {
    encoding: 'utf8',
    timeout: 30_000
  })

const args = suite('bench command lines')

args('--help prints every option with its default', () => {
  const r = bench('replay-verify', '--help')
  assert.is(r.status, 0, r.stderr)
  assert.is(
    r.stdout.trim(),
    'usage: node dist/bench/replay-verify.js [--events 100000] [--runs 3] [--keep VALUE] [--one-event-commands] [--baseline VALUE]'
  )
})

args('an unknown option is refused with the usage, not a stack trace', () => {
  const r = bench('verify-investigation', '--querys', '10')
  assert.is(r.status, 2)
  assert.match(r.stderr, "verify-investigation.js: Unknown option '--querys'")
  assert.match(r.stderr, 'usage: node dist/bench/verify-investigation.js [--queries 150]')
  assert.not.match(r.stderr, '    at ')
})

args('a number option takes numbers only, and runs at least 1', () => {
  const notNumber = bench('replay-verify', '--events', '1e5')
  assert.is(notNumber.status, 2)
  assert.match(notNumber.stderr, '--events takes a whole number, not "1e5"')
  const noRuns = bench('verify-investigation', '--runs', '0')
  assert.is(noRuns.status, 2)
  assert.match(noRuns.stderr, '--runs takes a whole number of at least 1, not "0"')
  const list = bench('bags', '--files', '100,x')
  assert.is(list.status, 2)
  assert.match(list.stderr, '--files takes whole numbers separated by commas, not "100,x"')
})

args('a missing value is refused', () => {
  const r = bench('export', '--objects')
  assert.is(r.status, 2)
  assert.match(r.stderr, "Option '--objects <value>' argument missing")
})

args.run()
