/**
 * docs/operations.md "The first hour": every command of its block, in order, in an empty folder,
 * through the `vba` binary users get (a `vba` on PATH): each `vba` line's exit code is recorded and
 * held to 0 (the demo world's `vba check` with one warning: its allowlist leaves out a table of the
 * adapter's enrichment).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { VBA_BIN } from '../helpers/cli.js'
import { repoRoot, tempDir } from '../helpers/fs.js'

const doc = readFileSync(path.join(repoRoot(), 'docs', 'operations.md'), 'utf8')
const block = /## The first hour\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(doc)?.[1] ?? ''

const firstHour = suite('the first hour of docs/operations.md')

firstHour('every command of the walk-through runs: a concluded case, verified, exported, imported', () => {
  assert.ok(block.includes('vba investigate'), 'the block is found')
  const root = tempDir('first-hour')
  const bin = path.join(root, 'bin')
  mkdirSync(bin)
  writeFileSync(
    path.join(bin, 'vba'),
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(VBA_BIN)} "$@"\n`
  )
  chmodSync(path.join(bin, 'vba'), 0o755)
  const codes = path.join(root, 'codes.txt')
  // Each vba line records its exit code; the others (mkdir, cd, printf, the heredoc) must succeed.
  const script = block
    .split('\n')
    .map((l) =>
      l.startsWith('vba ') ? `${l}; echo "$? ${l.split(' ').slice(0, 3).join(' ')}" >> ${JSON.stringify(codes)}` : l
    )
    .join('\n')
  const r = spawnSync('/bin/sh', ['-c', script], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` }
  })
  assert.is(r.status, 0, r.stdout + r.stderr)
  const ran = readFileSync(codes, 'utf8').trim().split('\n')
  const vbaLines = block.split('\n').filter((l) => l.startsWith('vba '))
  assert.is(ran.length, vbaLines.length, ran.join('\n'))
  for (const line of ran) {
    const [code] = line.split(' ')
    assert.is(code, '0', `${line}\n${r.stdout}${r.stderr}`)
  }
  assert.match(r.stdout, 'WARN enrichment allowlist: TABLE_NOT_ALLOWED: [enrichment] reads gameobject_template')
  assert.match(r.stdout, 'check: the profile is ready (1 warning(s): WARN above)')
  assert.match(r.stdout, 'CONCLUDED: this run 2 model turns')
  assert.match(r.stdout, 'bag VALID')
  assert.match(r.stdout, /^case VALID$/m)
  assert.ok(existsSync(path.join(root, 'first-hour', 'imported', 'bug-1', 'events.jsonl')))
  assert.ok(existsSync(path.join(root, 'first-hour', 'report.html')))
})

firstHour.run()
