/**
 * What failed or interrupted writers leave behind. A write that fails (a writer process limited by
 * `ulimit -f`, so its writes fail as on a full disk) takes back what its command wrote: no torn
 * tail, no orphan object, no temporary file. What a killed writer leaves, `vba case gc` removes
 * under the writer lock and reports. And a closed pipe ends a command quietly.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  utimesSync,
  writeFileSync
} from 'node:fs'
import * as path from 'node:path'
import { sampleCase } from '../helpers/case.js'
import { verifyCase } from '../../src/fp.js'
import { recordNote } from '../../src/fp.js'
import { objectPath } from '../../src/events/refs.js'
import { sha256Digest } from '../../src/events/canonical.js'
import { vba, VBA_BIN } from '../helpers/cli.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'

const WRITER = path.join(repoRoot(), 'dist', 'test', 'helpers', 'writer-process.js')

/** Runs one big append in a child whose file writes are limited to `limitKb`. */
const limitedAppend = (
  dir: string,
  id: string,
  limitKb: number,
  objectKb: number,
  noteKb: number
): { code?: string; ok?: number; data?: { errno?: string } } => {
  const r = spawnSync(
    'bash',
    ['-c', `ulimit -f ${limitKb}; exec "${process.execPath}" "${WRITER}" big "${dir}" ${id} ${objectKb} ${noteKb}`],
    { encoding: 'utf8' }
  )
  assert.is(r.status, 0, r.stderr)
  return JSON.parse(r.stdout.trim()) as { code?: string; ok?: number; data?: { errno?: string } }
}

const tempFiles = (dir: string): string[] => readdirSync(dir).filter((n) => n.startsWith('.vba-tmp-'))

const failed = suite('a failed write leaves nothing behind')

failed('an object too large to write: the temporary file is removed, nothing is appended', async () => {
  const dir = path.join(tempDir('fail-object'), 'case')
  await sampleCase(dir)
  const before = readFileSync(path.join(dir, 'events.jsonl'))
  const r = limitedAppend(dir, 'big-object', 64, 200, 1)
  assert.is(r.code, 'IO_ERROR')
  assert.is(r.data?.errno, 'EFBIG')
  assert.equal(tempFiles(dir), [])
  assert.equal(readFileSync(path.join(dir, 'events.jsonl')), before)
  const report = right(await verifyCase(dir)())
  assert.equal(report.findings, [], 'no orphan, no temporary file, no tail')
})

failed('the log write fails after the object was written: the object is removed and the log cut back', async () => {
  const dir = path.join(tempDir('fail-log'), 'case')
  await sampleCase(dir)
  const before = readFileSync(path.join(dir, 'events.jsonl'))
  // the object (10 KiB) fits under the limit; the log line (over 100 KiB) does not
  const r = limitedAppend(dir, 'big-note', 64, 10, 100)
  assert.is(r.code, 'IO_ERROR')
  assert.equal(readFileSync(path.join(dir, 'events.jsonl')), before, 'the torn write was cut back')
  assert.equal(tempFiles(dir), [])
  assert.equal(right(await verifyCase(dir)()).findings, [])
  // the case takes the next command as if nothing had happened
  right(await recordNote(dir, { text: 'after the full disk' })())
  assert.equal(right(await verifyCase(dir)()).findings, [])
})

failed('with room, the same command succeeds (the limit, not the command, made it fail)', async () => {
  const dir = path.join(tempDir('fail-none'), 'case')
  await sampleCase(dir)
  const r = limitedAppend(dir, 'big-ok', 4096, 10, 100)
  assert.is(r.ok, 6)
  assert.equal(right(await verifyCase(dir)()).findings, [])
})

failed.run()

const gc = suite('vba case gc')

/** Writes `text` as an object file under `dir` (a case, or objects elsewhere) that no event references; its path. */
const plantObject = (dir: string, text: string): string => {
  const bytes = Buffer.from(text)
  const file = path.join(dir, objectPath(sha256Digest(bytes)))
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, bytes)
  return file
}

