/** One verify, verify without rules, verify --against, or the captures' queries run directly, in a fresh process; prints JSON. */
import * as E from 'fp-ts/lib/Either.js'
import { verifyCase } from '../src/fp.js'
import { replayCase } from '../src/fp.js'
import { readObjectAt } from '../src/fp.js'
import { loadProfile } from '../src/fp.js'
import { Capture } from '../src/events/capture.js'
import type { RecordedEvent } from '../src/events/chain.js'
import { rederiveEvidence, withEvidence } from '../src/research/rederive.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { openSourceResearch } from '../src/research/source/open.js'

const [mode, dir, profileFile] = process.argv.slice(2)
if (dir === undefined || profileFile === undefined) {
  process.stderr.write(
    'usage: verify-investigation-worker.js count|verify|verify-chain-only|against|direct DIR PROFILE\n'
  )
  process.exit(2)
}
const fail = (what: unknown): never => {
  process.stderr.write(`${JSON.stringify(what)}\n`)
  process.exit(1)
}
const now = (): number => Number(process.hrtime.bigint()) / 1e6

/** The distinct captures of the case, in log order. */
const captures = async (): Promise<{
  events: number
  turns: number
  refs: Array<{ digest: string; size: number }>
}> => {
  const refs = new Map<string, { digest: string; size: number }>()
  let turns = 0
  const r = await replayCase(dir, [
    {
      name: 'captures',
      version: 1,
      init: () => 0,
      evolve: (n: number, e: RecordedEvent) => {
        if ((e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') && !refs.has(e.data.capture.digest))
          refs.set(e.data.capture.digest, { digest: e.data.capture.digest, size: e.data.capture.size })
        if (e.type === 'ModelRequested') turns++
        return n + 1
      },
      view: (n: number) => n
    }
  ])()
  if (E.isLeft(r)) return fail(r.left)
  return { events: r.right.generation, turns, refs: [...refs.values()] }
}

const t0 = now()
if (mode === 'count') {
  const c = await captures()
  process.stdout.write(
    `${JSON.stringify({ ms: now() - t0, events: c.events, turns: c.turns, captures: c.refs.length })}\n`
  )
} else if (mode === 'verify' || mode === 'verify-chain-only') {
  const r = await verifyCase(dir, mode === 'verify' ? {} : { rules: false })()
  if (E.isLeft(r) || !r.right.valid) fail(E.isLeft(r) ? r.left : r.right.findings.slice(0, 3))
  process.stdout.write(`${JSON.stringify({ ms: now() - t0 })}\n`)
} else if (mode === 'against') {
  const profile = await loadProfile(profileFile)()
  if (E.isLeft(profile)) fail(profile.left)
  const r = await verifyCase(dir)()
  if (E.isLeft(r)) fail(r.left)
  const t1 = now()
  const ev = await rederiveEvidence(dir, (profile as E.Right<Parameters<typeof rederiveEvidence>[1]>).right)
  const rederiveMs = now() - t1
  const report = withEvidence((r as E.Right<Parameters<typeof withEvidence>[0]>).right, ev)
  if (!report.valid || ev.checked !== ev.captures)
    fail({ checked: ev.checked, captures: ev.captures, findings: ev.findings.slice(0, 3) })
  process.stdout.write(`${JSON.stringify({ ms: now() - t0, rederive_ms: rederiveMs })}\n`)
} else if (mode === 'direct') {
  const profile = await loadProfile(profileFile)()
  if (E.isLeft(profile)) fail(profile.left)
  const { refs } = await captures()
  const requests: unknown[] = []
  for (const ref of refs) {
    const bytes = await readObjectAt(dir, ref)()
    if (E.isLeft(bytes)) fail(bytes.left)
    const c = Capture.decode(JSON.parse((bytes as E.Right<Buffer>).right.toString('utf8')))
    if (E.isLeft(c)) fail('not a capture')
    requests.push((c as E.Right<Capture>).right.request)
  }
  const research = createProjectResearch((profile as E.Right<Parameters<typeof createProjectResearch>[0]>).right, {
    openSource: openSourceResearch
  })
  const t1 = now()
  for (const q of requests) {
    const r = await research.query(q)()
    if (E.isLeft(r)) fail(r.left)
  }
  const queriesMs = now() - t1
  await research.close()
  process.stdout.write(`${JSON.stringify({ ms: now() - t0, queries_ms: queriesMs })}\n`)
} else fail(`unknown mode ${String(mode)}`)
