/**
 * bench/source-search: source.search through ProjectResearch against `git grep -F -n` at the same
 * commit, in the same run (page cache warm for both). Rows, each a ratio to git grep:
 *
 *   first-ever search   a new process, no snapshot index yet (it builds and publishes it)   ≤ 3x
 *   first-ever vba research  the same through the bundled binary, as users run it            ≤ 3x
 *   later process       a new process, the persisted index of the commit exists          ≤ 0.5x
 *   later vba research  the same as users run it: the bundled binary, one query           ≤ 0.5x
 *                       (when NODE_EXTRA_CA_CERTS is set, also without it: Node 20 parses
 *                       every certificate of that file when any process starts)
 *   warm session        repeated searches in one research session                        ≤ 0.25x
 *   peak RSS            one research session (largest of the rows above)                 ≤ 300 MiB
 *   case prepare        the demo report's revision against this core, first run, default limits
 *
 *   node dist/bench/source-search.js [--repo PATH [--commit SHA]] [--runs N] [--files N]
 *
 * Without --repo it generates (once, kept under the temp dir) a repository of about 10,000 files
 * and 200 MiB at its commit, with history and deltas (bench/generated-repo.ts).
 */
import { spawnSync, execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeDemoWorld } from '../src/demo/world.js'
import { benchRepository } from './generated-repo.js'
import { machine, median, runWorker, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  repo: { type: 'string' },
  commit: { type: 'string' },
  runs: { type: 'string', default: '5' },
  files: { type: 'string', default: '10000' }
})
const RUNS = Number(values.runs)
const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'source-search-worker.js')
const VBA = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vba', 'main.js')

/** The environment without NODE_EXTRA_CA_CERTS, or null when it is not set. */
const withoutExtraCerts = (): NodeJS.ProcessEnv | null => {
  if (process.env['NODE_EXTRA_CA_CERTS'] === undefined) return null
  const env = { ...process.env }
  delete env['NODE_EXTRA_CA_CERTS']
  return env
}

/** Wall time of one `vba research` process (the bundle) asking one source.search. */
const timeCli = (profile: string, queryFile: string, term: string, env: NodeJS.ProcessEnv = process.env): number => {
  writeFileSync(queryFile, JSON.stringify({ kind: 'source.search', text: term }))
  const t0 = process.hrtime.bigint()
  const r = spawnSync(process.execPath, [VBA, 'research', '--config', profile, '--query', queryFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env
  })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`vba research failed: ${r.stderr.toString().slice(0, 400)}`)
  return ms
}

