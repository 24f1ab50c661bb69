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
 * each sampled alternately with the same operation on a second store held at N = 10^4 (so both
 * see the same load of a shared machine), and prints the ratio (target: claim and pages at most
 * 2x), with the plans' shapes (PostgreSQL: the node chain of EXPLAIN; MariaDB: the index and Extra). On the
 * machine's PostgreSQL (a database of its own) and a private MariaDB (512 MiB buffer pool).
 *
 *   node dist/bench/store-scale.js [--quick] [--samples N] [--no-mariadb]
 *     --quick: stop at 10^5
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
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
import { machine, median, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  quick: { type: 'boolean', default: false },
  samples: { type: 'string', default: '25' },
  'no-mariadb': { type: 'boolean', default: false }
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
  readonly claim: readonly [number, number]
  readonly page: readonly [number, number]
  readonly mid: readonly [number, number]
  readonly state: readonly [number, number]
  readonly counts: readonly [number, number]
}

/**
 * Medians of `f` on the reference store and on the big one, sampled alternately (ref, big, ref,
 * big, …), so both see the same load of a shared machine.
 */
const paired = async (
  n: number,
  ref: SqlStore,
  big: SqlStore,
  f: (s: SqlStore, size: 'ref' | 'big') => Promise<unknown>
): Promise<readonly [number, number]> => {
  await f(ref, 'ref')
  await f(big, 'big')
  const a: number[] = []
  const b: number[] = []
  for (let i = 0; i < n; i++) {
    a.push(await ms(() => f(ref, 'ref')))
    b.push(await ms(() => f(big, 'big')))
  }
  return [median(a), median(b)]
}

const analyze = async (store: SqlStore): Promise<void> => {
  await store.knex.raw(store.dialect === 'postgres' ? 'VACUUM ANALYZE vba_cases' : 'ANALYZE TABLE vba_cases')
}

const mid = (n: number): string => `copy-${String(Math.floor(n / 2)).padStart(7, '0')}`

const measure = async (ref: SqlStore, big: SqlStore, n: number): Promise<{ f: Figures; plans: string[] }> => {
  const size = (s: 'ref' | 'big'): number => (s === 'ref' ? (SIZES[0] as number) : n)
  const claim = await paired(SAMPLES, ref, big, async (s) => {
    const lease = await s.claim('bench', 60_000)
    if (lease === null) throw new Error('nothing claimed')
    await s.release(lease)
  })
  const page = await paired(SAMPLES, ref, big, (s) => s.page({ limit: 100, counts: false }))
  const midPage = await paired(SAMPLES, ref, big, (s, w) => s.page({ limit: 100, after: mid(size(w)), counts: false }))
  const state = await paired(SAMPLES, ref, big, (s) => s.page({ limit: 100, states: ['CONCLUDED'], counts: false }))
  const counts = await paired(Math.max(3, Math.floor(SAMPLES / 5)), ref, big, (s) => s.page({ limit: 1 }))
  const now = Date.now()
  const d = big.dialect === 'postgres' ? postgres : mysql
  const mp = pageSql({ after: mid(n), states: null }, 101)
  const sp = pageSql({ after: null, states: ['CONCLUDED'] }, 101)
  const plans = [
    `claim: ${await planShape(big, claimCandidateSql(d, 0), [now, now])}`,
    `page mid: ${await planShape(big, mp.sql, mp.bindings)}`,
    `page state: ${await planShape(big, sp.sql, sp.bindings)}`
  ]
  return { f: { n, claim, page, mid: midPage, state, counts }, plans }
}

/** Grows `store` from `have` rows to `n` (copies of `source`: every other one CONCLUDED), then analyzes it. */
const grow = async (store: SqlStore, source: string, have: number, n: number): Promise<number> => {
  const t0 = Date.now()
  await copyQueueRows(store.knex, source, n - have, {
    prefix: 'copy-',
    first: have,
    fromMs: Date.UTC(2026, 11, 1) + have,
    set: {
      state: "CASE WHEN MOD(g.i, 2) = 0 THEN 'CONCLUDED' ELSE c.state END",
      claimable: 'CASE WHEN MOD(g.i, 2) = 0 THEN 0 ELSE c.claimable END'
    }
  })
  await analyze(store)
  return Date.now() - t0
}

const ratio = ([r, b]: readonly [number, number]): number => b / r

const run = async (label: string, urls: readonly [string, string], env: Record<string, string>): Promise<void> => {
  const stores: SqlStore[] = []
  for (const url of urls) {
    await migrateStore(url, { environment: env })
    stores.push(await openSqlStore(url, { environment: env }))
  }
  const [ref, big] = stores as [SqlStore, SqlStore]
  try {
    const refReal = await prepareReal(ref)
    const bigReal = await prepareReal(big)
    await grow(ref, refReal[0] as string, REAL, SIZES[0] as number)
    let last: Figures | null = null
    let have = REAL
    for (const n of SIZES) {
      const filled = await grow(big, bigReal[0] as string, have, n)
      have = n
      const { f, plans } = await measure(ref, big, n)
      last = f
      const x = (p: readonly [number, number]): string =>
        `${p[1].toFixed(2)} ms (${ratio(p).toFixed(2)}x of ${p[0].toFixed(2)})`
      console.log(
        `  ${label} N=${n.toLocaleString('en')} (filled and analyzed in ${(filled / 1000).toFixed(1)} s): claim ${x(f.claim)}, page ${x(f.page)}, page mid ${x(f.mid)}, page state ${x(f.state)}, counts ${x(f.counts)}`
      )
      for (const p of plans) console.log(`    plan ${p}`)
    }
    if (last === null) return
    const ok = [last.claim, last.page, last.mid, last.state].every((p) => ratio(p) <= 2)
    console.log(
      `  ${label}: at N=${last.n.toLocaleString('en')} claim ${ratio(last.claim).toFixed(2)}x, page ${ratio(last.page).toFixed(2)}x, page mid ${ratio(last.mid).toFixed(2)}x, page state ${ratio(last.state).toFixed(2)}x of N=10,000: ${ok ? 'within 2x' : 'OVER 2x'}`
    )
  } finally {
    for (const s of stores) await s.close()
  }
}

console.log(
  `bench/store-scale on ${machine()}; load ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ${SAMPLES} samples`
)
const dbNames = ['ref', 'big'].map((w) => `vba_bench_scale_${w}_${process.pid}`)
for (const db of dbNames) await admin(`CREATE DATABASE ${db}`)
try {
  const urls = dbNames.map((db) => {
    const u = new URL(ADMIN)
    u.pathname = `/${db}`
    return u.toString()
  })
  await run('postgresql', urls as [string, string], {})
} finally {
  for (const db of dbNames) await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
}
if (values['no-mariadb'] !== true) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-scale-mariadb-'))
  const server = await startMariaDb({ dir: path.join(dir, 'server'), args: ['--innodb-buffer-pool-size=512M'] })
  try {
    server.sql(
      "CREATE DATABASE ref; CREATE DATABASE big; CREATE USER 'bench'@'%' IDENTIFIED BY 'bench-pw'; GRANT ALL ON ref.* TO 'bench'@'%'; GRANT ALL ON big.* TO 'bench'@'%';"
    )
    const url = (db: string): string => `mysql://bench@127.0.0.1:${server.port}/${db}?password_env=VBA_BENCH_SCALE_PW`
    await run('mariadb', [url('ref'), url('big')], { VBA_BENCH_SCALE_PW: 'bench-pw' })
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
