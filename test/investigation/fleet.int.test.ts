/**
 * A fleet that works: `vba work` processes with several slots each, on PostgreSQL and a private
 * MariaDB, against a local OpenAI-compatible endpoint that answers 429 (with Retry-After) and 500
 * to a fifth of its requests. Slots hold leases at once under their own identities, every case
 * concludes and verifies with the provider's token usage in its log, `--json` prints only JSON
 * lines, a killed worker's cases are taken over; and in process: a permanent failure stops the
 * worker after it released its leases, and until-idle says why it ended.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { loadProfile } from '../../src/fp.js'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { work, type WorkEvent } from '../../src/investigation/worker.js'
import { httpModel } from '../../src/investigation/http-model.js'
import { writeWorld } from '../helpers/investigation.js'
import { startModelEndpoint, type Behaviour, type ModelEndpoint } from '../helpers/model-endpoint.js'
import { right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'
import { VBA_BIN } from '../helpers/cli.js'

const profileFile = writeWorld(tempDir('fleet-world'))
const profile = right(await loadProfile(profileFile)())
const research = createProjectResearch(profile)
const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []

const fresh = async (kind: 'postgres' | 'mariadb', tag: string): Promise<{ t: TestStore; store: SqlStore }> => {
  const t = kind === 'postgres' ? await postgresStore(tag) : await maria.store(tag)
  made.push(t)
  await migrateStore(t.url, { environment: t.environment })
  const store = await openSqlStore(t.url, { environment: t.environment })
  opened.push(store)
  return { t, store }
}

/** `n` prepared, not started cases. */
const prepared = async (store: SqlStore, n: number): Promise<string[]> => {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const id = `case-f${String(i).padStart(2, '0')}`
    const env = fixedEnv(`2026-11-30T10:${String(i).padStart(2, '0')}:00.000Z`, id)
    await store.create(id, { caseId: id, env })
    right(
      await prepareRevision(
        { store, caseId: id },
        research,
        right(enrichmentConfig(profile)),
        { report: `Quest 11117 cannot be completed (report ${i}).`, entities: [{ type: 'quest', id: 11117 }] },
        { env }
      )()
    )
    ids.push(id)
  }
  return ids
}

/** A provider: a fifth of the requests get 429 (Retry-After 1 s) or 500; answers take `delayMs`. */
const flaky = (delayMs: number): Promise<ModelEndpoint> =>
  startModelEndpoint((r): Behaviour => {
    if (r.n % 10 === 3) return { kind: 'status', status: 429, headers: { 'retry-after': '1' } }
    if (r.n % 10 === 7) return { kind: 'status', status: 500 }
    return { kind: 'answer', delayMs }
  })

interface WorkerRun {
  readonly kill: () => void
  readonly done: Promise<{ code: number | null; lines: string[]; stderr: string }>
  readonly lines: () => string[]
}

const vbaWork = (url: string, env: Record<string, string>, model: string, worker: string): WorkerRun => {
  const child = spawn(
    process.execPath,
    [
      VBA_BIN,
      'work',
      '--store',
      url,
      '--config',
      profileFile,
      '--model-url',
      model,
      '--model',
      'wolf-7b',
      '--worker',
      worker,
      '--concurrency',
      '3',
      '--lease-ms',
      '3000',
      '--until-idle',
      '--json'
    ],
    { env: { ...process.env, ...env } }
  )
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => {
    out += d
  })
  child.stderr.on('data', (d) => {
    err += d
  })
  const lines = (): string[] => out.split('\n').filter((l) => l !== '')
  return {
    kill: () => child.kill('SIGKILL'),
    lines,
    done: new Promise((resolve) => child.on('close', (code) => resolve({ code, lines: lines(), stderr: err })))
  }
}

const parsed = (
  lines: readonly string[]
): Array<
  | WorkEvent
  | {
      kind: 'summary'
      summary: { claims: number; concluded: number; ended: string; failures_by_code: Record<string, number> }
    }
> =>
  lines.map((l) => {
    try {
      return JSON.parse(l) as WorkEvent
    } catch {
      throw new Error(`not a JSON line: ${l}`)
    }
  })

