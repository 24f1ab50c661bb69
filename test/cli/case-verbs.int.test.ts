import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, writeFileSync, readFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { vba } from '../helpers/cli.js'
import { repoRoot, tempDir } from '../helpers/fs.js'

const EXAMPLES = path.join(repoRoot(), 'case-format', 'examples')
const cli = suite('vba case verbs')

cli('init, note, verify, show and replay a case', () => {
  const dir = path.join(tempDir('cli'), 'case')
  const init = vba(['case', 'init', dir, '--id', 'case-cli', '--title', 'CLI test'])
  assert.is(init.code, 0, init.stderr)
  assert.match(init.stdout, 'created case case-cli')
  assert.is(vba(['case', 'note', dir, 'first note', '--command-id', 'n1']).code, 0)
  const again = vba(['case', 'note', dir, 'first note', '--command-id', 'n1'])
  assert.is(again.code, 0)
  assert.match(again.stdout, 'already recorded: generation 1')
  const verify = vba(['verify', dir])
  assert.is(verify.code, 0)
  assert.match(verify.stdout, 'VALID')
  const show = vba(['show', dir])
  assert.match(show.stdout, 'case        case-cli - CLI test')
  assert.match(show.stdout, 'generation  1')
  assert.match(show.stdout, '\nstate       NOT_STARTED (vba status: the budget, the hypotheses and what to run next)\n')
  const one = vba(['replay', dir, '--json'])
  const two = vba(['replay', dir, '--json'])
  assert.is(one.code, 0)
  assert.is(one.stdout, two.stdout, 'replay output is byte-identical')
  assert.is(JSON.parse(one.stdout).generation, 1)
})

cli('a stale --expect-generation is a conflict (exit 4) and appends nothing', () => {
  const dir = path.join(tempDir('cli'), 'case')
  vba(['case', 'init', dir])
  vba(['case', 'note', dir, 'a'])
  const before = readFileSync(path.join(dir, 'events.jsonl'))
  const r = vba(['case', 'note', dir, 'b', '--expect-generation', '0'])
  assert.is(r.code, 4)
  assert.is(r.stderr, 'vba: GENERATION_CONFLICT: expected generation 0, the case is at 1\n')
  assert.equal(readFileSync(path.join(dir, 'events.jsonl')), before)
  assert.is(vba(['case', 'note', dir, 'b', '--expect-generation', 'one']).code, 2)
})

cli('verify reports findings readably and as JSON lines, exit 1', () => {
  const broken = path.join(EXAMPLES, 'broken', 'EVENT_HASH_MISMATCH')
  const human = vba(['verify', broken])
  assert.is(human.code, 1)
  assert.match(human.stdout, 'INVALID: 1 error')
  assert.match(human.stdout, 'error  EVENT_HASH_MISMATCH (events.jsonl, line 1, seq 1)')
  const json = vba(['verify', broken, '--json'])
  assert.is(json.code, 1)
  const lines = json.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, { code?: string; valid?: boolean }>)
  assert.is(lines[0]?.['finding']?.code, 'EVENT_HASH_MISMATCH')
  assert.is(lines[lines.length - 1]?.['summary']?.valid, false)
  const leftover = vba(['verify', path.join(EXAMPLES, 'leftovers', 'TORN_TAIL')])
  assert.is(leftover.code, 0)
  assert.match(leftover.stdout, 'VALID (1 notice)')
})

