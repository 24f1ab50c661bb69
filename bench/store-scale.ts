/**
 * bench/store-scale: how a claim and a page of the queue listing take as the SQL store grows. A
 * store gets 4 real prepared cases (through the library, on the SQLite fixture world), then copies
 * of the first one's queue row (scripts/lib/queue-rows.ts, one INSERT ... SELECT per 100,000 rows;
 * every other copy CONCLUDED, the rest NOT_STARTED: a backlog of N/2 runnable rows behind the real
 * ones) up to N = 10^4, 10^5 and 10^6 rows. At each N it times (median of --samples):
 *
 *   claim        store.claim (the real case updated longest ago) then release
 *   page         store.page({ limit: 100, counts: false }): the first page
 *   page mid     the page after the copy in the middle (keyset: `case_id > ?`)
 *   page state   the first page of CONCLUDED cases (the (state, case_id) index)
 *   counts       the counts per state and the runnable count (an aggregate, no declaration read)
 *
 * and prints each against the same operation at N = 10^4 (target: claim and page at most 2x), with
 * the plans' shapes (PostgreSQL: the node chain of EXPLAIN; MariaDB: the index and Extra). On the
 * machine's PostgreSQL (a database of its own) and a private MariaDB (512 MiB buffer pool).
 *
 *   node dist/bench/store-scale.js [--quick] [--samples N] [--no-mariadb]
 *     --quick: stop at 10^5
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { migrateStore, openSqlStore, type SqlStore } from '../src/adapters/sql-store/sql-store.js'
import { claimCandidateSql } from '../src/adapters/sql-store/queue.js'
import { pageSql } from '../src/adapters/sql-store/queue-list.js'
import { mysql, postgres } from '../src/adapters/sql-store/dialect.js'
import { loadProfile, prepareRevision } from '../src/fp.js'
import { fixedEnv } from '../src/adapters/env.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { enrichmentConfig } from '../src/commands/prepare.js'
import { must } from '../src/failures/error.js'
import { startMariaDb } from '../scripts/lib/mariadb-instance.js'
import { copyQueueRows } from '../scripts/lib/queue-rows.js'
import { writeWorld } from '../test/helpers/investigation.js'
import { machine, median } from './lib.js'

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    samples: { type: 'string', default: '25' },
    'no-mariadb': { type: 'boolean', default: false }
  }
})
const SIZES = values.quick === true ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
const SAMPLES = Number(values.samples)
const REAL = 4
const ADMIN = process.env['VBA_TEST_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const scratch = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-scale-'))
const profile = must(await loadProfile(writeWorld(scratch))())
const research = createProjectResearch(profile)

const admin = async (sql: string): Promise<void> => {
  const c = new pg.Client({ connectionString: ADMIN })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

const prepareReal = async (store: SqlStore): Promise<string[]> => {
  const ids: string[] = []
  for (let i = 0; i < REAL; i++) {
    const id = `case-real-${i}`
    const env = fixedEnv(`2026-11-30T10:0${i}:00.000Z`, id)
    await store.create(id, { caseId: id, env })
    must(
      await prepareRevision(
        { store, caseId: id },
        research,
        must(enrichmentConfig(profile)),
        { report: `Quest 11117 cannot be completed (report ${i}).`, entities: [{ type: 'quest', id: 11117 }] },
        { env }
      )()
    )
    ids.push(id)
  }
  return ids
}

const ms = async (f: () => Promise<unknown>): Promise<number> => {
  const t0 = process.hrtime.bigint()
  await f()
  return Number(process.hrtime.bigint() - t0) / 1e6
}

const sampled = async (n: number, f: () => Promise<unknown>): Promise<number> => {
  await f()
  const xs: number[] = []
  for (let i = 0; i < n; i++) xs.push(await ms(f))
  return median(xs)
}

/** The node chain of a PostgreSQL plan (with the index a scan reads), or MariaDB's index and Extra per table. */
const planShape = async (store: SqlStore, sql: string, bindings: readonly unknown[]): Promise<string> => {
  if (store.dialect === 'postgres') {
    const raw = await store.knex.raw(`EXPLAIN (FORMAT JSON) ${sql}`, bindings as never)
    const plan = postgres.rows<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(raw)[0]?.['QUERY PLAN'][0]
      ?.Plan as Record<string, unknown>
    const walk = (p: Record<string, unknown>): string[] => [
      `${String(p['Node Type'])}${p['Index Name'] === undefined ? '' : ` ${String(p['Index Name'])}`}`,
      ...((p['Plans'] as Array<Record<string, unknown>> | undefined) ?? []).flatMap(walk)
    ]
    return walk(plan).join(' > ')
  }
  const rows = mysql.rows<Record<string, unknown>>(await store.knex.raw(`EXPLAIN ${sql}`, bindings as never))
  return rows.map((r) => `${String(r['table'])}: ${String(r['key'])} (${String(r['Extra'] ?? '')})`).join('; ')
}