/** The most leases one worker process held at once, from its claimed/released/failed events. */
const mostHeld = (events: ReturnType<typeof parsed>): number => {
  const held = new Set<string>()
  let most = 0
  for (const e of events) {
    if (e.kind === 'claimed') held.add(e.case_id)
    if (e.kind === 'released' || (e.kind === 'failed' && e.case_id !== '')) held.delete(e.case_id)
    most = Math.max(most, held.size)
  }
  return most
}

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`vba work fleet on ${kind}`)

  test('2 processes × 3 slots on 12 cases against a flaky provider, one worker killed: every case concludes and verifies, usage recorded, JSON lines only', async () => {
    const { t, store } = await fresh(kind, 'fleet')
    const ids = await prepared(store, 12)
    const ep = await flaky(150)
    try {
      const a = vbaWork(t.url, t.environment, ep.url, 'worker-a')
      const b = vbaWork(t.url, t.environment, ep.url, 'worker-b')
      // Kill A once it holds cases and has advanced one (an event it printed, not a time): its
      // leases run out and B takes the cases over.
      for (let i = 0; i < 1200 && !a.lines().some((l) => l.includes('"kind":"step"')); i++)
        await new Promise((r) => setTimeout(r, 50))
      assert.ok(
        a.lines().some((l) => l.includes('"kind":"claimed"')),
        'A claimed cases before it was killed'
      )
      a.kill()
      const [ra, rb] = await Promise.all([a.done, b.done])
      assert.is(ra.code, null, 'A was killed')
      assert.is(rb.code, 0, rb.stderr)
      const events = parsed(rb.lines)
      assert.ok(events.length > 0)
      const summary = events[events.length - 1]
      assert.is(summary?.kind, 'summary', 'the summary is the last JSON line')
      if (summary?.kind === 'summary') {
        assert.is(summary.summary.ended, 'idle')
        assert.equal(summary.summary.failures_by_code, {}, JSON.stringify(summary.summary))
      }
      assert.ok(mostHeld(events) >= 2, 'B held several leases at once')
      const slots = new Set(events.flatMap((e) => (e.kind === 'claimed' ? [e.worker] : [])))
      for (const s of slots) assert.match(s, /^worker-b:[1-3]$/)
      assert.ok(
        events.some((e) => e.kind === 'stopping' && e.reason === 'idle'),
        'until-idle says why it ended'
      )
      assert.ok(
        ep.served['status-429'] !== undefined && ep.served['status-500'] !== undefined,
        JSON.stringify(ep.served)
      )
      for (const entry of await store.list()) {
        assert.is(entry.state, 'CONCLUDED', `${entry.case_id}: ${entry.why}`)
        assert.is(entry.lease, null)
        assert.ok(entry.tokens_total > 0)
        assert.match(entry.model ?? '', 'wolf-7b-2026-11-01')
      }
      for (const id of ids) {
        const v = await store.verify(id)
        assert.ok(v.valid, `${id}: ${JSON.stringify(v.findings.slice(0, 3))}`)
        const answers: Array<{ provenance: { usage: { total_tokens: number } | null } | null }> = []
        await store.replay(id, [
          {
            name: 'answers',
            version: 1,
            init: () => answers,
            evolve: (s: typeof answers, e) => {
              if (e.type === 'ModelResponded') s.push(e.data as (typeof answers)[number])
              return s
            },
            view: () => null
          }
        ])
        assert.ok(answers.length >= 4)
        for (const x of answers)
          assert.ok((x.provenance?.usage?.total_tokens ?? 0) > 0, `${id}: an answer without usage`)
      }
    } finally {
      await ep.close()
    }
  })

  test.run()
}

const inProcess = suite('work() in process')

inProcess(
  'a permanent failure stops the worker: every slot releases its case, the summary names the failure',
  async () => {
    const { store } = await fresh('postgres', 'stop')
    await prepared(store, 4)
    const ep = await startModelEndpoint()
    try {
      const events: WorkEvent[] = []
      // No settings: a prepared, not started case cannot be started (INVESTIGATION_NOT_STARTED, permanent).
      const summary = await work({
        store,
        model: httpModel({ url: ep.url, model: 'm' }),
        research,
        worker: 'stopper',
        concurrency: 2,
        leaseMs: 5000,
        pollMs: 50,
        untilIdle: true,
        onEvent: (e) => events.push(e)
      })
      assert.is(summary.ended, 'failure')
      assert.is(summary.stopped_by?.code, 'INVESTIGATION_NOT_STARTED')
      assert.ok((summary.failures_by_code['INVESTIGATION_NOT_STARTED'] ?? 0) >= 1)
      assert.ok(events.some((e) => e.kind === 'stopping' && e.reason === 'failure'))
      for (const e of await store.list()) assert.is(e.lease, null, `${e.case_id} is still leased`)
    } finally {
      await ep.close()
    }
  }
)

inProcess(
  'slots are worker identities; a bad name or concurrency is refused before anything is claimed; until-idle ends and says so',
  async () => {
    const { store } = await fresh('postgres', 'slots')
    await prepared(store, 3)
    const ep = await startModelEndpoint()
    try {
      for (const bad of [
        { worker: 'w/1' },
        { worker: 'w', concurrency: 0 },
        { worker: 'w', concurrency: 65 },
        { worker: 'x'.repeat(126), concurrency: 2 }
      ]) {
        let code = ''
        try {
          await work({ store, model: httpModel({ url: ep.url, model: 'm' }), research, untilIdle: true, ...bad })
        } catch (e) {
          code = (e as { failure?: { code: string } }).failure?.code ?? String(e)
        }
        assert.is(code, 'INVALID_ARGUMENT', JSON.stringify(bad))
      }
      const events: WorkEvent[] = []
      const summary = await work({
        store,
        model: httpModel({ url: ep.url, model: 'm' }),
        research,
        worker: 'host.42',
        concurrency: 3,
        leaseMs: 5000,
        pollMs: 50,
        settings: right(settingsOf(profile)),
        untilIdle: true,
        onEvent: (e) => events.push(e)
      })
      assert.is(summary.claims, 3)
      assert.is(summary.concluded, 3)
      assert.is(summary.ended, 'idle')
      assert.equal(
        new Set(events.flatMap((e) => (e.kind === 'claimed' ? [e.worker] : []))),
        new Set(['host.42:1', 'host.42:2', 'host.42:3'])
      )
      const stop = events.find((e) => e.kind === 'stopping')
      assert.ok(stop?.kind === 'stopping' && stop.reason === 'idle' && /nothing is runnable/.test(stop.message))
    } finally {
      await ep.close()
    }
  }
)

inProcess.after(async () => {
  for (const s of opened) await s.close()
  for (const t of made) await t.drop()
  await research.close()
  await maria.stop()
})

inProcess.run()
