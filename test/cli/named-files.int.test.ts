/**
 * Files named on the command line (trial C, findings 1 and 2): `--query`, `--input`, `--config`,
 * `--expect-head`, `--trust` and a key file are read up to a bound and only when they are regular
 * files (or, for `--query`, `--input`, `--config` and `--trust`, a pipe such as `<(…)`, read up to
 * the bound), so /dev/zero, an endless pipe or a huge file is a coded refusal (exit 2) in bounded
 * memory and a FIFO without a writer does not hang `--expect-head`. A file that is not what the
 * option takes is named, never quoted: not a secret file, not /proc/self/environ, not V8's snippet
 * of a JSON error. An inline receipt that is not one is still echoed: it is the caller's own text.
 *
 * Every run here has 1.5 GB of address space (`ulimit -v`): a CLI that read /dev/zero whole would
 * die of it within a second instead of filling the machine's memory.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync, execFileSync } from 'node:child_process'
import { truncateSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { VBA_BIN, vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const test = suite('files named on the command line')
const root = tempDir('named-files')
const world = await writeDemoWorld(path.join(root, 'world'))
const caseDir = path.join(root, 'case')
assert.is(vba(['case', 'init', caseDir]).code, 0)
const query = path.join(root, 'q.json')
writeFileSync(
  query,
  '{"kind":"database.rows","table":"creature_template","columns":["entry"],"filters":[],"offset":0,"limit":1}'
)
const secret = path.join(root, 'secret.txt')
writeFileSync(secret, 'db_password=hunter2-TOPSECRET')
const noWriter = path.join(root, 'fifo')
execFileSync('mkfifo', [noWriter])

const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`

/** `vba ARGS` through bash (for `<(…)`), in bounded memory and time; `args` is shell text. */
const run = (args: string, env: Record<string, string> = {}): { code: number | null; stderr: string; out: string } => {
  const r = spawnSync('bash', ['-c', `ulimit -v 1500000; exec "${process.execPath}" "${VBA_BIN}" ${args}`], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, XDG_CACHE_HOME: path.join(root, 'cache'), ...env }
  })
  return { code: r.status, stderr: r.stderr, out: r.stdout }
}

const P = quote(world.profile)
const C = quote(caseDir)

test('/dev/zero as --query, --input, --config, --expect-head, --trust or a key: coded, exit 2, at once', () => {
  const cases: Array<[string, RegExp]> = [
    [
      `research --config ${P} --query /dev/zero`,
      /^vba: QUERY_INVALID: the query file \/dev\/zero is a character device/
    ],
    [
      `case query ${C} --config ${P} --query /dev/zero`,
      /^vba: QUERY_INVALID: the query file \/dev\/zero is a character/
    ],
    [
      `case prepare ${C} --config ${P} --input /dev/zero`,
      /^vba: INPUT_INVALID: the report file \/dev\/zero is a character device/
    ],
    [`research --config /dev/zero --query ${quote(query)}`, /^vba: CONFIG_INVALID: profile \/dev\/zero is a character/],
    [`verify ${C} --expect-head /dev/zero`, /^vba: INVALID_ARGUMENT: --expect-head \/dev\/zero is a character device/],
    [`verify ${C} --trust /dev/zero`, /^vba: TRUST_INVALID: the trust file \/dev\/zero is a character device/],
    ['keys show /dev/zero', /^vba: KEY_INVALID: the signing key \/dev\/zero is a character device/]
  ]
  for (const [args, said] of cases) {
    const r = run(args)
    assert.is(r.code, 2, `${args}: ${r.stderr}`)
    assert.match(r.stderr, said, args)
  }
})

test('a file that cannot be read says why (it said only "cannot read nope.md")', () => {
  const missing = quote(path.join(root, 'nope.md'))
  const prepare = run(`case prepare ${C} --config ${P} --input ${missing}`)
  assert.is(prepare.code, 2, prepare.stderr)
  assert.match(prepare.stderr, /^vba: INPUT_INVALID: cannot read nope\.md: it does not exist\n$/)
  const q = run(`research --config ${P} --query ${quote(path.join(root, 'nope.json'))}`)
  assert.is(q.code, 2, q.stderr)
  assert.match(q.stderr, /: it does not exist\n$/)
})

test('an archive that is a device is refused at once (vba import /dev/zero streamed zero blocks for ever)', () => {
  const r = run(`import /dev/zero ${quote(path.join(root, 'imported'))}`)
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, /^vba: ARCHIVE_INVALID: \/dev\/zero is a device or socket, not an archive file/)
})

