import { attempt } from '../../src/failures/error.js'
/**
 * The SQL store's contract on real servers: the machine's PostgreSQL (a database of its own) and a
 * private MariaDB (a password-protected store user). The same investigation written through a
 * store and into a directory gives the same bag, the same verify report and the same replay; a
 * case moves directory → PostgreSQL → MariaDB → directory byte for byte; appends keep every rule
 * of the directory store; tampered rows are findings; the queue hands out leases.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { exportCase } from '../../src/fp.js'
import { withVerifiedPackage } from '../../src/adapters/bagit/import.js'
import { importCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { appendCommand } from '../../src/adapters/case-store/append.js'
import { objectRefOf } from '../../src/adapters/case-store/objects.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { recordNote } from '../../src/fp.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { sampleCase } from '../helpers/case.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const maria = await mariadbServer()
const stores: TestStore[] = []
const opened: SqlStore[] = []
const fresh = async (kind: 'postgres' | 'mariadb', tag: string): Promise<{ t: TestStore; store: SqlStore }> => {
  const t = kind === 'postgres' ? await postgresStore(tag) : await maria.store(tag)
  stores.push(t)
  await migrateStore(t.url, { environment: t.environment })
  const store = await openSqlStore(t.url, { environment: t.environment })
  opened.push(store)
  return { t, store }
}
const rejects = async (
  p: Promise<unknown>
): Promise<{ code: string; message: string; data?: Record<string, unknown> }> => {
  try {
    await p
  } catch (e) {
    return (e as { failure: { code: string; message: string; data?: Record<string, unknown> } }).failure
  }
  throw new Error('expected a rejection')
}
const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')
const json = (v: unknown): string => right(canonicalJson(v))

// The reference: the deterministic investigation written into a directory, and its bag.
const world = tempDir('sql-world')
const refDir = path.join(tempDir('sql-ref'), 'case')
await writeInvestigation(refDir, world)
const refTar = path.join(tempDir('sql-ref-tar'), 'case.tar')
right(await exportCase(refDir, refTar)())
const refVerify = right(await verifyCase(refDir)())
const refReplay = right(await replayCase(refDir, defaultProjections())())

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`SQL store on ${kind}`)

  test('a store is refused until migrated; migrating twice applies nothing the second time', async () => {
    const t = kind === 'postgres' ? await postgresStore('schema') : await maria.store('schema')
    stores.push(t)
    const before = await rejects(openSqlStore(t.url, { environment: t.environment }))
    assert.is(before.code, 'STORE_SCHEMA_OUTDATED')
    assert.match(before.message, 'vba store migrate')
    assert.equal((await migrateStore(t.url, { environment: t.environment })).applied, [
      '0001_case_store',
      '0002_model_columns',
      '0003_claim_and_page_indexes'
    ])
    assert.equal((await migrateStore(t.url, { environment: t.environment })).applied, [])
    const s = await openSqlStore(t.url, { environment: t.environment })
    assert.equal(await s.list(), [])
    await s.close()
  })

  test('an investigation written through the store is the one written in a directory: same bag bytes, same verify report, same replay', async () => {
    const { store } = await fresh(kind, 'same')
    await writeInvestigation({ store, caseId: 'case-investigation' }, tempDir('sql-world-2'))
    const tarFile = path.join(tempDir('sql-export'), 'case.tar')
    const r = right(await exportCase({ store, caseId: 'case-investigation' }, tarFile)())
    assert.is(r.archive_sha256, sha(refTar))
    assert.is(sha(tarFile), sha(refTar))
    const v = await store.verify('case-investigation')
    assert.ok(v.valid, JSON.stringify(v.findings))
    assert.equal({ ...v }, { ...refVerify })
    const replay = await store.replay('case-investigation', defaultProjections())
    assert.is(json({ ...replay, notices: [] }), json({ ...refReplay, notices: [] }))
    const list = await store.list()
    assert.is(list.length, 1)
    assert.is(list[0]?.state, 'CONCLUDED')
    assert.is(list[0]?.runnable, false)
    assert.is(list[0]?.why, 'concluded')
  })

  test("appends keep the directory store's rules: idempotent ids, generation conflicts, rule violations and missing objects write nothing", async () => {
    const { store } = await fresh(kind, 'append')
    const env = fixedEnv()
    await store.create('case-a', { caseId: 'case-a', env })
    const at = { store, caseId: 'case-a' }
    const first = right(await recordNote(at, { text: 'first', commandId: 'note-1', env })())
    assert.is(first.status, 'appended')
    const again = right(await recordNote(at, { text: 'first', commandId: 'note-1', env })())
    assert.is(again.status, 'duplicate')
    assert.equal(again.receipt, first.receipt)
    assert.is(left(await recordNote(at, { text: 'late', expectedGeneration: 0, env })()).code, 'GENERATION_CONFLICT')
    const h = await store.open('case-a')
    assert.is(
      left(
        await attempt(
          appendCommand(
            h,
            {
              commandId: 'note-1',
              expectedGeneration: 1,
              events: [{ type: 'NoteRecorded', actor: 'operator', data: { text: 'other text', format: 'plain' } }]
            },
            { env }
          )
        )
      ).code,
      'COMMAND_ID_CONFLICT'
    )
    const forged = left(
      await attempt(
        appendCommand(
          h,
          {
            commandId: 'forged',
            expectedGeneration: 1,
            events: [
              {
                type: 'ConclusionRecorded',
                actor: 'model',
                data: { summary: 'x', hypotheses: ['H1'], evidence: ['E1'] }
              }
            ]
          },
          { env }
        )
      )
    )
    assert.is(forged.code, 'RULE_VIOLATION')
    const bytes = Buffer.from('a log line\n')
    const missing = left(
      await attempt(
        appendCommand(
          h,
          {
            commandId: 'att',
            expectedGeneration: 1,
            events: [
              { type: 'AttachmentAdded', actor: 'operator', data: { name: 'x.log', object: objectRefOf(bytes) } }
            ]
          },
          { env }
        )
      )
    )
    assert.is(missing.code, 'OBJECT_MISSING')
    right(
      await attempt(
        appendCommand(
          h,
          {
            commandId: 'att',
            expectedGeneration: 1,
            events: [
              { type: 'AttachmentAdded', actor: 'operator', data: { name: 'x.log', object: objectRefOf(bytes) } }
            ],
            objects: [bytes]
          },
          { env }
        )
      )
    )
    const v = await store.verify('case-a')
    assert.ok(v.valid)
    assert.is(v.generation, 2)
    assert.is(v.objects, 1)
    assert.equal(await store.readObject('case-a', objectRefOf(bytes)), bytes)
    // A handle that has not seen the other writer's events catches up inside the append.
    const stale = await store.open('case-a')
    right(await recordNote(at, { text: 'third', env })())
    right(
      await attempt(
        appendCommand(
          stale,
          {
            commandId: 'late-note',
            expectedGeneration: 3,
            events: [{ type: 'NoteRecorded', actor: 'operator', data: { text: 'fourth', format: 'plain' } }]
          },
          { env }
        )
      )
    )
    assert.is(stale.cursor.seq, 4)
    assert.is(await rejects(store.create('case-a', { caseId: 'case-a' })).then((f) => f.code), 'CASE_EXISTS')
    assert.is(await rejects(store.open('case-none')).then((f) => f.code), 'CASE_NOT_FOUND')
  })

  test('a tampered row is a finding: verify names it, open refuses the case, export refuses to bag it', async () => {
    const { store } = await fresh(kind, 'tamper')
    const dir = path.join(tempDir('sql-sample'), 'case')
    await sampleCase(dir)
    await store.importDirectory(dir)
    const row = (await store.knex('vba_events').where({ case_id: 'case-sample', seq: 1 }).first()) as { line: Buffer }
    const line = Buffer.from(row.line).toString('utf8').replace('report received', 'report RECEIVED')
    await store
      .knex('vba_events')
      .where({ case_id: 'case-sample', seq: 1 })
      .update({ line: Buffer.from(line) })
    const v = await store.verify('case-sample')
    assert.not.ok(v.valid)
    assert.ok(
      v.findings.some((f) => f.code === 'EVENT_HASH_MISMATCH' && f.seq === 1),
      JSON.stringify(v.findings)
    )
    assert.is((await rejects(store.open('case-sample'))).code, 'CASE_CORRUPT')
    assert.is(
      left(await exportCase({ store, caseId: 'case-sample' }, path.join(tempDir('sql-x'), 'x.tar'))()).code,
      'CASE_CORRUPT'
    )
    // A deleted row is a gap; a changed object is a digest mismatch.
    await store.knex('vba_events').where({ case_id: 'case-sample', seq: 3 }).delete()
    const gap = await store.verify('case-sample')
    assert.ok(
      gap.findings.some((f) => f.code === 'SEQ_GAP' || f.code === 'CHAIN_BROKEN'),
      JSON.stringify(gap.findings.map((f) => f.code))
    )
    await store.knex('vba_objects').update({ bytes: Buffer.from('changed') })
    assert.ok((await store.verify('case-sample')).findings.some((f) => f.code === 'OBJECT_DIGEST_MISMATCH'))
  })

  test('import refuses what does not verify (a tampered bag) and writes nothing', async () => {
    const { store } = await fresh(kind, 'refuse')
    const bagDir = path.join(tempDir('sql-bagdir'), 'bag')
    right(await exportCase(refDir, bagDir, { format: 'dir' })())
    const log = path.join(bagDir, 'data', 'events.jsonl')
    const { writeFileSync } = await import('node:fs')
    writeFileSync(log, readFileSync(log, 'utf8').replace('wolpertinger', 'Wolpertinger'))
    const f = await rejects(withVerifiedPackage(bagDir, (d) => store.importDirectory(d)))
    assert.is(f.code, 'BAG_INVALID')
    assert.equal(await store.list(), [])
  })

  test.run()
}

const moved = suite('a case moved directory → PostgreSQL → MariaDB → directory')

moved('every hop gives the same archive bytes, and the last directory is byte-identical to the first', async () => {
  const pgStore = await fresh('postgres', 'hop')
  const mStore = await fresh('mariadb', 'hop')
  const id = await withVerifiedPackage(refTar, (d) => pgStore.store.importDirectory(d))
  assert.equal(id, { case_id: 'case-investigation', generation: refVerify.generation })
  const fromPg = path.join(tempDir('hop-pg'), 'case.tar')
  right(await exportCase({ store: pgStore.store, caseId: 'case-investigation' }, fromPg)())
  assert.is(sha(fromPg), sha(refTar))
  await withVerifiedPackage(fromPg, (d) => mStore.store.importDirectory(d))
  const fromMaria = path.join(tempDir('hop-maria'), 'case.tar')
  right(await exportCase({ store: mStore.store, caseId: 'case-investigation' }, fromMaria)())
  assert.is(sha(fromMaria), sha(refTar))
  const back = path.join(tempDir('hop-back'), 'case')
  right(await importCase(fromMaria, back)())
  for (const f of ['case.json', 'events.jsonl', 'HEAD'])
    assert.ok(readFileSync(path.join(back, f)).equals(readFileSync(path.join(refDir, f))), f)
  const again = path.join(tempDir('hop-again'), 'case.tar')
  right(await exportCase(back, again)())
  assert.is(sha(again), sha(refTar))
})

moved.after(async () => {
  for (const s of opened) await s.close()
  for (const t of stores) await t.drop().catch(() => undefined)
  await maria.stop()
})
moved.run()
