/**
 * bench/startup: what a new `vba` process costs before it does any work, against `node -e 0` in
 * the same run (pairs taken in turn, medians). Rows:
 *
 *   vba --version              the bundled binary (dist/vba/main.js)            ≤ 1.3x node -e 0
 *   one-shot research          `vba research` of one source.search, the snapshot index of the
 *                              commit already built, against node -e 0 plus the same query in a
 *                              warm session                                     ≤ 2x
 *   (the same two rows for tsc's unbundled output, dist/src/cli/main.js, for comparison)
 *
 *   node dist/bench/startup.js [--repo PATH [--commit SHA]] [--runs N] [--files N] [--term TEXT]
 *
 * Without --repo it uses the generated repository of bench/source-search (about 10,000 files,
 * generated once under the temp dir).
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { benchRepository } from './generated-repo.js'
import { machine, median, runWorker, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  repo: { type: 'string' },
  commit: { type: 'string' },
  runs: { type: 'string', default: '15' },
  files: { type: 'string', default: '10000' },
  term: { type: 'string', default: 'HandleLoot(' }
})
const RUNS = Number(values.runs)
const here = path.dirname(fileURLToPath(import.meta.url))
const BUNDLE = path.join(here, '..', 'vba', 'main.js')
const UNBUNDLED = path.join(here, '..', 'src', 'cli', 'main.js')
const WORKER = path.join(here, 'source-search-worker.js')

const time = (args: readonly string[]): number => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr.toString().slice(0, 400)}`)
  return ms
}

/** A and B in turn, RUNS times after one warm-up each: the medians and the median of the pair ratios. */
const pairs = (a: readonly string[], b: readonly string[]): { a: number; b: number; ratio: number } => {
  time(a)
  time(b)
  const as: number[] = []
  const bs: number[] = []
  const ratios: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const x = time(a)
    const y = time(b)
    as.push(x)
    bs.push(y)
    ratios.push(x / y)
  }
  return { a: median(as), b: median(bs), ratio: median(ratios) }
}

const main = (): void => {
  if (!existsSync(BUNDLE)) throw new Error('dist/vba/main.js is missing: run `npm run build` first')
  const { repo, commit } = benchRepository(values.repo, values.commit, Number(values.files))
  const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-startup-'))
  const profile = path.join(work, 'project.toml')
  writeFileSync(
    profile,
    `[source]\nrepository = ${JSON.stringify(repo)}\nurl = "bench"\ncommit = "${commit}"\ncache_dir = ${JSON.stringify(path.join(work, 'index'))}\n[limits]\ntime_ms = 600000\n`
  )
  const query = path.join(work, 'query.json')
  writeFileSync(query, JSON.stringify({ kind: 'source.search', text: values.term }))
  const research = (bin: string): string[] => [bin, 'research', '--config', profile, '--query', query]
  time(research(BUNDLE)) // builds and publishes the snapshot index: every later process opens it
  const session = runWorker(WORKER, ['session', profile, String(RUNS), values.term]) as unknown as {
    ms: Record<string, number[]>
  }
  const queryMs = median(session.ms[values.term] ?? [])
  const node = ['-e', '0']
  const rows = [
    ['vba --version (bundle)', pairs([BUNDLE, '--version'], node), 1.3, 0],
    ['vba --version (tsc output)', pairs([UNBUNDLED, '--version'], node), null, 0],
    ['one-shot research (bundle)', pairs(research(BUNDLE), node), 2, queryMs],
    ['one-shot research (tsc output)', pairs(research(UNBUNDLED), node), null, queryMs]
  ] as const
  rmSync(work, { recursive: true, force: true })
  const out = (s: string): boolean => process.stdout.write(`${s}\n`)
  out(`bench/startup  ${new Date().toISOString().slice(0, 10)}  ${machine()}, load ${os.loadavg()[0]?.toFixed(1)}`)
  out(`repository ${repo} at ${commit.slice(0, 12)}; query source.search ${JSON.stringify(values.term)}, ${RUNS} pairs`)
  out(`node -e 0 median ${rows[0][1].b.toFixed(0)} ms; the query in a warm session ${queryMs.toFixed(1)} ms`)
  for (const [name, r, target, extra] of rows) {
    // A one-shot process is held to node's start plus the query it runs: the ratio to that sum.
    const ratio = extra === 0 ? r.ratio : r.a / (r.b + extra)
    const verdict =
      target === null ? '' : ratio <= target ? `  (target <= ${target}x: met)` : `  (target <= ${target}x: NOT met)`
    out(`${name.padEnd(32)} ${r.a.toFixed(0).padStart(5)} ms  ratio ${ratio.toFixed(2)}x${verdict}`)
  }
}

main()
