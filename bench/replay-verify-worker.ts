/** One replay or verify in a fresh process; prints {ms, maxRssMb, ...} as JSON. */
import { replayCase } from '../src/fp.js'
import { verifyCase } from '../src/fp.js'
import { defaultProjections } from '../src/projections/defaults.js'

const [mode, dir] = process.argv.slice(2)
if (dir === undefined || (mode !== 'replay' && mode !== 'verify' && mode !== 'verify-chain-only')) {
  process.stderr.write('usage: replay-verify-worker.js replay|verify|verify-chain-only DIR\n')
  process.exit(2)
}
const t0 = process.hrtime.bigint()
// verify-chain-only: everything verify does but the rules, to measure what the rules cost.
const r =
  mode === 'replay'
    ? await replayCase(dir, defaultProjections())()
    : await verifyCase(dir, mode === 'verify' ? {} : { rules: false })()
const ms = Number(process.hrtime.bigint() - t0) / 1e6
if (r._tag === 'Left') {
  process.stderr.write(`${JSON.stringify(r.left)}\n`)
  process.exit(1)
}
const ok = 'valid' in r.right ? r.right.valid : true
if (!ok) {
  process.stderr.write('case did not verify\n')
  process.exit(1)
}
process.stdout.write(`${JSON.stringify({ ms, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`)
