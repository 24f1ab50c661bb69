/**
 * The SQL store's queue as it grows, on the machine's PostgreSQL and a private MariaDB: a store of
 * the schema before 0003 migrates (the claimable flag from its queue columns, the indexes added)
 * and its cases verify and are claimed; the claim's plan walks the claim index with no sort of the
 * backlog (EXPLAIN over thousands of copied rows); two claimers at once get different cases, each
 * holding a lock on its own candidate only (not on the 2,000 runnable rows behind it).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import type { Knex } from 'knex'
import { loadProfile, prepareRevision } from '../../src/fp.js'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { claimCandidateSql } from '../../src/adapters/sql-store/queue.js'
import { mysql, postgres } from '../../src/adapters/sql-store/dialect.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { copyQueueRows } from '../../scripts/lib/queue-rows.js'
import { writeInvestigation, writeWorld } from '../helpers/investigation.js'
import { right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const world = tempDir('scale-world')
const profile = right(await loadProfile(writeWorld(world))())
const research = createProjectResearch(profile)
const concludedDir = path.join(tempDir('scale-concluded'), 'case')
await writeInvestigation(concludedDir, tempDir('scale-world2'))
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

/** `n` prepared, not started cases `case-p00`…, created a minute apart. */
const prepared = async (store: SqlStore, n: number): Promise<string[]> => {
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const id = `case-p${String(i).padStart(2, '0')}`
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

/** Every node type of a PostgreSQL JSON plan, with the index each scan reads. */
const planNodes = (plan: Record<string, unknown>): string[] => {
  const own = `${String(plan['Node Type'])}${plan['Index Name'] === undefined ? '' : ` ${String(plan['Index Name'])}`}`
  const kids = (plan['Plans'] as Array<Record<string, unknown>> | undefined) ?? []
  return [own, ...kids.flatMap(planNodes)]
}

const rowsOf = <R>(kind: 'postgres' | 'mariadb', raw: unknown): R[] =>
  (kind === 'postgres' ? postgres : mysql).rows<R>(raw)

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`SQL store queue at scale on ${kind}`)
  const dialect = kind === 'postgres' ? postgres : mysql

  test('a store of the schema before 0003 migrates: claimable from its queue columns, indexes added, cases verify and are claimed', async () => {
    const { t, store } = await fresh(kind, 'old')
    await prepared(store, 2)
    await store.importDirectory(concludedDir)
    await store.knex.migrate.down()
    const columns = async (): Promise<string[]> => Object.keys(await store.knex('vba_cases').columnInfo())
    assert.not.ok((await columns()).includes('claimable'), 'rolled back to 0002')
    const r = await migrateStore(t.url, { environment: t.environment })
    assert.equal(r.applied, ['0003_claim_and_page_indexes'])
    const flags = (await store.knex('vba_cases').select('case_id', 'claimable').orderBy('case_id')) as Array<{
      case_id: string
      claimable: unknown
    }>
    assert.equal(
      flags.map((f) => [f.case_id, Number(f.claimable)]),
      [
        ['case-investigation', 0],
        ['case-p00', 1],
        ['case-p01', 1]
      ]
    )
    for (const f of flags) assert.ok((await store.verify(f.case_id)).valid, f.case_id)
    const a = await store.claim('w1', 5000)
    const b = await store.claim('w2', 5000)
    assert.equal([a?.caseId, b?.caseId], ['case-p00', 'case-p01'], 'oldest update first')
    assert.is(await store.claim('w3', 5000), null, 'the concluded case is not claimed')
  })

  test('the claim reads the claim index in its order: no sort of the backlog (EXPLAIN over 20,000 copied rows)', async () => {
    const { store } = await fresh(kind, 'plan')
    const [first] = await prepared(store, 1)
    await copyQueueRows(store.knex, first as string, 20_000, { prefix: 'copy-', fromMs: Date.UTC(2026, 11, 1) })
    await store.knex.raw(kind === 'postgres' ? 'ANALYZE vba_cases' : 'ANALYZE TABLE vba_cases')
    const now = Date.now()
    const sql = claimCandidateSql(dialect, 0)
    if (kind === 'postgres') {
      const plan = rowsOf<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(
        kind,
        await store.knex.raw(`EXPLAIN (FORMAT JSON) ${sql}`, [now, now])
      )[0]?.['QUERY PLAN'][0]?.Plan as Record<string, unknown>
      const nodes = planNodes(plan)
      assert.not.ok(
        nodes.some((n) => n.startsWith('Sort')),
        nodes.join(' > ')
      )
      assert.ok(
        nodes.some((n) => n === 'Index Scan vba_cases_claim'),
        nodes.join(' > ')
      )
      assert.equal(
        nodes.slice(0, 2),
        ['Limit', 'LockRows'],
        'the limit is above the lock: it stops at the first row locked'
      )
    } else {
      const rows = rowsOf<Record<string, unknown>>(kind, await store.knex.raw(`EXPLAIN ${sql}`, [now, now]))
      assert.is(rows.length, 1)
      assert.is(rows[0]?.['key'], 'vba_cases_claim', JSON.stringify(rows))
      assert.not.match(String(rows[0]?.['Extra']), 'filesort', JSON.stringify(rows))
    }
    const lease = await store.claim('w1', 5000)
    assert.is(lease?.caseId, first, 'the prepared case, updated before every copy')
  })

  test('two claimers at once get different candidates, each locking only its own', async () => {
    const { store } = await fresh(kind, 'two')
    const ids = await prepared(store, 3)
    await copyQueueRows(store.knex, ids[0] as string, 2000, { prefix: 'copy-', fromMs: Date.UTC(2026, 11, 1) })
    const sql = claimCandidateSql(dialect, 0)
    const a: Knex.Transaction = await store.knex.transaction()
    const b: Knex.Transaction = await store.knex.transaction()
    try {
      const now = Date.now()
      const ra = rowsOf<{ case_id: string }>(kind, await a.raw(sql, [now, now]))
      const rb = rowsOf<{ case_id: string }>(kind, await b.raw(sql, [now, now]))
      assert.equal([ra.map((r) => r.case_id), rb.map((r) => r.case_id)], [[ids[0]], [ids[1]]])
      if (kind === 'mariadb') {
        const locks = maria.server
          .sql('SELECT trx_rows_locked FROM information_schema.INNODB_TRX;')
          .trim()
          .split('\n')
          .map(Number)
        // InnoDB counts index records: the candidate's entries in the claim index and the primary key.
        assert.is(locks.length, 2)
        assert.ok(
          locks.every((n) => n <= 3),
          `rows locked by each claimer over a backlog of 2,003: ${locks.join(', ')}`
        )
      }
      // A whole claim meanwhile takes the third case.
      assert.is((await store.claim('w3', 5000))?.caseId, ids[2])
    } finally {
      await a.rollback()
      await b.rollback()
    }
  })

  test('pages return every case exactly once while cases change state; counts per state are exact', async () => {
    const { store } = await fresh(kind, 'pages')
    const real = await prepared(store, 3)
    await copyQueueRows(store.knex, real[0] as string, 250, {
      prefix: 'copy-',
      fromMs: Date.UTC(2026, 11, 1),
      set: {
        state: "CASE WHEN MOD(g.i, 5) = 0 THEN 'CONCLUDED' WHEN MOD(g.i, 5) = 1 THEN 'BLOCKED' ELSE c.state END",
        reason: "CASE WHEN MOD(g.i, 5) = 1 THEN 'AWAITING_TEST_FEEDBACK' ELSE c.reason END",
        claimable: 'CASE WHEN MOD(g.i, 5) < 2 THEN 0 ELSE c.claimable END'
      }
    })
    const all = ((await store.knex('vba_cases').select('case_id')) as Array<{ case_id: string }>).map((r) => r.case_id)
    assert.is(all.length, 253)
    const seen: string[] = []
    let after: string | undefined
    let pages = 0
    for (;;) {
      const page = await store.page({ limit: 40, counts: false, ...(after === undefined ? {} : { after }) })
      seen.push(...page.entries.map((e) => e.case_id))
      pages++
      // Meanwhile cases change state (and move to the end of the claim order): seen ones and unseen ones.
      const n = pages * 37
      await store
        .knex('vba_cases')
        .whereIn('case_id', [`copy-${String(n).padStart(7, '0')}`, `copy-${String(250 - n).padStart(7, '0')}`])
        .update({ state: 'CONCLUDED', claimable: 0, updated_ms: Date.now() + pages })
      if (page.next === null) break
      assert.is(page.entries.length, 40, 'a page that names a next one is full')
      after = page.next
    }
    assert.is(pages, 7)
    assert.is(seen.length, new Set(seen).size, 'no case twice')
    assert.equal([...seen].sort(), [...all].sort(), 'every case once')
    // Counts: the aggregate against the states read row by row.
    const lease = await store.claim('w1', 60_000)
    assert.ok(lease !== null)
    const states = ((await store.knex('vba_cases').select('state')) as Array<{ state: string }>).map((r) => r.state)
    const want: Record<string, number> = {}
    for (const st of states) want[st] = (want[st] ?? 0) + 1
    const counts = (await store.page({ limit: 1 })).counts
    assert.equal(counts?.by_state, want)
    assert.is(counts?.total, 253)
    assert.is(
      counts?.runnable,
      (want['NOT_STARTED'] ?? 0) - 1,
      'runnable: NOT_STARTED and prepared, less the leased one'
    )
  })

  test('pages in some states read each state in case-id order; options out of bounds are INVALID_ARGUMENT', async () => {
    const { store } = await fresh(kind, 'states')
    const real = await prepared(store, 1)
    await copyQueueRows(store.knex, real[0] as string, 90, {
      prefix: 'copy-',
      fromMs: Date.UTC(2026, 11, 1),
      set: {
        state: "CASE WHEN MOD(g.i, 3) = 0 THEN 'CONCLUDED' WHEN MOD(g.i, 3) = 1 THEN 'EXHAUSTED' ELSE c.state END",
        claimable: 'CASE WHEN MOD(g.i, 3) < 2 THEN 0 ELSE c.claimable END'
      }
    })
    const read = async (states: Array<'CONCLUDED' | 'EXHAUSTED' | 'NOT_STARTED'>): Promise<string[]> => {
      const out: string[] = []
      let after: string | undefined
      for (;;) {
        const page = await store.page({ limit: 7, states, counts: false, ...(after === undefined ? {} : { after }) })
        assert.ok(page.entries.every((e) => states.includes(e.state as 'CONCLUDED')))
        out.push(...page.entries.map((e) => e.case_id))
        if (page.next === null) return out
        after = page.next
      }
    }
    const ids = (mod: number): string[] =>
      Array.from({ length: 90 }, (_, i) => i)
        .filter((i) => i % 3 === mod)
        .map((i) => `copy-${String(i).padStart(7, '0')}`)
    assert.equal(await read(['CONCLUDED']), ids(0))
    assert.equal(await read(['EXHAUSTED', 'CONCLUDED']), [...ids(0), ...ids(1)].sort())
    assert.equal(await read(['NOT_STARTED']), ['case-p00', ...ids(2)])
    for (const bad of [{ limit: 0 }, { limit: 10_001 }, { states: ['DONE' as 'CONCLUDED'] }, { after: '' }]) {
      let code = ''
      try {
        await store.page(bad)
      } catch (e) {
        code = (e as { failure: { code: string } }).failure.code
      }
      assert.is(code, 'INVALID_ARGUMENT', JSON.stringify(bad))
    }
  })

  test.run()
}

const done = suite('cleanup')
done('stores closed', async () => {
  for (const s of opened) await s.close()
  for (const t of made) await t.drop()
  await maria.stop()
})
done.run()
