import { attempt } from '../src/failures/error.js'
/**
 * bench/bags: hostile bags at scale (issue 23).
 *
 * 1. Bag verification is linear in the number of files: archives of N = 2,500, 5,000, 10,000 and
 *    20,000 unlisted payload files (and as many listed ones) are verified (`verifyBag`: extract,
 *    check) and the time per file is printed with its ratio to the smallest N (1.00 = linear; the
 *    quadratic verifier took 3.8 / 12.2 / 46 / 152 s). Reference in the same run: `tar -xf` of the
 *    same archive into a fresh directory.
 * 2. Memory does not follow an entry's size: a case with one object of SIZE (default 1 GiB) is
 *    exported; `vba verify` and `vba import` of the archive run in child processes whose peak RSS
 *    (VmHWM) is printed (target under 300 MiB), beside `sha256sum` and `tar -tvf` over the same
 *    archive (time and peak RSS from /usr/bin/time).
 *
 *   node dist/bench/bags.js [--files 2500,5000,10000,20000] [--size-mib 1024] [--runs 3]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { verifyBag } from '../src/fp.js'
import { exportCase } from '../src/fp.js'
import { initCase } from '../src/fp.js'
import { openCase } from '../src/fp.js'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { machine, mb, median, timeShell, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  files: { type: 'string', default: '2500,5000,10000,20000' },
  'size-mib': { type: 'string', default: '1024' },
  runs: { type: 'string', default: '3' }
})
const RUNS = Number(values.runs)
const COUNTS = (values.files ?? '').split(',').map(Number)
const SIZE = Number(values['size-mib']) * 2 ** 20
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vba', 'main.js')

const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-bags-'))
const say = (line: string): void => {
  process.stdout.write(`${line}\n`)
}

/** A bag archive of n listed and n unlisted payload files (the unlisted ones make it invalid). */
const unlistedArchive = (n: number): string => {
  const dir = path.join(work, `bag-${n}`)
  mkdirSync(path.join(dir, 'data'), { recursive: true })
  writeFileSync(path.join(dir, 'bagit.txt'), 'BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n')
  const lines: string[] = []
  for (let i = 0; i < 2 * n; i++) {
    const rel = `data/f${String(i).padStart(6, '0')}`
    writeFileSync(path.join(dir, rel), `file ${i}\n`)
    if (i % 2 === 0) lines.push(`${createHash('sha256').update(`file ${i}\n`).digest('hex')}  ${rel}\n`)
  }
  writeFileSync(path.join(dir, 'manifest-sha256.txt'), lines.join(''))
  const archive = path.join(work, `bag-${n}.tar`)
  timeShell(`tar -cf ${archive} -C ${work} bag-${n}`, work)
  rmSync(dir, { recursive: true, force: true })
  return archive
}

/** Peak RSS (MiB) and wall time of `vba ARGS`, read by a preloaded module at exit. */
const vbaPeak = (args: readonly string[]): { ms: number; peakMiB: number; code: number | null } => {
  const probe = path.join(work, 'peak.mjs')
  writeFileSync(
    probe,
    "import { readFileSync } from 'node:fs'\nprocess.on('exit', () => { const m = /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8')); process.stderr.write(`PEAK ${m ? m[1] : 0}\\n`) })\n"
  )
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, ['--import', `file://${probe}`, MAIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: work }
  })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  return { ms, peakMiB: Number(/PEAK (\d+)/.exec(r.stderr)?.[1] ?? 0) / 1024, code: r.status }
}

/** Wall time and peak RSS (MiB) of a reference command, from /usr/bin/time. */
const referencePeak = (script: string): { ms: number; peakMiB: number } => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('/usr/bin/time', ['-f', 'MAXRSS %M', 'bash', '-c', script], {
    encoding: 'utf8',
    maxBuffer: 1 << 26
  })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`reference failed: ${script}: ${r.stderr}`)
  return { ms, peakMiB: Number(/MAXRSS (\d+)/.exec(r.stderr)?.[1] ?? 0) / 1024 }
}

