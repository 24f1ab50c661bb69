import { attempt } from '../src/failures/error.js'
/**
 * bench/replay-verify: replay and verify of a generated case (default 100,000 events), as
 * throughput and as a ratio against `sha256sum` over the same bytes in the same run, with peak
 * memory. Target (DESIGN.md): at least half of sha256sum's throughput; memory bounded by the
 * projections, not by the log.
 *
 * With --one-event-commands the case is N plain operator notes of one command each (what the per-command
 * cost of the command index and the rule fold weighs on); its log is sealed directly, one line per
 * command, as the writer would seal them (appending 100,000 commands one by one would take minutes).
 *
 * With --baseline FILE (another build's dist/bench/replay-verify-worker.js) that build's replay and
 * verify run interleaved with this one's, and the lines say how much faster this build is.
 *
 *   node dist/bench/replay-verify.js [--events N] [--runs R] [--keep DIR] [--one-event-commands] [--baseline FILE]
 */
import { existsSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { randomBytes } from 'node:crypto'
import { initCase } from '../src/fp.js'
import { openCase } from '../src/fp.js'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { objectRefOf } from '../src/adapters/case-store/objects.js'
import type { EventDraft } from '../src/events/chain.js'
import { genesisHash, sealEvent } from '../src/events/chain.js'
import { canonicalJson } from '../src/events/canonical.js'
import { randomUUID } from 'node:crypto'
import { createWriteStream, writeFileSync } from 'node:fs'
import { machine, mb, median, rate, runWorker, timeShell, benchArgs } from './lib.js'
import { mkdtempSync, rmSync } from 'node:fs'
import { execSync } from 'node:child_process'
import * as os from 'node:os'

const values = benchArgs(import.meta.url, {
  events: { type: 'string', default: '100000' },
  runs: { type: 'string', default: '3' },
  keep: { type: 'string' },
  'one-event-commands': { type: 'boolean', default: false },
  baseline: { type: 'string' }
})
const EVENTS = Number(values.events)
const RUNS = Number(values.runs)
const HEAP_CAP_MB = 48
const WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'replay-verify-worker.js')

/** A realistic mix: notes of 100-600 characters, every 20th event an attachment of 1-8 KiB. */
const generate = async (dir: string): Promise<void> => {
  const created = await initCase({ dir, caseId: 'case-bench' })()
  if (created._tag === 'Left') throw new Error(created.left.message)
  const opened = await openCase(dir)()
  if (opened._tag === 'Left') throw new Error(opened.left.message)
  const h = opened.right
  const PER_COMMAND = 1000
  for (let done = 0; done < EVENTS; done += PER_COMMAND) {
    const events: EventDraft[] = []
    const objects: Buffer[] = []
    for (let i = done; i < Math.min(EVENTS, done + PER_COMMAND); i++) {
      if (i % 20 === 19) {
        const bytes = randomBytes(1024 + (i % 7) * 1024)
        objects.push(bytes)
        events.push({
          type: 'AttachmentAdded',
          actor: 'controller',
          data: { name: `capture-${i}.json`, object: objectRefOf(bytes, 'application/json') }
        })
      } else {
        events.push({
          type: 'NoteRecorded',
          actor: i % 3 === 0 ? 'operator' : 'controller',
          data: { text: `observation ${i}: ${'creature 23487 evade reset '.repeat(4 + (i % 20))}`, format: 'plain' }
        })
      }
    }
    const r = await attempt(
      appendCommand(h, {
        commandId: `bench-${done}`,
        expectedGeneration: h.cursor.seq,
        events,
        objects
      })
    )
    if (r._tag === 'Left') throw new Error(r.left.message)
    if (process.stderr.isTTY === true) process.stderr.write(`\rgenerating ${done + events.length}/${EVENTS} events`)
  }
  if (process.stderr.isTTY === true) process.stderr.write('\n')
}

/** N plain operator notes, one command each, sealed line by line after a fresh declaration. */
const generateOneEventCommands = async (dir: string): Promise<void> => {
  const created = await initCase({ dir, caseId: 'case-bench' })()
  if (created._tag === 'Left') throw new Error(created.left.message)
  const genesis = genesisHash(created.right)
  if (genesis._tag === 'Left') throw new Error(genesis.left.message)
  // One millisecond apart from the declaration on: every command has a time of its own.
  const createdMs = Date.parse(created.right.created_at)
  const out = createWriteStream(path.join(dir, 'events.jsonl'))
  let prev = genesis.right
  let bytes = 0
  for (let i = 0; i < EVENTS; i++) {
    const sealed = sealEvent(
      {
        type: 'NoteRecorded',
        actor: 'operator',
        data: { text: `observation ${i}: ${'creature 23487 evade reset '.repeat(4 + (i % 20))}`, format: 'plain' }
      },
      { seq: i + 1, prev, id: `evt-${randomUUID()}`, at: new Date(createdMs + i).toISOString(), commandId: `note-${i}` }
    )
    if (sealed._tag === 'Left') throw new Error(sealed.left.message)
    const line = `${sealed.right.line}\n`
    bytes += Buffer.byteLength(line)
    if (!out.write(line)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
    prev = sealed.right.envelope.hash
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())))
  const head = canonicalJson({ seq: EVENTS, hash: prev, bytes })
  if (head._tag === 'Left') throw new Error('HEAD is not canonicalisable')
  writeFileSync(path.join(dir, 'HEAD'), `${head.right}\n`)
}

