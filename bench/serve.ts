/**
 * bench/serve: the first listing `vba serve` gives over a folder of 10,000 case directories
 * (copies of the sample case, each with the summary its last append wrote), in a fresh process
 * each round, and the listings after it in the same process; the reference is `cat` of every
 * case's HEAD, alternating with the listing, medians. Target: the first listing within 3 s.
 * With --logs also one first listing that reads every log (no summaries, as before issue 36).
 *
 *   node dist/bench/serve.js [--cases N] [--runs R] [--logs]
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { directoryQueue } from '../src/adapters/case-store/directory-queue.js'
import { sampleCase } from '../test/helpers/case.js'
import { machine, median, runWorker, timeShell, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  cases: { type: 'string', default: '10000' },
  runs: { type: 'string', default: '5' },
  logs: { type: 'boolean', default: false },
  worker: { type: 'string' },
  'no-summaries': { type: 'boolean', default: false }
})

/** The worker: the first page of the listing (as serve's `/`), then two more, timed. */
const worker = async (root: string, summaries: boolean): Promise<void> => {
  const q = directoryQueue(root, { summaries })
  const t0 = process.hrtime.bigint()
  const first = await q.page({ limit: 100 })
  const t1 = process.hrtime.bigint()
  await q.page({ limit: 100 })
  const t2 = process.hrtime.bigint()
  await q.page(first.next === null ? { limit: 100 } : { limit: 100, after: first.next })
  const t3 = process.hrtime.bigint()
  const total = first.counts?.total ?? 0
  console.log(
    JSON.stringify({
      ms: Number(t1 - t0) / 1e6,
      laterMs: Math.min(Number(t2 - t1), Number(t3 - t2)) / 1e6,
      cases: total
    })
  )
}

if (values.worker !== undefined) {
  await worker(values.worker, values['no-summaries'] !== true)
  process.exit(0)
}

const CASES = Number(values.cases)
const RUNS = Number(values.runs)
const root = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-serve-'))
try {
  const sample = await sampleCase(path.join(root, '.sample'))
  const cases = path.join(root, 'cases')
  for (let i = 0; i < CASES; i++)
    cpSync(sample.dir, path.join(cases, `case-${String(i).padStart(5, '0')}`), { recursive: true })
  const self = fileURLToPath(import.meta.url)
  console.log(
    `bench/serve on ${machine()}; load ${os.loadavg()[0]?.toFixed(1)}; ${CASES} case directories, ${RUNS} rounds`
  )
  const firsts: number[] = []
  const laters: number[] = []
  const cats: number[] = []
  let listed = 0
  for (let r = 0; r < RUNS; r++) {
    cats.push(timeShell(`cat cases/*/HEAD > /dev/null`, root).ms)
    const w = runWorker(self, ['--worker', cases])
    firsts.push(w.ms)
    laters.push(Number(w['laterMs']))
    listed = Number(w['cases'])
  }
  const [f, l, c] = [median(firsts), median(laters), median(cats)]
  console.log(`  cases listed: ${listed}`)
  console.log(`  cat of every HEAD (reference)        ${c.toFixed(0).padStart(7)} ms`)
  console.log(
    `  first listing (summaries, new process) ${f.toFixed(0).padStart(5)} ms  ${(f / c).toFixed(1)}x cat   (target <= 3000 ms: ${f <= 3000 ? 'met' : 'NOT met'})`
  )
  console.log(`  later listing (same process)         ${l.toFixed(0).padStart(7)} ms  ${(l / c).toFixed(1)}x cat`)
  if (values.logs === true) {
    const w = runWorker(self, ['--worker', cases, '--no-summaries'])
    console.log(
      `  first listing reading every log      ${w.ms.toFixed(0).padStart(7)} ms  ${(w.ms / c).toFixed(1)}x cat`
    )
  }
  console.log(`  load after: ${os.loadavg()[0]?.toFixed(1)}`)
} finally {
  rmSync(root, { recursive: true, force: true })
}
