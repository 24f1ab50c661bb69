/**
 * bench/source-search: source.search through ProjectResearch against `git grep -F -n` at the same
 * commit, in the same run. Cold: a new process with no cache for both (the OS page cache is warm
 * for both). Warm: repeated searches in one research session. Targets: warm no slower than git
 * grep, cold within 5x. Reports peak memory.
 *
 *   node dist/bench/source-search.js [--repo PATH [--commit SHA]] [--runs N]
 *
 * Without --repo it generates (once, cached under the temp dir) a repository of about 10,000 files
 * and 200 MB at its commit, with history and deltas, through `git fast-import`.
 */
import { spawnSync, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { loadProfile } from '../src/adapters/config/profile.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { openSourceResearch } from '../src/research/source/open.js'
import { machine, median, runWorker } from './lib.js'

const { values } = parseArgs({ options: { repo: { type: 'string' }, commit: { type: 'string' }, runs: { type: 'string', default: '5' }, files: { type: 'string', default: '10000' } } })
const RUNS = Number(values.runs)
const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'source-search-worker.js')

/** Deterministic pseudo-random numbers (mulberry32). */
const rng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const WORDS = ['Creature', 'Player', 'Spell', 'Aura', 'Unit', 'GameObject', 'Quest', 'Item', 'Map', 'Instance', 'Script', 'Event', 'Timer', 'Target', 'Damage', 'Heal', 'Combat', 'Movement', 'Loot', 'Group']

const fileText = (random: () => number, i: number, version: number): string => {
  const lines: string[] = [`// generated source file ${i}, version ${version}`, '#include "ScriptMgr.h"', '']
  const target = 14_000 + Math.floor(random() * 14_000)
  let size = 0
  let n = 0
  while (size < target) {
    const a = WORDS[Math.floor(random() * WORDS.length)] ?? 'Unit'
    const b = WORDS[Math.floor(random() * WORDS.length)] ?? 'Spell'
    const line = n % 40 === 0 ? `void ${a}${b}Handler_${i}_${n}(${a}* ${a.toLowerCase()}, uint32 id)` : `    ${a.toLowerCase()}->Handle${b}(SPELL_${b.toUpperCase()}_${(i * 7 + n) % 50000}, ${Math.floor(random() * 100000)});`
    lines.push(line)
    size += line.length + 1
    n++
  }
  if (i % 500 === 7) lines.push(`void AddSC_generated_script_${i}() { new GeneratedScript_${i}(); }`)
  return lines.join('\n') + '\n'
}

const generateRepo = (dir: string, files: number): string => {
  mkdirSync(dir, { recursive: true })
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', dir])
  const random = rng(42)
  const texts = Array.from({ length: files }, (_, i) => fileText(random, i, 1))
  let stream = ''
  const chunks: string[] = []
  const commit = (message: string, changed: number[], version: number, n: number): void => {
    stream += `commit refs/heads/main\nmark :${n}\ncommitter bench <bench@example.org> ${1767225600 + n} +0000\ndata ${message.length}\n${message}\n`
    if (n > 1) stream += `from :${n - 1}\n`
    for (const i of changed) {
      if (version > 1) texts[i] = (texts[i] ?? '').replace(/version \d+/, `version ${version}`) + `// changed in version ${version}\n`
      const body = texts[i] ?? ''
      stream += `M 100644 inline src/game/module_${Math.floor(i / 100)}/file_${i}.cpp\ndata ${Buffer.byteLength(body)}\n${body}\n`
      if (stream.length > 32 << 20) {
        chunks.push(stream)
        stream = ''
      }
    }
  }
  commit('initial', texts.map((_, i) => i), 1, 1)
  for (let v = 2; v <= 4; v++) commit(`version ${v}`, texts.map((_, i) => i).filter((i) => i % 10 === v), v, v)
  chunks.push(stream)
  const r = spawnSync('git', ['fast-import', '--quiet'], { cwd: dir, input: chunks.join(''), maxBuffer: 1 << 30 })
  if (r.status !== 0) throw new Error(`fast-import failed: ${r.stderr.toString()}`)
  execFileSync('git', ['gc', '-q'], { cwd: dir })
  return execFileSync('git', ['rev-parse', 'main'], { cwd: dir, encoding: 'utf8' }).trim()
}

