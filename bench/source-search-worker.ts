/**
 * One research session in a fresh process; prints one JSON line.
 *
 *   load PROFILE                   loads the modules and the profile only (the fixed cost of a process)
 *   search PROFILE TERM            one source.search: {ms, maxRssMb, hits}
 *   session PROFILE RUNS TERM...   a warm-up search, then every term RUNS times: {ms: {term: [ms…]}, maxRssMb}
 *   prepare PROFILE                prepares a revision of the demo report: {ms, maxRssMb, complete, facts, captures, failed}
 *
 * The snapshot index location comes from the profile ([source] cache_dir or cache = false).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { loadProfile } from '../src/fp.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { openSourceResearch } from '../src/research/source/open.js'

const [mode, profileFile, ...rest] = process.argv.slice(2)
if (mode === undefined || profileFile === undefined) {
  process.stderr.write('usage: source-search-worker.js search|session|prepare PROFILE ...\n')
  process.exit(2)
}
const rss = (): number => process.resourceUsage().maxRSS / 1024
const t0 = process.hrtime.bigint()
const since = (t: bigint): number => Number(process.hrtime.bigint() - t) / 1e6
const profile = await loadProfile(profileFile)()
if (profile._tag === 'Left') throw new Error(profile.left.message)
const r = createProjectResearch(profile.right, { openSource: openSourceResearch })
const search = async (term: string): Promise<number> => {
  const c = await r.query({ kind: 'source.search', text: term })()
  if (c._tag === 'Left') throw new Error(JSON.stringify(c.left))
  return c.right.result['hit_count'] as number
}
if (mode === 'load') {
  process.stdout.write(`${JSON.stringify({ ms: since(t0), maxRssMb: rss() })}\n`)
} else if (mode === 'search') {
  const hits = await search(rest[0] ?? '')
  process.stdout.write(`${JSON.stringify({ ms: since(t0), maxRssMb: rss(), hits })}\n`)
} else if (mode === 'session') {
  const runs = Number(rest[0])
  await search('warm-up')
  const ms: Record<string, number[]> = {}
  for (const term of rest.slice(1)) {
    ms[term] = []
    for (let i = 0; i < runs; i++) {
      const t = process.hrtime.bigint()
      await search(term)
      ms[term].push(since(t))
    }
  }
  process.stdout.write(`${JSON.stringify({ ms, maxRssMb: rss() })}\n`)
} else if (mode === 'prepare') {
  const { enrichmentConfig, prepareRevision } = await import('../src/commands/prepare.js')
  const { initCase } = await import('../src/adapters/case-store/init.js')
  const dir = path.join(mkdtempSync(path.join(os.tmpdir(), 'vba-bench-prepare-')), 'case')
  await initCase({ dir, title: 'Wild wolpertingers vanish when netted' })
  const config = enrichmentConfig(profile.right)
  if (config._tag === 'Left') throw new Error(config.left.message)
  const p = await prepareRevision(dir, r, config.right, {
    report:
      'Players report that quest 11117 can no longer be completed: wild wolpertingers vanish when netted, but nothing is added to the bags.',
    entities: [{ type: 'quest', id: 11117 }]
  })
  process.stdout.write(
    `${JSON.stringify({ ms: since(t0), maxRssMb: rss(), complete: p.complete, facts: p.facts, captures: p.captures })}\n`
  )
  rmSync(path.dirname(dir), { recursive: true, force: true })
}
await r.close()
