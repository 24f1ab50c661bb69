/** `npm run bench`: every benchmark in turn (each prints its own figures). */
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const BENCHES = [
  'replay-verify.js',
  'db-rows.js',
  'source-search.js',
  'startup.js',
  'export.js',
  'huge-entry.js',
  'sql-object-export.js',
  'bags.js',
  'mcp.js',
  'prompt-size.js',
  'verify-investigation.js'
]
let failed = 0
for (const b of BENCHES) {
  const r = spawnSync(process.execPath, [path.join(here, b), ...process.argv.slice(2)], { stdio: 'inherit' })
  if (r.status !== 0) failed++
}
process.exit(failed === 0 ? 0 : 1)