const timeGitGrep = (repo: string, commit: string, term: string): number => {
  const t0 = process.hrtime.bigint()
  spawnSync('git', ['grep', '-F', '-n', term, commit], { cwd: repo, stdio: ['ignore', 'ignore', 'ignore'] })
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const main = async (): Promise<void> => {
  let repo = values.repo
  let commit = values.commit
  if (repo === undefined) {
    repo = path.join(os.tmpdir(), `vba-bench-repo-${values.files}`)
    if (!existsSync(path.join(repo, 'HEAD'))) {
      process.stderr.write(`generating a repository of ${values.files} files in ${repo} (once) ...\n`)
      generateRepo(repo, Number(values.files))
    }
  }
  commit ??= execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo, encoding: 'utf8' }).trim()
  const stats = execFileSync('git', ['ls-tree', '-r', '-l', commit], { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 28 }).split('\n').filter(Boolean)
  const bytes = stats.reduce((s, l) => s + (Number(l.split(/\s+/)[3]) || 0), 0)
  const profile = path.join(os.tmpdir(), `vba-bench-source-${process.pid}.toml`)
  writeFileSync(profile, `[source]\nrepository = ${JSON.stringify(repo)}\nurl = "bench"\ncommit = "${commit}"\n[limits]\nmax_matches = 100000\nmax_result_bytes = 268435456\ntime_ms = 600000\n`)
  const terms = ['AddSC_', 'HandleLoot(', 'SPELL_AURA_MOD_STUN', 'zz-no-such-text-zz']
  // Warm the page cache for both sides.
  for (const t of terms) timeGitGrep(repo, commit, t)
  const cold: Array<{ term: string; ours: number; git: number; rss: number }> = []
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    let rss = 0
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint()
      const w = runWorker(WORKER, [profile, term])
      ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
      rss = Math.max(rss, w.maxRssMb ?? 0)
      theirs.push(timeGitGrep(repo, commit, term))
    }
    cold.push({ term, ours: median(ours), git: median(theirs), rss })
  }
  // A new process with the snapshot's disk cache (filled once before timing).
  const cacheDir = path.join(os.tmpdir(), `vba-bench-snapcache-${process.pid}`)
  const cachedProfile = path.join(os.tmpdir(), `vba-bench-source-cached-${process.pid}.toml`)
  writeFileSync(cachedProfile, `[source]\nrepository = ${JSON.stringify(repo)}\nurl = "bench"\ncommit = "${commit}"\ncache_dir = ${JSON.stringify(cacheDir)}\n[limits]\nmax_matches = 100000\nmax_result_bytes = 268435456\ntime_ms = 600000\n`)
  runWorker(WORKER, [cachedProfile, 'fill-the-cache'])
  const diskCached: Array<{ term: string; ours: number; git: number }> = []
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint()
      runWorker(WORKER, [cachedProfile, term])
      ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
      theirs.push(timeGitGrep(repo, commit, term))
    }
    diskCached.push({ term, ours: median(ours), git: median(theirs) })
  }
  execFileSync('rm', ['-rf', cacheDir])
  const p = await loadProfile(profile)()
  if (p._tag === 'Left') throw new Error(p.left.message)
  const research = createProjectResearch(p.right, { openSource: openSourceResearch })
  await research.query({ kind: 'source.search', text: 'warm-up' })()
  const warm: Array<{ term: string; ours: number; git: number }> = []
  for (const term of terms) {
    const ours: number[] = []
    const theirs: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = process.hrtime.bigint()
      const c = await research.query({ kind: 'source.search', text: term })()
      if (c._tag === 'Left') throw new Error(c.left.message)
      ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
      theirs.push(timeGitGrep(repo, commit, term))
    }
    warm.push({ term, ours: median(ours), git: median(theirs) })
  }
  const warmRss = process.resourceUsage().maxRSS / 1024
  await research.close()
  process.stdout.write(`bench/source-search  ${new Date().toISOString().slice(0, 10)}  ${machine()}\n`)
  process.stdout.write(`repository ${repo} at ${commit.slice(0, 12)}: ${stats.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB; median of ${RUNS}\n`)
  for (const c of cold) process.stdout.write(`cold  ${c.term.padEnd(22)} ${c.ours.toFixed(0).padStart(6)} ms vs git grep ${c.git.toFixed(0).padStart(5)} ms  ratio ${(c.ours / c.git).toFixed(2)}x (target <= 5x)  peak RSS ${c.rss.toFixed(0)} MiB\n`)
  for (const d of diskCached) process.stdout.write(`new process with disk cache  ${d.term.padEnd(22)} ${d.ours.toFixed(0).padStart(6)} ms vs git grep ${d.git.toFixed(0).padStart(5)} ms  ratio ${(d.ours / d.git).toFixed(2)}x\n`)
  for (const w of warm) process.stdout.write(`warm  ${w.term.padEnd(22)} ${w.ours.toFixed(1).padStart(6)} ms vs git grep ${w.git.toFixed(0).padStart(5)} ms  ratio ${(w.ours / w.git).toFixed(2)}x (target <= 1x)\n`)
  process.stdout.write(`warm session peak RSS ${warmRss.toFixed(0)} MiB\n`)
}

await main()