gc(
  'removes orphan objects, old temporary files and an unacknowledged tail, reports them, and leaves a clean case',
  async () => {
    const dir = path.join(tempDir('gc'), 'case')
    await sampleCase(dir)
    const file = plantObject(dir, 'written by an append that was killed before its events\n')
    writeFileSync(path.join(dir, '.vba-tmp-4242-0a1b2c3d4e5f'), 'partial')
    const old = new Date(Date.now() - 3600_000)
    utimesSync(path.join(dir, '.vba-tmp-4242-0a1b2c3d4e5f'), old, old)
    writeFileSync(path.join(dir, '.vba-tmp-4243-fresh'), 'a writer may still be busy with this')
    appendFileSync(path.join(dir, 'events.jsonl'), '{"actor":"controller","at":"2026')
    const notices = right(await verifyCase(dir)())
      .findings.map((f) => f.code)
      .sort()
    assert.equal(notices, ['ORPHAN_OBJECT', 'TEMP_FILE_LEFTOVER', 'TEMP_FILE_LEFTOVER', 'TORN_TAIL'])
    const r = vba(['case', 'gc', dir])
    assert.is(r.code, 0, r.stderr)
    assert.match(r.stdout, `removed orphan object ${path.relative(dir, file)}`)
    assert.match(r.stdout, 'removed temporary file .vba-tmp-4242-0a1b2c3d4e5f')
    assert.match(r.stdout, 'cut 32 unacknowledged bytes')
    assert.match(r.stdout, 'kept 1 temporary file(s) younger than a minute')
    assert.equal(
      right(await verifyCase(dir)()).findings.map((f) => f.code),
      ['TEMP_FILE_LEFTOVER'],
      'only the fresh temporary file stays'
    )
    const again = vba(['case', 'gc', dir, '--json'])
    assert.equal(JSON.parse(again.stdout), {
      cut_tail_bytes: 0,
      recent_temp_files: 1,
      removed_objects: [],
      removed_temp_files: []
    })
  }
)

gc('refuses a case held by a live writer, and a case that does not verify', async () => {
  const dir = path.join(tempDir('gc-locked'), 'case')
  await sampleCase(dir)
  writeFileSync(
    path.join(dir, '.vba-lock'),
    `${JSON.stringify({ pid: process.pid, host: (await import('node:os')).hostname(), token: 't', acquired_at: new Date().toISOString() })}\n`
  )
  const locked = vba(['case', 'gc', dir])
  assert.is(locked.code, 4, locked.stderr)
  assert.match(locked.stderr, 'CASE_LOCKED')
  const { rmSync } = await import('node:fs')
  rmSync(path.join(dir, '.vba-lock'))
  const events = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
  writeFileSync(path.join(dir, 'events.jsonl'), events.replace('report received', 'report forged!!'))
  const corrupt = vba(['case', 'gc', dir])
  assert.is(corrupt.code, 1, corrupt.stderr)
  assert.match(corrupt.stderr, 'CASE_CORRUPT')
})

gc(
  'never removes through a link: objects/ or a shard pointing outside the case is refused, and nothing is removed',
  async () => {
    // Files named like objects in a directory outside the case (another case's objects, say).
    const outside = path.join(tempDir('gc-outside'), 'objects')
    const theirFile = plantObject(path.dirname(outside), 'an object of another case\n')
    const shard = path.basename(path.dirname(theirFile))

    // objects/ itself a link to them
    const linked = path.join(tempDir('gc-linked'), 'case')
    await sampleCase(linked)
    renameSync(path.join(linked, 'objects'), path.join(path.dirname(linked), 'own-objects'))
    symlinkSync(outside, path.join(linked, 'objects'))
    const r = vba(['case', 'gc', linked])
    assert.is(r.code, 1, r.stderr)
    assert.match(r.stderr, 'CASE_CORRUPT')
    assert.ok(existsSync(theirFile), 'the file outside the case is still there')

    // a shard a link to theirs, beside an orphan of the case's own that a gc would remove
    const dir = path.join(tempDir('gc-shard'), 'case')
    await sampleCase(dir)
    const orphanFile = plantObject(dir, 'an orphan of this case\n')
    const own = path.join(dir, 'objects', 'sha256', shard)
    if (existsSync(own)) renameSync(own, path.join(path.dirname(dir), 'own-shard'))
    symlinkSync(path.dirname(theirFile), own)
    const s = vba(['case', 'gc', dir])
    assert.is(s.code, 1, s.stderr)
    assert.match(s.stderr, 'FOREIGN_FILE')
    assert.ok(existsSync(theirFile), 'the file outside the case is still there')
    assert.ok(existsSync(orphanFile), 'a refusal removes nothing')
  }
)

gc.run()

const pipe = suite('a closed pipe')

pipe('ends a command quietly, with its own exit code', async () => {
  const dir = path.join(tempDir('pipe'), 'case')
  await sampleCase(dir)
  for (let i = 0; i < 50; i++) right(await recordNote(dir, { text: `note ${i} ${'x'.repeat(200)}` })())
  const main = VBA_BIN
  const run = (args: string): { status: number; stderr: string } => {
    const r = spawnSync(
      'bash',
      ['-c', `set -o pipefail; "${process.execPath}" "${main}" ${args} | head -c 20 > /dev/null`],
      { encoding: 'utf8' }
    )
    return { status: r.status ?? -1, stderr: r.stderr }
  }
  const replay = run(`replay "${dir}"`)
  assert.is(replay.status, 0, replay.stderr)
  assert.is(replay.stderr, '')
  const forged = run(`verify "${path.join(repoRoot(), 'case-format', 'examples', 'forged', 'RULE_REFERENCE')}"`)
  assert.is(forged.status, 1, 'invalid stays invalid')
  assert.is(forged.stderr, '')
})

pipe.run()