const timeGitGrep = (repo: string, commit: string, term: string): number => {
  const t0 = process.hrtime.bigint()
  spawnSync('git', ['grep', '-F', '-n', term, commit], { cwd: repo, stdio: ['ignore', 'ignore', 'ignore'] })
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const main = async (): Promise<void> => {
  const { repo, commit } = benchRepository(values.repo, values.commit, Number(values.files))
  const stats = execFileSync('git', ['ls-tree', '-r', '-l', commit], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 1 << 28
  })
    .split('\n')
    .filter(Boolean)
  const bytes = stats.reduce((s, l) => s + (Number(l.split(/\s+/)[3]) || 0), 0)
  const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-source-'))
  const indexRoot = path.join(work, 'index')
  const profile = path.join(work, 'project.toml')
  writeFileSync(
    profile,
    `[source]\nrepository = ${JSON.stringify(repo)}\nurl = "bench"\ncommit = "${commit}"\ncache_dir = ${JSON.stringify(indexRoot)}\n[limits]\nmax_matches = 100000\nmax_result_bytes = 67108864\ntime_ms = 600000\n`
  )
  const terms = ['AddSC_', 'HandleLoot(', 'SPELL_AURA_MOD_STUN', 'zz-no-such-text-zz']
  for (const t of terms) timeGitGrep(repo, commit, t) // warm the page cache for both sides
  type Row = { term: string; ours: number; git: number }
  const first: Row[] = []
  const later: Row[] = []
  const warm: Row[] = []
  let rss = 0
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      rmSync(indexRoot, { recursive: true, force: true })
      const t0 = process.hrtime.bigint()
      const w = runWorker(WORKER, ['search', profile, term])
      ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
      rss = Math.max(rss, w.maxRssMb ?? 0)
      theirs.push(timeGitGrep(repo, commit, term))
    }
    first.push({ term, ours: median(ours), git: median(theirs) })
  }
  // The first-ever search as users run it: the bundled binary builds the index in its one query.
  const firstCli: Row[] = []
  const queryFile = path.join(work, 'query.json')
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      rmSync(indexRoot, { recursive: true, force: true })
      ours.push(timeCli(profile, queryFile, term))
      theirs.push(timeGitGrep(repo, commit, term))
    }
    firstCli.push({ term, ours: median(ours), git: median(theirs) })
  }
  const indexBytes = Number(execFileSync('du', ['-sb', indexRoot], { encoding: 'utf8' }).split('\t')[0])
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint()
      const w = runWorker(WORKER, ['search', profile, term])
      ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
      rss = Math.max(rss, w.maxRssMb ?? 0)
      theirs.push(timeGitGrep(repo, commit, term))
    }
    later.push({ term, ours: median(ours), git: median(theirs) })
  }
  const cli: Row[] = []
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      ours.push(timeCli(profile, queryFile, term))
      theirs.push(timeGitGrep(repo, commit, term))
    }
    cli.push({ term, ours: median(ours), git: median(theirs) })
  }
  // The same without NODE_EXTRA_CA_CERTS, interleaved with git grep, and what it costs `node -e 0`.
  const bare = withoutExtraCerts()
  const cliBare: Row[] = []
  const nodeStart: { with: number[]; without: number[] } = { with: [], without: [] }
  if (bare !== null) {
    for (const term of terms) {
      const ours: number[] = []
      const theirs: number[] = []
      for (let i = 0; i < RUNS; i++) {
        ours.push(timeCli(profile, queryFile, term, bare))
        theirs.push(timeGitGrep(repo, commit, term))
      }
      cliBare.push({ term, ours: median(ours), git: median(theirs) })
    }
    for (let i = 0; i < RUNS; i++)
      for (const [key, env] of [
        ['with', process.env],
        ['without', bare]
      ] as const) {
        const t0 = process.hrtime.bigint()
        spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore', env })
        nodeStart[key].push(Number(process.hrtime.bigint() - t0) / 1e6)
      }
  }
  // The fixed cost of any new process: Node's start plus loading the modules and the profile.
  const floor: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const t0 = process.hrtime.bigint()
    runWorker(WORKER, ['load', profile])
    floor.push(Number(process.hrtime.bigint() - t0) / 1e6)
  }
  const session = runWorker(WORKER, ['session', profile, String(RUNS), ...terms]) as unknown as {
    ms: Record<string, number[]>
    maxRssMb: number
  }
  rss = Math.max(rss, session.maxRssMb)
  for (const term of terms)
    warm.push({
      term,
      ours: median(session.ms[term] ?? []),
      git: median(Array.from({ length: RUNS }, () => timeGitGrep(repo, commit, term)))
    })
  // The demo report's revision prepared against this core with the shipped TrinityCore profile and
  // default limits (10 s per query), in a new process with no snapshot index yet.
  const demo = await writeDemoWorld(path.join(work, 'demo'))
  const demoProfile = readFileSync(demo.profile, 'utf8')
    .replace('repository = "core"', `repository = ${JSON.stringify(repo)}`)
    .replace(
      `commit = "${demo.commit}"`,
      `commit = "${commit}"\ncache_dir = ${JSON.stringify(path.join(work, 'prepare-index'))}`
    )
  writeFileSync(demo.profile, demoProfile)
  let prepare:
    | { ms: number; maxRssMb?: number; complete?: unknown; facts?: unknown; captures?: unknown }
    | { error: string }
  try {
    prepare = runWorker(WORKER, ['prepare', demo.profile])
  } catch (e) {
    prepare = { error: (e as Error).message.slice(0, 400) }
  }
  rmSync(work, { recursive: true, force: true })

  const out = (s: string): boolean => process.stdout.write(`${s}\n`)
  const ratio = (r: Row): string => (r.ours / r.git).toFixed(2)
  out(`bench/source-search  ${new Date().toISOString().slice(0, 10)}  ${machine()}`)
  out(
    `repository ${repo} at ${commit.slice(0, 12)}: ${stats.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB; snapshot index ${(indexBytes / 2 ** 20).toFixed(1)} MiB; median of ${RUNS}`
  )
  for (const r of first)
    out(
      `first-ever search  ${r.term.padEnd(20)} ${r.ours.toFixed(0).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (target <= 3x)`
    )
  for (const r of firstCli)
    out(
      `first-ever vba research ${r.term.padEnd(15)} ${r.ours.toFixed(0).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (target <= 3x)`
    )
  out(
    `new process, modules and profile loaded, no query: ${median(floor).toFixed(0)} ms (the floor of the two rows above and below)`
  )
  for (const r of later)
    out(
      `later process      ${r.term.padEnd(20)} ${r.ours.toFixed(0).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (target <= 0.5x)`
    )
  for (const r of cli)
    out(
      `later vba research ${r.term.padEnd(20)} ${r.ours.toFixed(0).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (target <= 0.5x)`
    )
  for (const r of cliBare)
    out(
      `later vba research ${r.term.padEnd(20)} ${r.ours.toFixed(0).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (NODE_EXTRA_CA_CERTS unset)`
    )
  if (bare !== null)
    out(
      `node -e 0: ${median(nodeStart.with).toFixed(0)} ms with NODE_EXTRA_CA_CERTS set, ${median(nodeStart.without).toFixed(0)} ms without`
    )
  for (const r of warm)
    out(
      `warm session       ${r.term.padEnd(20)} ${r.ours.toFixed(1).padStart(6)} ms vs git grep ${r.git.toFixed(0).padStart(5)} ms  ratio ${ratio(r)}x (target <= 0.25x)`
    )
  out(`peak RSS of one research session: ${rss.toFixed(0)} MiB (target <= 300 MiB)`)
  out(
    'error' in prepare
      ? `case prepare (demo report, first run, default limits): FAILED ${prepare.error}`
      : `case prepare (demo report, first run, default limits): ${prepare.ms.toFixed(0)} ms, complete ${String(prepare.complete)}, ${String(prepare.facts)} facts from ${String(prepare.captures)} queries, peak RSS ${(prepare.maxRssMb ?? 0).toFixed(0)} MiB`
  )
}

await main()