const main = async (): Promise<void> => {
  const dir = values.keep ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'vba-bench-')), 'case')
  if (!existsSync(path.join(dir, 'events.jsonl')))
    await (values['one-event-commands'] === true ? generateOneEventCommands(dir) : generate(dir))
  const logBytes = statSync(path.join(dir, 'events.jsonl')).size
  const objectBytes = Number(
    execSync(`find objects -type f -printf '%s\\n' | awk '{s+=$1} END {print s+0}'`, {
      cwd: dir,
      encoding: 'utf8'
    }).trim()
  )

  // Warm the page cache so both sides read from memory.
  timeShell('cat events.jsonl > /dev/null; find objects -type f -print0 | xargs -0 cat > /dev/null', dir)
  const shaLog: number[] = []
  const shaAll: number[] = []
  const replay: Array<{ ms: number; maxRssMb?: number }> = []
  const verify: Array<{ ms: number; maxRssMb?: number }> = []
  const chainOnly: number[] = []
  const baseReplay: number[] = []
  const baseVerify: number[] = []
  const baseline = values.baseline
  for (let r = 0; r < RUNS; r++) {
    if (baseline !== undefined) {
      baseReplay.push(runWorker(baseline, ['replay', dir]).ms)
      baseVerify.push(runWorker(baseline, ['verify', dir]).ms)
    }
    shaLog.push(timeShell('sha256sum events.jsonl', dir).ms)
    shaAll.push(
      timeShell('sha256sum events.jsonl HEAD case.json && find objects -type f -print0 | xargs -0 sha256sum', dir).ms
    )
    replay.push(runWorker(WORKER, ['replay', dir]))
    verify.push(runWorker(WORKER, ['verify', dir]))
    chainOnly.push(runWorker(WORKER, ['verify-chain-only', dir]).ms)
  }
  // Memory bounded by projections, not by the log: the same work must succeed with a small heap cap.
  let capped = 'yes'
  try {
    runWorker(WORKER, ['replay', dir], [`--max-old-space-size=${HEAP_CAP_MB}`])
    runWorker(WORKER, ['verify', dir], [`--max-old-space-size=${HEAP_CAP_MB}`])
  } catch (e) {
    capped = `NO (${e instanceof Error ? e.message.slice(0, 200) : String(e)})`
  }
  const m = {
    shaLog: median(shaLog),
    shaAll: median(shaAll),
    replay: median(replay.map((x) => x.ms)),
    verify: median(verify.map((x) => x.ms)),
    chainOnly: median(chainOnly),
    replayRss: Math.max(...replay.map((x) => x.maxRssMb ?? 0)),
    verifyRss: Math.max(...verify.map((x) => x.maxRssMb ?? 0))
  }
  const lines = [
    `bench/replay-verify  ${new Date().toISOString().slice(0, 10)}  ${machine()}`,
    `case: ${EVENTS} events${values['one-event-commands'] === true ? ' (one command each)' : ''}, log ${mb(logBytes)}, objects ${mb(objectBytes)}; median of ${RUNS} runs (fresh process each)`,
    `replay  ${m.replay.toFixed(0)} ms  ${rate(logBytes, m.replay)}  vs sha256sum(log) ${m.shaLog.toFixed(0)} ms ${rate(logBytes, m.shaLog)}  ratio ${(m.shaLog / m.replay).toFixed(2)} of sha256sum throughput (target >= 0.5)  peak RSS ${m.replayRss.toFixed(0)} MiB`,
    `verify  ${m.verify.toFixed(0)} ms  ${rate(logBytes + objectBytes, m.verify)}  vs sha256sum(all files) ${m.shaAll.toFixed(0)} ms ${rate(logBytes + objectBytes, m.shaAll)}  ratio ${(m.shaAll / m.verify).toFixed(2)} of sha256sum throughput (target >= 0.5)  peak RSS ${m.verifyRss.toFixed(0)} MiB`,
    `rules   verify without the rule checks ${m.chainOnly.toFixed(0)} ms: the rules cost ${(m.verify - m.chainOnly).toFixed(0)} ms, ${((100 * (m.verify - m.chainOnly)) / m.verify).toFixed(1)}% of verify (target <= 20%)`,
    ...(baseline === undefined
      ? []
      : [
          `baseline ${baseline}: replay ${median(baseReplay).toFixed(0)} ms (this build ${(median(baseReplay) / m.replay).toFixed(2)}x as fast), verify ${median(baseVerify).toFixed(0)} ms (${(median(baseVerify) / m.verify).toFixed(2)}x), interleaved`
        ]),
    `load average ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')} at the end`,
    `bounded memory: replay and verify of this case also pass with V8's heap capped at ${HEAP_CAP_MB} MiB (--max-old-space-size): ${capped}`,
    values.keep === undefined ? 'case removed (--keep DIR keeps it)' : `case kept at ${dir}`
  ]
  for (const l of lines) process.stdout.write(`${l}\n`)
  // A generated case of ~90 MiB is not left in the temp directory.
  if (values.keep === undefined) rmSync(path.dirname(dir), { recursive: true, force: true })
}

await main()
