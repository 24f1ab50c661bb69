/**
 * Several writers of one case through the SQL store, in one process: on PostgreSQL their commands
 * go through the one-statement append (src/adapters/sql-store/append-one.ts), on MariaDB through
 * the transaction. Whatever races they lose, the case keeps one valid chain with every command
 * once, each command's events take the ids and dates its environment gave its first plan (a
 * command planned again draws nothing new), and an append under a lost lease writes nothing.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { migrateStore, openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import type { CaseHandle } from '../../src/adapters/case-store/handle.js'
import type { RawCommand } from '../../src/adapters/case-store/append.js'
import type { Env } from '../../src/adapters/env.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []
const fresh = async (kind: 'postgres' | 'mariadb', tag: string): Promise<SqlStore> => {
  const t = kind === 'postgres' ? await postgresStore(tag) : await maria.store(tag)
  made.push(t)
  await migrateStore(t.url, { environment: t.environment })
  const store = await openSqlStore(t.url, { environment: t.environment, lockWaitMs: 60_000 })
  opened.push(store)
  return store
}

const failureOf = async (p: Promise<unknown>): Promise<{ code: string; message: string }> => {
  try {
    await p
  } catch (e) {
    return (e as { failure: { code: string; message: string } }).failure
  }
  throw new Error('expected a rejection')
}

/** One clock for every writer (so none is behind the case), ids counted per writer. */
const clock = (start: string): (() => Date) => {
  let t = Date.parse(start)
  return () => new Date(t++)
}
const writerEnv = (now: () => Date, prefix: string): Env & { readonly drawn: () => number } => {
  let n = 0
  return { now, newId: () => `${prefix}-${String(++n).padStart(4, '0')}`, drawn: () => n }
}

const note = (text: string): RawCommand['events'][number] => ({
  type: 'NoteRecorded',
  actor: 'operator',
  data: { text, format: 'plain' }
})

const WRITERS = 4
const COMMANDS = 25

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`several writers of one case on ${kind}`)

  test('four concurrent writers: one valid chain, every command once, ids drawn once per command', async () => {
    const store = await fresh(kind, 'writers')
    const id = 'case-writers'
    const now = clock('2026-12-03T12:00:00.000Z')
    await store.create(id, { caseId: id, env: { now, newId: () => 'case' } })
    const handles = await Promise.all(Array.from({ length: WRITERS }, () => store.open(id)))
    const envs = handles.map((_, w) => writerEnv(now, `w${w}`))
    let decidedAgain = 0
    await Promise.all(
      handles.map(async (h, w) => {
        const env = envs[w] as Env
        for (let i = 0; i < COMMANDS; i++) {
          const cmd = (x: CaseHandle): RawCommand => ({
            commandId: `w${w}-${i}`,
            expectedGeneration: x.cursor.seq,
            events: [note(`writer ${w}, note ${i}`)]
          })
          const first = cmd(h)
          const out = await store.append(h, first, { env, rebase: cmd })
          assert.is(out.status, 'appended')
          if (out.generation !== first.expectedGeneration + 1) decidedAgain++
        }
      })
    )
    // The writers did meet: some commands were decided again on a case another writer had moved.
    assert.ok(decidedAgain > 0, 'no command met another writer')
    const report = await store.verify(id)
    assert.ok(report.valid, JSON.stringify(report.findings.slice(0, 3)))
    const reread = await store.open(id)
    assert.is(reread.cursor.seq, WRITERS * COMMANDS)
    for (let w = 0; w < WRITERS; w++) {
      for (let i = 0; i < COMMANDS; i++) assert.ok(reread.cursor.commands.has(`w${w}-${i}`), `w${w}-${i}`)
      // Planned again after a lost race, a command replays its first plan's ids: one id per command.
      assert.is(envs[w]?.drawn(), COMMANDS, `writer ${w} drew ${envs[w]?.drawn()} ids for ${COMMANDS} commands`)
    }
    const ids = [...reread.cursor.ids].filter((x) => /^evt-w\d-/.test(x)).sort()
    assert.is(ids.length, WRITERS * COMMANDS)
    assert.is(ids[0], 'evt-w0-0001')
    // A handle left behind by the others catches up and writes on the head they made.
    const behind = handles[0] as CaseHandle
    const out = await store.append(
      behind,
      { commandId: 'after', expectedGeneration: behind.cursor.seq, events: [note('after')] },
      {
        env: envs[0] as Env,
        rebase: (x) => ({ commandId: 'after', expectedGeneration: x.cursor.seq, events: [note('after')] })
      }
    )
    assert.is(out.generation, 1 + WRITERS * COMMANDS)
    assert.ok((await store.verify(id)).valid)
  })

  test('concurrent appends through one handle are all appended, in order, as in a directory', async () => {
    const store = await fresh(kind, 'onehandle')
    const id = 'case-one-handle'
    await store.create(id, { caseId: id })
    const h = await store.open(id)
    const cmd =
      (commandId: string) =>
      (x: CaseHandle): RawCommand => ({ commandId, expectedGeneration: x.cursor.seq, events: [note(commandId)] })
    // Each planned on the handle as it is when the call is made; the later ones decided again.
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => store.append(h, cmd(`c${i}`)(h), { rebase: cmd(`c${i}`) }))
    )
    const failed = outcomes.flatMap((o) =>
      o.status === 'rejected' ? [(o.reason as { failure?: { code: string } }).failure?.code ?? String(o.reason)] : []
    )
    assert.equal(failed, [], 'no append failed (a false CASE_CORRUPT was)')
    const generations = outcomes.map((o) => (o.status === 'fulfilled' ? o.value.generation : -1))
    assert.equal(generations, [1, 2, 3, 4, 5, 6, 7, 8])
    assert.is(h.cursor.seq, 8)
    const report = await store.verify(id)
    assert.ok(report.valid, JSON.stringify(report.findings.slice(0, 3)))
    assert.is((await store.open(id)).cursor.seq, 8)
  })

  test('an append under a lost lease writes nothing (LEASE_LOST); without a lease, a live one refuses it (CASE_LEASED)', async () => {
    const store = await fresh(kind, 'lease')
    const id = 'case-lease'
    await store.create(id, { caseId: id })
    const a = await store.leaseCase(id, 'worker-a', 60_000)
    const h = await store.open(id)
    const cmd = (commandId: string): RawCommand => ({
      commandId,
      expectedGeneration: h.cursor.seq,
      events: [note(commandId)]
    })
    assert.is((await store.append(h, cmd('held'), { lease: a })).status, 'appended')
    const leased = await failureOf(store.append(h, cmd('no-lease')))
    assert.is(leased.code, 'CASE_LEASED', leased.message)
    // Taken over: the handle is still at the head, so only the lease refuses the command.
    assert.ok(await store.release(a))
    const b = await store.leaseCase(id, 'worker-b', 60_000)
    const lost = await failureOf(store.append(h, cmd('stalled'), { lease: a }))
    assert.is(lost.code, 'LEASE_LOST', lost.message)
    const after = await store.open(id)
    assert.is(after.cursor.seq, h.cursor.seq, 'nothing was written')
    assert.not.ok(after.cursor.commands.has('stalled'))
    assert.is((await store.append(h, cmd('new-holder'), { lease: b })).status, 'appended')
    assert.ok((await store.verify(id)).valid)
  })

  if (kind === 'mariadb') {
    test.after(async () => {
      for (const s of opened) await s.close()
      for (const t of made) await t.drop().catch(() => undefined)
      await maria.stop()
    })
  }
  test.run()
}