try {
  say(
    `bench/bags  ${new Date().toISOString().slice(0, 10)}  ${machine()}  load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`
  )
  // 1. Linear in files.
  let first: number | null = null
  for (const n of COUNTS) {
    const archive = unlistedArchive(n)
    const times: number[] = []
    const refs: number[] = []
    for (let run = 0; run < RUNS; run++) {
      const t0 = process.hrtime.bigint()
      const r = await verifyBag(archive)()
      times.push(Number(process.hrtime.bigint() - t0) / 1e6)
      if (
        r._tag === 'Left' ||
        r.right.valid ||
        r.right.bag.findings.filter((f) => f.code === 'PAYLOAD_FILE_NOT_IN_MANIFEST').length !== n
      )
        throw new Error(`the bag of ${n} unlisted files was not reported as such`)
      // The reference extracts the same archive and removes it again, as verification does.
      const out = path.join(work, `x-${n}`)
      mkdirSync(out)
      refs.push(timeShell(`tar -xf ${archive} -C ${out} && rm -rf ${out}`, work).ms)
    }
    const ms = median(times)
    const ref = { ms: median(refs) }
    const perFile = ms / (2 * n)
    first ??= perFile
    say(
      `verify an archive of ${n} unlisted + ${n} listed files: ${(ms / 1000).toFixed(2)} s (median of ${RUNS}), ${(perFile * 1000).toFixed(0)} µs per file, per-file ratio to N=${COUNTS[0]}: ${(perFile / first).toFixed(2)}  (tar -xf + rm -rf of it: ${(ref.ms / 1000).toFixed(2)} s, ${(ms / ref.ms).toFixed(1)}x)`
    )
    rmSync(archive, { force: true })
  }

  // 2. One large entry.
  const dir = path.join(work, 'case')
  const made = await initCase({ dir, caseId: 'case-large-entry' })()
  if (made._tag === 'Left') throw new Error(made.left.message)
  const block = Buffer.alloc(1 << 20)
  const h = createHash('sha256')
  for (let done = 0; done < SIZE; done += block.length) h.update(block.subarray(0, Math.min(block.length, SIZE - done)))
  const hex = h.digest('hex')
  mkdirSync(path.join(dir, 'objects', 'sha256', hex.slice(0, 2)), { recursive: true })
  const object = path.join(dir, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2))
  writeFileSync(object, '')
  timeShell(`truncate -s ${SIZE} ${object}`, work)
  const handle = await openCase(dir)()
  if (handle._tag === 'Left') throw new Error(handle.left.message)
  const appended = await attempt(
    appendCommand(handle.right, {
      commandId: 'large',
      expectedGeneration: 0,
      events: [
        {
          type: 'AttachmentAdded',
          actor: 'operator',
          data: { name: 'core.dump', object: { digest: `sha256:${hex}`, size: SIZE } }
        }
      ]
    })
  )
  if (appended._tag === 'Left') throw new Error(appended.left.message)
  const archive = path.join(work, 'large.tar')
  const exported = await exportCase(dir, archive)()
  if (exported._tag === 'Left') throw new Error(exported.left.message)
  rmSync(dir, { recursive: true, force: true })
  const v = vbaPeak(['verify', archive])
  if (v.code !== 0) throw new Error('vba verify of the large archive failed')
  const target = path.join(work, 'imported')
  const i = vbaPeak(['import', archive, target])
  if (i.code !== 0) throw new Error('vba import of the large archive failed')
  if (readFileSync(path.join(target, 'HEAD')).length === 0) throw new Error('nothing imported')
  rmSync(target, { recursive: true, force: true })
  const sha = referencePeak(`sha256sum ${archive} > /dev/null`)
  const list = referencePeak(`tar -tvf ${archive} > /dev/null`)
  say(
    `one entry of ${mb(SIZE)}: vba verify ${(v.ms / 1000).toFixed(1)} s, peak RSS ${v.peakMiB.toFixed(0)} MiB; vba import ${(i.ms / 1000).toFixed(1)} s, peak RSS ${i.peakMiB.toFixed(0)} MiB (target < 300 MiB)`
  )
  say(
    `  reference over the same archive: sha256sum ${(sha.ms / 1000).toFixed(1)} s, peak RSS ${sha.peakMiB.toFixed(1)} MiB; tar -tvf ${(list.ms / 1000).toFixed(1)} s, peak RSS ${list.peakMiB.toFixed(1)} MiB; verify/sha256sum time ${(v.ms / sha.ms).toFixed(1)}x`
  )
} finally {
  rmSync(work, { recursive: true, force: true })
}
