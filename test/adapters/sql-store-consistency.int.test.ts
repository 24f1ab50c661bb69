/**
 * The SQL store checks what it stores beside the log (PostgreSQL and a private MariaDB): event
 * rows past the head (a head-only rollback), a planted command row and queue columns that
 * contradict the log are findings of verify; an append on such a case is CASE_CORRUPT, never an
 * internal error; a claim re-derives the queue columns of a case before it trusts them.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { recordNote } from '../../src/fp.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { left, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []

const codes = (r: { findings: ReadonlyArray<{ code: string; severity: string }> }): string[] =>
  r.findings.filter((f) => f.severity === 'error').map((f) => f.code)

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`SQL store consistency on ${kind}`)
  const fresh = async (tag: string): Promise<{ t: TestStore; store: SqlStore }> => {
    const t = kind === 'postgres' ? await postgresStore(tag) : await maria.store(tag)
    made.push(t)
    await migrateStore(t.url, { environment: t.environment })
    const store = await openSqlStore(t.url, { environment: t.environment })
    opened.push(store)
    await writeInvestigation({ store, caseId: 'case-investigation' }, tempDir('consistency-world'))
    return { t, store }
  }
  const at = (store: SqlStore) => ({ store, caseId: 'case-investigation' })

  test('a head-only rollback leaves rows past the head: a finding, and appends are CASE_CORRUPT (exit 1), not INTERNAL_ERROR', async () => {
    const { t, store } = await fresh('beyond')
    assert.ok((await store.verify('case-investigation')).valid)
    const k = store.knex
    const head = (await k('vba_cases').select('generation').where({ case_id: 'case-investigation' }).first()) as {
      generation: number
    }
    const prev = (await k('vba_events')
      .select('hash')
      .where({ case_id: 'case-investigation', seq: Number(head.generation) - 1 })
      .first()) as { hash: string }
    const lines = (await k('vba_events')
      .select('line')
      .where({ case_id: 'case-investigation' })
      .andWhere('seq', '<', Number(head.generation))) as Array<{ line: Buffer }>
    const bytes = lines.reduce((n, l) => n + Buffer.from(l.line).length + 1, 0)
    await k('vba_cases')
      .where({ case_id: 'case-investigation' })
      .update({ generation: Number(head.generation) - 1, head_hash: prev.hash, log_bytes: bytes })
    const report = await store.verify('case-investigation')
    assert.not.ok(report.valid)
    assert.ok(codes(report).includes('STORE_ROWS_BEYOND_HEAD'), JSON.stringify(codes(report)))
    const f = left(await recordNote(at(store), { text: 'after the rollback' })())
    assert.is(f.code, 'CASE_CORRUPT')
    const cli = vba(['case', 'note', 'case-investigation', 'after the rollback', '--store', t.url], {
      env: t.environment
    })
    assert.is(cli.code, 1, cli.stderr)
    assert.match(cli.stderr, 'CASE_CORRUPT')
  })

  test('a planted command row is a finding, and recording that id is CASE_CORRUPT', async () => {
    const { store } = await fresh('planted')
    await store
      .knex('vba_commands')
      .insert({ case_id: 'case-investigation', command_id: 'note-planted', first_seq: 999, last_seq: 999 })
    const report = await store.verify('case-investigation')
    assert.ok(codes(report).includes('STORE_COMMAND_ROWS'), JSON.stringify(codes(report)))
    assert.is(left(await recordNote(at(store), { text: 'x', commandId: 'note-planted' })()).code, 'CASE_CORRUPT')
  })

  test('queue columns that contradict the log: a finding; a claim re-derives them and leases nothing', async () => {
    const { store } = await fresh('queue')
    await store
      .knex('vba_cases')
      .where({ case_id: 'case-investigation' })
      .update({ state: 'INVESTIGATING', reason: null, claimable: 1 })
    const report = await store.verify('case-investigation')
    assert.ok(codes(report).includes('STORE_QUEUE_MISMATCH'), JSON.stringify(codes(report)))
    assert.is(await store.claim('w1', 5000), null, 'a CONCLUDED case is not claimed, whatever its columns say')
    assert.is(
      (await store.list()).find((e) => e.case_id === 'case-investigation')?.state,
      'CONCLUDED',
      'the columns were re-derived from the log'
    )
    assert.ok((await store.verify('case-investigation')).valid)
  })

  // Each suite closes and drops the stores it made; the last one also stops its MariaDB.
  test.after(async () => {
    for (const s of opened.splice(0)) await s.close()
    for (const t of made.splice(0)) await t.drop()
    if (kind === 'mariadb') await maria.stop()
  })
  test.run()
}
