/** One source.search in a fresh process (cold: no cache); prints {ms, maxRssMb, hits} as JSON. */
import { loadProfile } from '../src/adapters/config/profile.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { openSourceResearch } from '../src/research/source/open.js'

const [profileFile, term] = process.argv.slice(2)
if (profileFile === undefined || term === undefined) {
  process.stderr.write('usage: source-search-worker.js PROFILE TERM\n')
  process.exit(2)
}
const t0 = process.hrtime.bigint()
const profile = await loadProfile(profileFile)()
if (profile._tag === 'Left') throw new Error(profile.left.message)
const r = createProjectResearch(profile.right, { openSource: openSourceResearch })
const c = await r.query({ kind: 'source.search', text: term })()
if (c._tag === 'Left') {
  process.stderr.write(JSON.stringify(c.left) + '\n')
  process.exit(1)
}
process.stdout.write(JSON.stringify({ ms: Number(process.hrtime.bigint() - t0) / 1e6, maxRssMb: process.resourceUsage().maxRSS / 1024, hits: c.right.result['hit_count'] }) + '\n')
