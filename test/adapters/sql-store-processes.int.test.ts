/**
 * Real processes against the SQL store on PostgreSQL and a private MariaDB: concurrent writers
 * on one case and on separate cases, writers killed with SIGKILL (at random moments, and for
 * certain in the middle of a transaction), and a fleet of worker processes sharing one queue: each
 * case advanced by one worker at a time, a killed worker's case taken over after its lease, a lost
 * lease refusing the stalled worker's appends.
 * Trials: VBA_SQL_CRASH_TRIALS (default 30 per server).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn, type ChildProcess } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { recordNote } from '../../src/fp.js'
import type { Lease } from '../../src/adapters/case-store/store.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { writeWorld } from '../helpers/investigation.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { seededRandom } from '../helpers/seed.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const HELPERS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers')
const WRITER = path.join(HELPERS, 'writer-process.js')
const WORKER = path.join(HELPERS, 'worker-process.js')
const TRIALS = Number(process.env['VBA_SQL_CRASH_TRIALS'] ?? '30')

const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []
const fresh = async (
  kind: 'postgres' | 'mariadb',
  tag: string
): Promise<{ t: TestStore; store: SqlStore; env: NodeJS.ProcessEnv }> => {
  const t = kind === 'postgres' ? await postgresStore(tag) : await maria.store(tag)
  made.push(t)
  await migrateStore(t.url, { environment: t.environment })
  const store = await openSqlStore(t.url, { environment: t.environment })
  opened.push(store)
  return { t, store, env: { ...process.env, ...t.environment } }
}

const spawnNode = (
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv
): { child: ChildProcess; done: Promise<{ code: number | null; out: string; err: string }>; out: () => string } => {
  const child = spawn(process.execPath, [script, ...args], { env })
  let out = ''
  let err = ''
  child.stdout?.on('data', (d) => {
    out += d
  })
  child.stderr?.on('data', (d) => {
    err += d
  })
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out, err }))
  )
  return { child, done, out: () => out }
}

/** Resolves once the writer printed `n` acks (or ended: its output then tells what it did). */
const untilAcks = (w: ReturnType<typeof spawnNode>, n: number): Promise<void> =>
  new Promise((resolve) => {
    const count = (): number => (w.out().match(/^ack /gm) ?? []).length
    if (n === 0 || count() >= n) {
      resolve()
      return
    }
    const check = (): void => {
      if (count() >= n) {
        w.child.stdout?.off('data', check)
        resolve()
      }
    }
    w.child.stdout?.on('data', check)
    void w.done.then(() => resolve())
  })

const world = tempDir('fleet-world')
const profileFile = writeWorld(world)
const profile = right(await loadProfile(profileFile)())
const research = createProjectResearch(profile)
const config = right(enrichmentConfig(profile))

/** `n` prepared (not started) cases in the store. */
const prepared = async (store: SqlStore, n: number): Promise<string[]> => {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const id = `case-q${String(i).padStart(2, '0')}`
    const env = fixedEnv(`2026-11-30T10:${String(i).padStart(2, '0')}:00.000Z`, id)
    await store.create(id, { caseId: id, env })
    right(
      await prepareRevision(
        { store, caseId: id },
        research,
        config,
        { report: `Quest 11117 cannot be completed (report ${i}).`, entities: [{ type: 'quest', id: 11117 }] },
        { env }
      )()
    )
    ids.push(id)
  }
  return ids
}

/** Waits until the store (by the database's clock) no longer sees a live lease on the case. */
const untilExpired = async (store: SqlStore, id: string): Promise<void> => {
  while ((await store.leaseOf(id)) !== null) await new Promise((r) => setTimeout(r, 50))
}

interface Interval {
  worker: string
  from: number
  to: number
}

/** Claim → release (or → failure / end of output) intervals per case, from the workers' lines. */
const intervals = (outputs: ReadonlyArray<{ worker: string; out: string }>): Map<string, Interval[]> => {
  const byCase = new Map<string, Interval[]>()
  for (const { worker, out } of outputs) {
    const open = new Map<string, number>()
    let last = 0
    for (const line of out.split('\n')) {
      const [t, kind, caseId] = line.split(' ')
      if (t === undefined || kind === undefined || caseId === undefined) continue
      last = Number(t)
      if (kind === 'claimed') open.set(caseId, Number(t))
      if (kind === 'released' || kind === 'failed') {
        const from = open.get(caseId)
        if (from !== undefined)
          (byCase.get(caseId) ?? byCase.set(caseId, []).get(caseId))?.push({ worker, from, to: Number(t) })
        open.delete(caseId)
      }
    }
    // A killed worker's claim lasts until its last line (its lease then runs out).
    for (const [caseId, from] of open)
      (byCase.get(caseId) ?? byCase.set(caseId, []).get(caseId))?.push({ worker, from, to: Math.max(last, from) })
  }
  return byCase
}