cli('bad input is one clear line and a non-zero exit, never a stack trace', () => {
  const tmp = tempDir('cli')
  writeFileSync(path.join(tmp, 'file'), 'x')
  const cases: Array<[string[], number, RegExp]> = [
    [['verify', path.join(tmp, 'absent')], 2, /^vba: CASE_NOT_FOUND: .* does not exist\n$/],
    [['verify', path.join(tmp, 'file')], 2, /^vba: ARCHIVE_INVALID: the archive is not a valid tar/],
    [['replay', tmp], 2, /^vba: CASE_NOT_FOUND: .* is not a case directory/],
    [
      ['show', path.join(EXAMPLES, 'broken', 'CHAIN_BROKEN')],
      1,
      /^vba: CASE_CORRUPT: case does not verify: 1 error finding\(s\), first: CHAIN_BROKEN \(prev does not match the hash of the preceding event\); vba verify lists them all \(restore the case from a copy or an export\)\n$/
    ],
    [
      ['report', path.join(EXAMPLES, 'broken', 'CHAIN_BROKEN'), '--out', path.join(tmp, 'broken.html')],
      1,
      /^vba: CASE_CORRUPT: the case does not verify \(1 error finding\(s\)\); the report shows them\n$/
    ],
    [['case', 'init', tmp], 2, /^vba: CASE_EXISTS: /],
    [['case', 'init', path.join(tmp, 'x'), '--id', '../../etc'], 2, /^vba: INVALID_ARGUMENT: case id must be/],
    [['frobnicate'], 2, /^vba: USAGE: unknown command 'frobnicate'/],
    [['statsu'], 2, /^vba: USAGE: unknown command 'statsu' \(Did you mean status\?\) \(see vba --help\)\n$/],
    [['verify'], 2, /^vba: USAGE: missing required argument 'target'/],
    [['verify', tmp, '--bogus'], 2, /^vba: USAGE: unknown option '--bogus'/],
    [['case', 'unlock', path.join(EXAMPLES, 'valid', 'basic')], 2, /^vba: CASE_NOT_LOCKED: case is not locked\n$/]
  ]
  for (const [args, code, pattern] of cases) {
    const r = vba(args)
    assert.is(r.code, code, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stderr, pattern, args.join(' '))
    assert.not.match(r.stderr, /\n\s+at /, 'no stack trace')
    assert.is(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`)
  }
})

cli('unlock removes a stale lock left by a dead writer', () => {
  const dir = path.join(tempDir('cli'), 'case')
  vba(['case', 'init', dir])
  writeFileSync(
    path.join(dir, '.vba-lock'),
    JSON.stringify({ pid: 2 ** 22 + 99, host: hostname(), token: 'x', acquired_at: '2026-01-01T00:00:00.000Z' })
  )
  const blocked = vba(['case', 'note', dir, 'x'])
  assert.is(blocked.code, 4)
  assert.match(blocked.stderr, 'CASE_LOCK_STALE')
  // vba status says so, with the way out (it had said nothing, and suggested a run that cannot write)
  assert.match(
    vba(['status', dir]).stdout,
    `every write is refused; check the case (vba verify ${dir}), then lift the lock (vba case unlock ${dir})`
  )
  const unlock = vba(['case', 'unlock', dir])
  assert.is(unlock.code, 0, unlock.stderr)
  assert.is(vba(['case', 'note', dir, 'x']).code, 0)
  assert.not.match(vba(['status', dir]).stdout, 'locked by a writer')
})

cli('unlock says what it knows of a held lock: live on this host, or on another host it cannot see', () => {
  const dir = path.join(tempDir('cli'), 'case')
  vba(['case', 'init', dir])
  const lock = (pid: number, host: string): void =>
    writeFileSync(
      path.join(dir, '.vba-lock'),
      JSON.stringify({ pid, host, token: 'x', acquired_at: '2026-01-01T00:00:00.000Z' })
    )
  lock(1, 'other-host.example')
  const other = vba(['case', 'unlock', dir])
  assert.is(other.code, 4, other.stderr)
  assert.is(
    other.stderr,
    'vba: CASE_LOCKED: lock is held by process 1 on host other-host.example (another host: vba cannot tell whether it runs); use --force only once that process has stopped or that host is gone\n'
  )
  lock(process.pid, hostname())
  const here = vba(['case', 'unlock', dir])
  assert.is(here.code, 4, here.stderr)
  assert.match(here.stderr, `lock is held by live process ${process.pid} on this host (${hostname()}); wait for it`)
  assert.not.match(here.stderr, 'host is gone')
})

cli("report and export refuse - as the output: it is not standard output, and no file named '-' is written", () => {
  const tmp = tempDir('cli')
  const basic = path.join(EXAMPLES, 'valid', 'basic')
  for (const args of [
    ['report', basic, '--out', '-'],
    ['export', basic, '-']
  ]) {
    const r = spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'vba', 'main.js'), ...args], {
      cwd: tmp,
      encoding: 'utf8'
    })
    assert.is(r.status, 2, r.stderr)
    assert.match(r.stderr, /^vba: INVALID_ARGUMENT: give a file name; - is not standard output here/)
  }
  assert.equal(readdirSync(tmp), [])
})

cli('the demo runs on embedded defaults and leaves a valid case', () => {
  const dir = path.join(tempDir('demo'), 'case')
  const r = spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'src', 'cli', 'demo.js'), dir], {
    encoding: 'utf8'
  })
  assert.is(r.status, 0, r.stderr)
  assert.match(r.stdout, `case directory: ${dir}`)
  assert.is(vba(['verify', dir]).code, 0)
})

cli.run()