interface Figures {
  readonly n: number
  readonly claim: number
  readonly page: number
  readonly mid: number
  readonly state: number
  readonly counts: number
}

const measure = async (store: SqlStore, n: number): Promise<{ f: Figures; plans: string[] }> => {
  await store.knex.raw(store.dialect === 'postgres' ? 'ANALYZE vba_cases' : 'ANALYZE TABLE vba_cases')
  const claim = await sampled(SAMPLES, async () => {
    const lease = await store.claim('bench', 60_000)
    if (lease === null) throw new Error('nothing claimed')
    await store.release(lease)
  })
  const midKey = `copy-${String(Math.floor(n / 2)).padStart(7, '0')}`
  const page = await sampled(SAMPLES, () => store.page({ limit: 100, counts: false }))
  const mid = await sampled(SAMPLES, () => store.page({ limit: 100, after: midKey, counts: false }))
  const state = await sampled(SAMPLES, () => store.page({ limit: 100, states: ['CONCLUDED'], counts: false }))
  const counts = await sampled(Math.max(3, Math.floor(SAMPLES / 5)), () => store.page({ limit: 1 }))
  const now = Date.now()
  const d = store.dialect === 'postgres' ? postgres : mysql
  const mp = pageSql({ after: midKey, states: null }, 101)
  const sp = pageSql({ after: null, states: ['CONCLUDED'] }, 101)
  const plans = [
    `claim: ${await planShape(store, claimCandidateSql(d, 0), [now, now])}`,
    `page mid: ${await planShape(store, mp.sql, mp.bindings)}`,
    `page state: ${await planShape(store, sp.sql, sp.bindings)}`
  ]
  return { f: { n, claim, page, mid, state, counts }, plans }
}

const run = async (label: string, url: string, env: Record<string, string>): Promise<void> => {
  await migrateStore(url, { environment: env })
  const store = await openSqlStore(url, { environment: env })
  try {
    const real = await prepareReal(store)
    const figures: Figures[] = []
    let have = REAL
    for (const n of SIZES) {
      const t0 = Date.now()
      await copyQueueRows(store.knex, real[0] as string, n - have, {
        prefix: 'copy-',
        first: have,
        fromMs: Date.UTC(2026, 11, 1) + have,
        set: {
          state: "CASE WHEN MOD(g.i, 2) = 0 THEN 'CONCLUDED' ELSE c.state END",
          claimable: 'CASE WHEN MOD(g.i, 2) = 0 THEN 0 ELSE c.claimable END'
        }
      })
      const filled = Date.now() - t0
      have = n
      const { f, plans } = await measure(store, n)
      figures.push(f)
      const ref = figures[0] as Figures
      const x = (a: number, b: number): string => `${a.toFixed(2)} ms (${(a / b).toFixed(2)}x)`
      console.log(
        `  ${label} N=${n.toLocaleString('en')} (filled in ${(filled / 1000).toFixed(1)} s): claim ${x(f.claim, ref.claim)}, page ${x(f.page, ref.page)}, page mid ${x(f.mid, ref.mid)}, page state ${x(f.state, ref.state)}, counts ${x(f.counts, ref.counts)}`
      )
      for (const p of plans) console.log(`    plan ${p}`)
    }
    const last = figures[figures.length - 1] as Figures
    const ref = figures[0] as Figures
    const ok = last.claim <= 2 * ref.claim && last.page <= 2 * ref.page && last.mid <= 2 * ref.mid
    console.log(
      `  ${label}: at N=${last.n.toLocaleString('en')} claim ${(last.claim / ref.claim).toFixed(2)}x, page ${(last.page / ref.page).toFixed(2)}x, page mid ${(last.mid / ref.mid).toFixed(2)}x of N=10,000: ${ok ? 'within 2x' : 'OVER 2x'}`
    )
  } finally {
    await store.close()
  }
}

console.log(
  `bench/store-scale on ${machine()}; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${SAMPLES} samples`
)
const dbName = `vba_bench_scale_${process.pid}`
await admin(`CREATE DATABASE ${dbName}`)
try {
  const u = new URL(ADMIN)
  u.pathname = `/${dbName}`
  await run('postgresql', u.toString(), {})
} finally {
  await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
}
if (values['no-mariadb'] !== true) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-scale-mariadb-'))
  const server = await startMariaDb({ dir: path.join(dir, 'server'), args: ['--innodb-buffer-pool-size=512M'] })
  try {
    server.sql(
      "CREATE DATABASE bench; CREATE USER 'bench'@'%' IDENTIFIED BY 'bench-pw'; GRANT ALL ON bench.* TO 'bench'@'%';"
    )
    await run('mariadb', `mysql://bench@127.0.0.1:${server.port}/bench?password_env=VBA_BENCH_SCALE_PW`, {
      VBA_BENCH_SCALE_PW: 'bench-pw'
    })
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
console.log(
  `  load after: ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`
)
rmSync(scratch, { recursive: true, force: true })
