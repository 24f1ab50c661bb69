/**
 * bench/fleet: cases concluded per minute by one worker with 1, 2 and 4 slots on the machine's
 * PostgreSQL, with a model behind a local OpenAI-compatible endpoint that answers in 300 ms
 * (the real client, the real store, real research on the SQLite fixture world). Each case is a
 * whole investigation: interpretation, a database query, a hypothesis, a conclusion. The reference
 * is one slot in the same run; target: 4 slots conclude at least 3x the cases per minute of one
 * (the model, not the store, is the bottleneck).
 *
 *   node dist/bench/fleet.js [--cases N] [--delay-ms MS]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import pg from 'pg'
import * as E from 'fp-ts/lib/Either.js'
import { migrateStore, openSqlStore } from '../src/adapters/sql-store/sql-store.js'
import { loadProfile } from '../src/fp.js'
import { fixedEnv } from '../src/adapters/env.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { enrichmentConfig } from '../src/commands/prepare.js'
import { prepareRevision } from '../src/fp.js'
import { settingsOf } from '../src/investigation/settings.js'
import { work } from '../src/investigation/worker.js'
import { httpModel } from '../src/investigation/http-model.js'
import { writeWorld } from '../test/helpers/investigation.js'
import { startModelEndpoint } from '../test/helpers/model-endpoint.js'
import { machine, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  cases: { type: 'string', default: '16' },
  'delay-ms': { type: 'string', default: '300' }
})
const CASES = Number(values.cases)
const DELAY = Number(values['delay-ms'])
const ADMIN = process.env['VBA_TEST_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}
const admin = async (sql: string): Promise<void> => {
  const c = new pg.Client({ connectionString: ADMIN })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-fleet-'))
const profile = must(await loadProfile(writeWorld(scratch))())
const research = createProjectResearch(profile)
const settings = must(settingsOf(profile))
const endpoint = await startModelEndpoint(() => ({ kind: 'answer', delayMs: DELAY }))

const run = async (
  slots: number
): Promise<{ perMinute: number; seconds: number; concluded: number; turns: number }> => {
  const db = `vba_bench_fleet_${process.pid}_${slots}`
  await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
  await admin(`CREATE DATABASE ${db}`)
  const u = new URL(ADMIN)
  u.pathname = `/${db}`
  await migrateStore(u.toString())
  const store = await openSqlStore(u.toString(), { poolSize: 4 + slots })
  try {
    for (let i = 0; i < CASES; i++) {
      const id = `case-${String(i).padStart(3, '0')}`
      const env = fixedEnv(`2026-11-30T10:00:${String(i % 60).padStart(2, '0')}.000Z`, id)
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
    }
    const t0 = process.hrtime.bigint()
    const summary = await work({
      store,
      model: httpModel({ url: endpoint.url, model: 'bench' }),
      research,
      settings,
      worker: `bench-${slots}`,
      concurrency: slots,
      leaseMs: 60_000,
      pollMs: 20,
      untilIdle: true
    })
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9
    if (summary.concluded !== CASES)
      throw new Error(`only ${summary.concluded} of ${CASES} concluded: ${JSON.stringify(summary)}`)
    return {
      perMinute: (summary.concluded / seconds) * 60,
      seconds,
      concluded: summary.concluded,
      turns: summary.turns
    }
  } finally {
    await store.close()
    await admin(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`)
  }
}

try {
  console.log(`bench/fleet: ${CASES} cases per run, a model answering in ${DELAY} ms, PostgreSQL store; ${machine()}`)
  const rows: Array<{ slots: number; r: Awaited<ReturnType<typeof run>> }> = []
  for (const slots of [1, 2, 4]) rows.push({ slots, r: await run(slots) })
  const base = rows[0]?.r.perMinute ?? NaN
  console.log('| slots | cases | model turns | seconds | cases per minute | ratio to 1 slot |')
  console.log('| --- | --- | --- | --- | --- | --- |')
  for (const { slots, r } of rows)
    console.log(
      `| ${slots} | ${r.concluded} | ${r.turns} | ${r.seconds.toFixed(1)} | ${r.perMinute.toFixed(1)} | ${(r.perMinute / base).toFixed(2)}x |`
    )
  const four = rows.find((x) => x.slots === 4)?.r.perMinute ?? 0
  console.log(`target 4 slots >= 3x one slot: ${four / base >= 3 ? 'met' : 'NOT met'} (${(four / base).toFixed(2)}x)`)
} finally {
  await endpoint.close()
  await research.close()
  rmSync(scratch, { recursive: true, force: true })
}
