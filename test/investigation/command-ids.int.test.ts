/**
 * Writers refuse instead of acknowledging: a command id resubmitted with another payload is
 * COMMAND_ID_CONFLICT (one after the other, and racing), the same payload returns the recorded
 * outcome; an id source that repeats an event id is refused before anything is written. On a
 * directory, PostgreSQL and a private MariaDB.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../../src/fp.js'
import { verifyAt } from '../../src/fp.js'
import type { CaseAt } from '../../src/adapters/case-store/store.js'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import type { Env } from '../../src/adapters/env.js'
import { addAttachment, recordNote, topUpBudget } from '../../src/fp.js'
import { openAt } from '../../src/commands/run.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []

const caseIn = async (where: 'directory' | 'postgres' | 'mariadb', id: string): Promise<CaseAt> => {
  if (where === 'directory') {
    const dir = path.join(tempDir('ids'), id)
    right(await initCase({ dir, caseId: id })())
    return dir
  }
  const t = where === 'postgres' ? await postgresStore('ids') : await maria.store('ids')
  made.push(t)
  await migrateStore(t.url, { environment: t.environment })
  const store = await openSqlStore(t.url, { environment: t.environment })
  opened.push(store)
  await store.create(id, { caseId: id })
  return { store, caseId: id }
}

const generation = async (at: CaseAt): Promise<number> => (await openAt(at)).cursor.seq

for (const where of ['directory', 'postgres', 'mariadb'] as const) {
  const test = suite(`command ids on a ${where} case`)

  test('the same id with another payload is COMMAND_ID_CONFLICT; with the same payload the recorded outcome', async () => {
    const at = await caseIn(where, 'case-ids')
    const first = right(await recordNote(at, { text: 'the creature despawns', commandId: 'note-1' })())
    assert.is(first.status, 'appended')
    const again = right(await recordNote(at, { text: 'the creature despawns', commandId: 'note-1' })())
    assert.is(again.status, 'duplicate')
    assert.equal(again.receipt, first.receipt)
    const other = left(await recordNote(at, { text: 'something else', commandId: 'note-1' })())
    assert.is(other.code, 'COMMAND_ID_CONFLICT')
    assert.is(
      left(await recordNote(at, { text: 'the creature despawns', format: 'markdown', commandId: 'note-1' })()).code,
      'COMMAND_ID_CONFLICT'
    )
    assert.is(
      left(await recordNote(at, { text: 'the creature despawns', author: 'controller', commandId: 'note-1' })()).code,
      'COMMAND_ID_CONFLICT'
    )
    assert.is(
      left(await addAttachment(at, { name: 'log.txt', bytes: Buffer.from('x'), commandId: 'note-1' })()).code,
      'COMMAND_ID_CONFLICT'
    )
    assert.is(
      left(await topUpBudget(at, { amount: 5, reason: 'more', commandId: 'note-1' })()).code,
      'COMMAND_ID_CONFLICT'
    )
    assert.is(await generation(at), first.generation, 'nothing was written')
  })

  test('racing writers with one id and different payloads: one is recorded, every other gets COMMAND_ID_CONFLICT (never "already recorded")', async () => {
    const at = await caseIn(where, 'case-race-ids')
    let conflicts = 0
    for (let round = 0; round < 5; round++) {
      const texts = ['a', 'b', 'c', 'd'].map((x) => `note ${x} of round ${round}`)
      const results = await Promise.all(texts.map((text) => recordNote(at, { text, commandId: `race-${round}` })()))
      const appended = results.filter((r) => E.isRight(r) && r.right.status === 'appended')
      assert.is(appended.length, 1, JSON.stringify(results))
      for (const r of results) {
        if (E.isRight(r)) {
          assert.is(r.right.status, 'appended', 'another payload is never acknowledged as recorded')
          continue
        }
        assert.ok(['COMMAND_ID_CONFLICT', 'CASE_LOCKED'].includes(r.left.code), r.left.code)
        if (r.left.code === 'COMMAND_ID_CONFLICT') conflicts++
      }
    }
    assert.ok(conflicts >= 5, `${conflicts} conflicts`)
    assert.ok(right(await verifyAt(at)()).valid)
  })

  test('an id source that repeats an event id is refused (EVENT_ID_DUPLICATE) before anything is written', async () => {
    const at = await caseIn(where, 'case-clock')
    const stuck: Env = { now: () => new Date(), newId: () => 'always-the-same' }
    right(await recordNote(at, { text: 'first', env: stuck, commandId: 'n1' })())
    const before = await generation(at)
    const f = left(await recordNote(at, { text: 'second', env: stuck, commandId: 'n2' })())
    assert.is(f.code, 'EVENT_ID_DUPLICATE')
    assert.is(await generation(at), before)
    const v = right(await verifyAt(at)())
    assert.ok(v.valid, JSON.stringify(v.findings))
  })

  // Each suite closes and drops the stores it made; the last one also stops its MariaDB.
  test.after(async () => {
    for (const s of opened.splice(0)) await s.close()
    for (const t of made.splice(0)) await t.drop()
    if (where === 'mariadb') await maria.stop()
  })
  test.run()
}