test('a file over the bound is refused by its size (sparse files: nothing is written or read)', () => {
  const huge = path.join(root, 'huge')
  writeFileSync(huge, '')
  truncateSync(huge, 16 * 2 ** 30)
  const H = quote(huge)
  for (const [args, code, max] of [
    [`research --config ${P} --query ${H}`, 'QUERY_INVALID', 1 << 20],
    [`case prepare ${C} --config ${P} --input ${H}`, 'INPUT_INVALID', 8_000_000],
    [`research --config ${H} --query ${quote(query)}`, 'CONFIG_INVALID', 1 << 20],
    [`verify ${C} --expect-head ${H}`, 'INVALID_ARGUMENT', 64 << 10]
  ] as const) {
    const r = run(args)
    assert.is(r.code, 2, `${args}: ${r.stderr}`)
    assert.match(r.stderr, `vba: ${code}: `)
    assert.match(r.stderr, `has ${16 * 2 ** 30} bytes, more than the ${max} allowed`)
  }
})

test('--query, --input and --config take a pipe, read up to the bound; stdin too', () => {
  const ok = run(`research --config <(cat ${P}) --query <(cat ${quote(query)})`)
  // The profile from a pipe has no folder of its own: its relative database path does not resolve.
  assert.match(ok.out + ok.stderr, /DATABASE_UNAVAILABLE|"kind":"database.rows"/)
  const q = run(`research --config ${P} --query <(cat ${quote(query)})`)
  assert.is(q.code, 0, q.stderr)
  assert.match(q.out, '"kind":"database.rows"')
  const endless = run(`research --config ${P} --query <(cat /dev/zero)`)
  assert.is(endless.code, 2, endless.stderr)
  assert.match(endless.stderr, /^vba: QUERY_INVALID: the query file \/dev\/fd\/\d+ holds more than the 1048576 bytes/)
  const input = run(`case prepare ${C} --config ${P} --input <(cat /dev/zero)`)
  assert.is(input.code, 2, input.stderr)
  assert.match(input.stderr, /^vba: INPUT_INVALID: the report file \/dev\/fd\/\d+ holds more than the 8000000 bytes/)
  const config = run(`research --config <(cat /dev/zero) --query ${quote(query)}`)
  assert.is(config.code, 2, config.stderr)
  assert.match(config.stderr, /^vba: CONFIG_INVALID: profile \/dev\/fd\/\d+ holds more than the 1048576 bytes/)
  const stdin = run(`research --config ${P} --query - < /dev/zero`)
  assert.is(stdin.code, 2, stdin.stderr)
  assert.match(stdin.stderr, /^vba: QUERY_INVALID: the query on stdin holds more than the 1048576 bytes allowed/)
})

test('--expect-head FIFO is refused at once (a signed head is a file that is kept), not waited for', () => {
  const r = run(`verify ${C} --expect-head ${quote(noWriter)}`)
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, /^vba: INVALID_ARGUMENT: --expect-head .*fifo is a FIFO, not a regular file; it is not read/)
  const dir = run(`verify ${C} --expect-head ${quote(root)}`)
  assert.is(dir.code, 2, dir.stderr)
  assert.match(dir.stderr, 'is a directory, not a regular file')
})

test('a file that is not a signed head or a query is named, never quoted', () => {
  const head = run(`verify ${C} --expect-head ${quote(secret)}`)
  assert.is(head.code, 2, head.stderr)
  assert.match(head.stderr, `vba: INVALID_ARGUMENT: --expect-head ${secret}: not a signed head`)
  assert.not.match(head.stderr, 'hunter2')
  const environ = run(`verify ${C} --expect-head /proc/self/environ`, { VBA_TEST_MARKER: 'marker-9f3e1c-SECRET' })
  assert.is(environ.code, 2, environ.stderr)
  assert.match(environ.stderr, 'vba: INVALID_ARGUMENT: --expect-head /proc/self/environ: not a signed head')
  assert.not.match(environ.stderr, 'marker-9f3e1c')
  assert.not.match(environ.stderr, 'PATH=')
  // A note's shape with a line that is not a signature: the line is named by its number.
  const shaped = path.join(root, 'shaped.txt')
  writeFileSync(shaped, `case-x\n3\nsha256:${'a'.repeat(64)}\n\n— api_token=hunter2 not-base64!\n`)
  const line = run(`verify ${C} --expect-head ${quote(shaped)}`)
  assert.is(line.code, 2, line.stderr)
  assert.match(line.stderr, 'line 5 is not a signature line')
  assert.not.match(line.stderr, 'hunter2')
  for (const args of [
    `research --config ${P} --query ${quote(secret)}`,
    `case query ${C} --config ${P} --query ${quote(secret)}`
  ]) {
    const q = run(args)
    assert.is(q.code, 2, q.stderr)
    assert.match(
      q.stderr,
      `vba: QUERY_INVALID: the query file ${secret} is not JSON: the text does not start with a JSON value (line 1, column 1)`
    )
    assert.not.match(q.stderr, 'db_pass')
  }
  // The caller's own inline text that is not a receipt is shown back: it is no file's.
  const inline = run(`verify ${C} --expect-head 12:not-a-hash`)
  assert.is(inline.code, 2, inline.stderr)
  assert.match(inline.stderr, '"12:not-a-hash"')
})

test.run()
