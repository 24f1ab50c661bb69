/**
 * Outputs a person names (issue 23, points 6 and 7): `vba export OUT` and `vba report --out FILE`
 * write into a directory that must exist, through an exclusive staging file renamed into place;
 * an existing output is refused unless --force, which replaces a regular file only (never a link,
 * a device or a directory); a failed write is a coded failure and leaves nothing behind.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { sampleCase } from '../helpers/case.js'
import { tempDir } from '../helpers/fs.js'
import { VBA_BIN } from '../helpers/cli.js'

const MAIN = VBA_BIN

/** `vba ARGS`, optionally under a shell prefix (`ulimit -f N`). */
const vbaRun = (args: readonly string[], shell?: string): { code: number | null; stdout: string; stderr: string } => {
  const r =
    shell === undefined
      ? spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', timeout: 60_000 })
      : spawnSync(
          'bash',
          ['-c', `${shell}; exec "${process.execPath}" "${MAIN}" ${args.map((a) => `'${a}'`).join(' ')}`],
          { encoding: 'utf8', timeout: 60_000 }
        )
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const oneCodedLine = (stderr: string, code: string): void => {
  assert.match(stderr, new RegExp(`^vba: ${code}: `))
  assert.not.match(stderr, /\n\s+at /, 'no stack trace')
}

const exportSuite = suite('vba export OUT (point 6)')

exportSuite('a missing output directory is OUTPUT_DIR_MISSING (exit 2), not a crash', async () => {
  const h = await sampleCase()
  const r = vbaRun(['export', h.dir, path.join(tempDir('out'), 'no', 'such', 'dir', 'c.tar')])
  assert.is(r.code, 2, r.stderr)
  oneCodedLine(r.stderr, 'OUTPUT_DIR_MISSING')
  const file = path.join(tempDir('out'), 'plain')
  writeFileSync(file, 'x')
  const r2 = vbaRun(['export', h.dir, path.join(file, 'c.tar')])
  assert.is(r2.code, 2, r2.stderr)
  oneCodedLine(r2.stderr, 'OUTPUT_DIR_MISSING')
})

exportSuite('a file size limit (as a full disk) is IO_ERROR (exit 3); nothing is left behind', async () => {
  const h = await sampleCase()
  const dir = tempDir('out-efbig')
  // The sample case bag is about 7 KiB: a 4 KiB file size limit stops it.
  const r = vbaRun(['export', h.dir, path.join(dir, 'c.tar')], 'ulimit -f 4')
  assert.is(r.code, 3, r.stderr)
  oneCodedLine(r.stderr, 'IO_ERROR')
  assert.match(r.stderr, 'EFBIG')
  assert.equal(readdirSync(dir), [], 'no .vba-export-* left')
  const d = vbaRun(['export', h.dir, path.join(dir, 'bag'), '--dir'], 'ulimit -f 1')
  assert.is(d.code, 3, d.stderr)
  assert.equal(readdirSync(dir), [], 'no staging directory left')
})

exportSuite('an existing output is refused; --force replaces a regular file, never a link', async () => {
  const h = await sampleCase()
  const dir = tempDir('out-force')
  const out = path.join(dir, 'c.tar')
  writeFileSync(out, 'previous')
  const r = vbaRun(['export', h.dir, out])
  assert.is(r.code, 2)
  oneCodedLine(r.stderr, 'OUTPUT_EXISTS')
  assert.is(readFileSync(out, 'utf8'), 'previous')
  assert.is(vbaRun(['export', h.dir, out, '--force']).code, 0)
  assert.is(vbaRun(['verify', out]).code, 0, 'the replacement is the bag')
  const victim = path.join(tempDir('victim'), 'victim.txt')
  writeFileSync(victim, 'keep me')
  const link = path.join(dir, 'link.tar')
  symlinkSync(victim, link)
  const l = vbaRun(['export', h.dir, link, '--force'])
  assert.is(l.code, 2)
  oneCodedLine(l.stderr, 'OUTPUT_EXISTS')
  assert.ok(lstatSync(link).isSymbolicLink())
  assert.is(readFileSync(victim, 'utf8'), 'keep me')
})

exportSuite.run()

// ---------------------------------------------------------------------------------------------
const reportSuite = suite('vba report --out FILE (point 7)')

reportSuite(
  'an existing output is refused unless --force; a link or a device never replaced, never written through',
  async () => {
    const h = await sampleCase()
    const dir = tempDir('report-out')
    const out = path.join(dir, 'r.html')
    writeFileSync(out, 'previous')
    const r = vbaRun(['report', h.dir, '--out', out])
    assert.is(r.code, 2, r.stderr)
    oneCodedLine(r.stderr, 'OUTPUT_EXISTS')
    assert.is(readFileSync(out, 'utf8'), 'previous')
    const f = vbaRun(['report', h.dir, '--out', out, '--force'])
    assert.is(f.code, 0, f.stderr)
    assert.match(readFileSync(out, 'utf8'), /^<!doctype html>/)
    // A link (as /dev/stdout is one): refused with and without --force, left as it was.
    const victim = path.join(tempDir('victim'), 'victim.txt')
    writeFileSync(victim, 'keep me')
    const links = [
      [path.join(dir, 'to-file.html'), victim],
      [path.join(dir, 'to-null.html'), '/dev/null']
    ] as const
    for (const [link, to] of links) {
      symlinkSync(to, link)
      for (const extra of [[], ['--force']]) {
        const l = vbaRun(['report', h.dir, '--out', link, ...extra])
        assert.is(l.code, 2, l.stderr)
        oneCodedLine(l.stderr, 'OUTPUT_EXISTS')
        assert.ok(lstatSync(link).isSymbolicLink(), 'still a link')
        assert.is(readlinkSync(link), to)
      }
    }
    assert.is(readFileSync(victim, 'utf8'), 'keep me')
    mkdirSync(path.join(dir, 'adir.html'))
    const d = vbaRun(['report', h.dir, '--out', path.join(dir, 'adir.html'), '--force'])
    assert.is(d.code, 2)
    oneCodedLine(d.stderr, 'OUTPUT_EXISTS')
    assert.equal(
      readdirSync(dir).filter((n) => n.startsWith('.vba-')),
      [],
      'no staging left'
    )
  }
)

reportSuite(
  'a missing directory is OUTPUT_DIR_MISSING; a failed write is IO_ERROR and keeps the previous file',
  async () => {
    const h = await sampleCase()
    const r = vbaRun(['report', h.dir, '--out', path.join(tempDir('report-missing'), 'nope', 'r.html')])
    assert.is(r.code, 2, r.stderr)
    oneCodedLine(r.stderr, 'OUTPUT_DIR_MISSING')
    const dir = tempDir('report-efbig')
    const out = path.join(dir, 'r.html')
    writeFileSync(out, 'previous')
    const e = vbaRun(['report', h.dir, '--out', out, '--force'], 'ulimit -f 4')
    assert.is(e.code, 3, e.stderr)
    oneCodedLine(e.stderr, 'IO_ERROR')
    assert.is(readFileSync(out, 'utf8'), 'previous')
    assert.equal(readdirSync(dir), ['r.html'], 'no staging left')
  }
)

reportSuite.run()