const noOverlap = (byCase: Map<string, Interval[]>): void => {
  for (const [caseId, list] of byCase) {
    const sorted = [...list].sort((a, b) => a.from - b.from)
    for (let i = 1; i < sorted.length; i++) {
      const a = sorted[i - 1] as Interval
      const b = sorted[i] as Interval
      assert.ok(b.from >= a.to, `${caseId}: ${b.worker} claimed at ${b.from} while ${a.worker} held it until ${a.to}`)
    }
  }
}

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`SQL store processes on ${kind}`)

  test('4 writer processes × 150 commands on one case, and 4 on separate cases: nothing lost or duplicated', async () => {
    const { t, store, env } = await fresh(kind, 'writers')
    await store.create('case-one', { caseId: 'case-one' })
    for (const p of ['a', 'b', 'c', 'd']) await store.create(`case-${p}`, { caseId: `case-${p}` })
    const runs = [
      ...['a', 'b', 'c', 'd'].map((p) => spawnNode(WRITER, ['concurrent', `${t.url}#case-one`, p, '150'], env)),
      ...['a', 'b', 'c', 'd'].map((p) => spawnNode(WRITER, ['concurrent', `${t.url}#case-${p}`, p, '150'], env))
    ]
    for (const r of await Promise.all(runs.map((x) => x.done))) assert.is(r.code, 0, r.err)
    const one = await store.verify('case-one')
    assert.ok(one.valid, JSON.stringify(one.findings.slice(0, 3)))
    assert.is(one.generation, 600)
    const h = await store.open('case-one')
    for (const p of ['a', 'b', 'c', 'd']) {
      for (let i = 0; i < 150; i++) {
        const span = h.cursor.commands.get(`${p}-${i}`)
        assert.ok(span !== undefined && span.firstSeq === span.lastSeq, `${p}-${i} recorded exactly once`)
      }
    }
    const rows = (await store.knex('vba_events').where({ case_id: 'case-one' }).count({ n: '*' })) as Array<{
      n: unknown
    }>
    assert.is(Number(rows[0]?.n), 600)
    for (const p of ['a', 'b', 'c', 'd']) assert.is((await store.verify(`case-${p}`)).generation, 150)
  })

  test('a writer killed inside its transaction leaves nothing; the row lock is released', async () => {
    const { t, store, env } = await fresh(kind, 'hold')
    await store.create('case-h', { caseId: 'case-h' })
    right(await recordNote({ store, caseId: 'case-h' }, { text: 'before' })())
    const holder = spawnNode(WRITER, ['hold', `${t.url}#case-h`, 'x'], env)
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (holder.out().includes('holding')) {
          clearInterval(poll)
          resolve()
        }
      }, 20)
    })
    holder.child.kill('SIGKILL')
    await holder.done
    const after = right(await recordNote({ store, caseId: 'case-h' }, { text: 'after' })())
    assert.is(after.generation, 2)
    const v = await store.verify('case-h')
    assert.ok(v.valid, JSON.stringify(v.findings))
    const ghost = (await store.knex('vba_events').where({ command_id: 'never-committed' }).count({ n: '*' })) as Array<{
      n: unknown
    }>
    assert.is(Number(ghost[0]?.n), 0)
  })

  test(`SIGKILL at random moments (${TRIALS} trials): every acknowledged command survives, the case always verifies`, async () => {
    const { t, store, env } = await fresh(kind, 'crash')
    await store.create('case-c', { caseId: 'case-c' })
    const acked = new Map<string, number>()
    const random = seededRandom()
    // Kill moments follow what the writer did, not a time: after 0 to 2 acknowledged commands (0:
    // anywhere in its start-up), then a random few milliseconds into the next append. So every
    // trial after an ack is sure to have acknowledged something, on a slow machine and a fast one.
    let owed = 0
    for (let trial = 0; trial < TRIALS; trial++) {
      const w = spawnNode(WRITER, ['crash', `${t.url}#case-c`, `t${trial}`], env)
      const acks = Math.floor(random() * 3)
      owed += acks
      await untilAcks(w, acks)
      await new Promise((r) => setTimeout(r, random() * (acks === 0 ? 300 : 15)))
      w.child.kill('SIGKILL')
      const r = await w.done
      for (const line of r.out.split('\n')) {
        const m = /^ack (\S+) (\d+)$/.exec(line)
        if (m?.[1] !== undefined) acked.set(m[1], Number(m[2]))
      }
      const h = await store.open('case-c')
      for (const [id, generation] of acked) {
        const span = h.cursor.commands.get(id)
        if (span === undefined || span.lastSeq !== generation)
          assert.unreachable(`trial ${trial}: acknowledged ${id} (generation ${generation}) is lost`)
      }
    }
    const v = await store.verify('case-c')
    assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
    assert.ok(acked.size >= owed, `acknowledged ${acked.size} commands, at least ${owed} were waited for`)
    process.stdout.write(
      `      ${kind}: ${TRIALS} kill -9 trials, ${acked.size} acknowledged commands, all present; ${v.generation} events verify\n`
    )
  })

  test('3 worker processes share one queue: every case concluded, never two workers on one case at once', async () => {
    const { t, store, env } = await fresh(kind, 'fleet')
    const ids = await prepared(store, kind === 'postgres' ? 9 : 6)
    const listed = await store.list()
    assert.is(listed.filter((e) => e.runnable).length, ids.length)
    const workers = ['w1', 'w2', 'w3'].map((w) => ({
      worker: w,
      run: spawnNode(WORKER, [t.url, profileFile, w, '4000', '20'], env)
    }))
    const results = await Promise.all(workers.map(async (w) => ({ worker: w.worker, ...(await w.run.done) })))
    for (const r of results) assert.is(r.code, 0, r.err)
    const byCase = intervals(results)
    noOverlap(byCase)
    const busy = new Set(results.filter((r) => r.out.includes('claimed')).map((r) => r.worker))
    assert.ok(busy.size >= 2, `the work was shared (${[...busy].join(', ')})`)
    for (const id of ids) {
      const v = await store.verify(id)
      assert.ok(v.valid, `${id}: ${JSON.stringify(v.findings.slice(0, 3))}`)
    }
    const after = await store.list()
    assert.equal(
      after.map((e) => e.state),
      ids.map(() => 'CONCLUDED')
    )
    assert.ok(after.every((e) => !e.runnable && e.lease === null))
  })

  test('a worker killed mid-case: its case is skipped while the lease lasts, then taken over and concluded', async () => {
    const { t, store, env } = await fresh(kind, 'killed')
    const [id] = (await prepared(store, 1)) as [string]
    // Long enough that the lease the doomed worker last renewed is still live when the case is
    // listed right after the kill, on a loaded machine too.
    const leaseMs = 6000
    const a = spawnNode(WORKER, [t.url, profileFile, 'doomed', String(leaseMs), '600'], env)
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (/ turn /.test(a.out())) {
          clearInterval(poll)
          resolve()
        }
      }, 20)
    })
    a.child.kill('SIGKILL')
    await a.done
    const held = await store.list()
    assert.is(held[0]?.lease?.worker, 'doomed')
    assert.is(held[0]?.runnable, false)
    const b = spawnNode(WORKER, [t.url, profileFile, 'heir', String(leaseMs), '0'], env)
    const rb = await b.done
    assert.is(rb.code, 0, rb.err)
    // Event order, not a duration: the heir's claim came after the end of the lease the store recorded.
    const takenAt = Number(/^(\d+) claimed/m.exec(rb.out)?.[1])
    const leaseEnd = Date.parse(held[0]?.lease?.expires_at ?? '')
    assert.ok(takenAt >= leaseEnd, `taken over at ${takenAt}, before the lease's end ${leaseEnd}`)
    const final = (await store.list())[0]
    assert.is(final?.state, 'CONCLUDED', `${final?.state}/${final?.reason}: ${final?.why}`)
    assert.ok((await store.verify(id)).valid)
  })

  test("a lost lease refuses the stalled worker's appends (LEASE_LOST) and its renewal; release needs the holder", async () => {
    const { store } = await fresh(kind, 'lease')
    const [id] = (await prepared(store, 1)) as [string]
    // Held for a minute (no machine is that slow between two statements), then renewed to the
    // shortest lease and left to run out.
    const held = await store.claim('worker-a', 60_000)
    assert.is(held?.caseId, id)
    assert.is(await store.claim('worker-b', 1000), null, 'a held case is not handed out twice')
    const a = await store.renew(held as Lease, 1000)
    await untilExpired(store, id)
    // Expired and nobody took it over: the holder's token still matches, yet its append is refused.
    const expired = left(
      await recordNote({ store, caseId: id }, { text: 'past its lease', author: 'controller', lease: a })()
    )
    assert.is(expired.code, 'LEASE_LOST', 'an expired lease is lost even before anyone takes the case over')
    const b = await store.claim('worker-b', 5000)
    assert.is(b?.caseId, id, 'an expired lease is taken over')
    const lost = left(
      await recordNote({ store, caseId: id }, { text: 'stalled worker', author: 'controller', lease: a })()
    )
    assert.is(lost.code, 'LEASE_LOST')
    right(
      await recordNote({ store, caseId: id }, { text: 'the new holder', author: 'controller', lease: b as Lease })()
    )
    let renewCode = ''
    try {
      await store.renew(a, 1000)
    } catch (e) {
      renewCode = (e as { failure: { code: string } }).failure.code
    }
    assert.is(renewCode, 'LEASE_LOST')
    assert.is(await store.release({ caseId: id, worker: 'worker-a' }), false)
    assert.is(await store.release({ caseId: id, worker: 'worker-b' }), true)
    assert.is((await store.list())[0]?.lease, null)
  })

  if (kind === 'mariadb') {
    test.after(async () => {
      await research.close()
      for (const s of opened) await s.close()
      for (const t of made) await t.drop().catch(() => undefined)
      await maria.stop()
    })
  }
  test.run()
}
