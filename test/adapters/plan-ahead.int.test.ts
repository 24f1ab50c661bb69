/**
 * A signing writer plans its command while the store takes its lock (case-store/plan-ahead.ts),
 * on the directory store and PostgreSQL. The plan is used only when the head read under the lock
 * is the one it was made on: a stale writer (another one wrote meanwhile) plans again, and its
 * signature names the command where it landed; an unsigned stale writer draws its clock and ids
 * once, as before; a failure met planning ahead (a clock behind the case) is the append's failure,
 * with nothing written.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import { systemEnv, type Env } from '../../src/adapters/env.js'
import { writeNewKey } from '../../src/adapters/ssh-keys.js'
import { directoryStore } from '../../src/adapters/case-store/directory-store.js'
import { trustPolicy } from '../../src/adapters/case-store/signatures.js'
import type { CaseStore } from '../../src/adapters/case-store/store.js'
import type { RawCommand } from '../../src/adapters/case-store/append.js'
import type { CaseHandle } from '../../src/adapters/case-store/handle.js'
import { migrateStore, openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { FailureError } from '../../src/failures/error.js'
import { tempDir } from '../helpers/fs.js'
import { postgresStore } from '../helpers/stores.js'

const root = tempDir('plan-ahead')
const { signer, allowedSigners } = await writeNewKey(path.join(root, 'key'), 'writer')
const trust = trustPolicy(`${allowedSigners}\n`)

/** The system clock and ids, counting the draws. */
const counting = (signs: boolean): Env & { draws: () => number } => {
  let n = 0
  return {
    now: () => {
      n++
      return systemEnv.now()
    },
    newId: () => {
      n++
      return systemEnv.newId()
    },
    ...(signs ? { signer } : {}),
    draws: () => n
  }
}
const note = (id: string, h: CaseHandle): RawCommand => ({
  commandId: id,
  expectedGeneration: h.cursor.seq,
  events: [{ type: 'NoteRecorded', actor: 'operator', data: { text: `note ${id}`, format: 'plain' } }]
})

const exercise = async (store: CaseStore, at: string): Promise<void> => {
  await store.create(at, { caseId: 'case-ahead' })
  const [a, b] = [await store.open(at), await store.open(at)]
  const signed = counting(true)
  await store.append(a, note('a1', a), { env: signed })
  await store.append(a, note('a2', a), { env: signed })
  // b is stale: its plan made ahead is on head 0, the lock reads head 4; it plans again.
  const rebase = (id: string) => (h: CaseHandle) => note(id, h)
  const out = await store.append(b, note('b1', b), { env: signed, rebase: rebase('b1') })
  assert.equal(
    out.events.map((e) => [e.seq, e.type]),
    [
      [5, 'NoteRecorded'],
      [6, 'CommandSigned']
    ]
  )
  const sig = out.events[1]?.data as { first_seq: number; last_seq: number; last_hash: string }
  assert.equal([sig.first_seq, sig.last_seq, sig.last_hash], [5, 5, out.events[0]?.hash])
  // An unsigned writer, stale too, draws its clock and ids once for its one event.
  const plain = counting(false)
  await store.append(a, note('a3', a), { env: signed, rebase: rebase('a3') })
  await store.append(b, note('b2', b), { env: plain, rebase: rebase('b2') })
  assert.is(plain.draws(), 2)
  // A failure met ahead of the lock is the append's, and nothing is written.
  const behind = { ...note('b3', b), at: '2000-01-01T00:00:00.000Z' }
  const refused = await store.append(b, behind, { env: signed }).catch((e: unknown) => e)
  assert.instance(refused, FailureError)
  assert.is((refused as FailureError).failure.code, 'CLOCK_BEHIND')
  const again = await store.open(at)
  assert.is(again.cursor.seq, 9)
  const r = await store.verify(at, { trust })
  assert.ok(r.valid, JSON.stringify(r.findings))
  assert.equal(
    r.signatures?.signers.map((s) => [s.principal, s.commands, s.trusted]),
    [['writer', 4, true]]
  )
  assert.is(r.signatures?.unsigned_commands, 1)
}

const t = suite('planning a signed command ahead of the lock')

t('directory store', async () => {
  await exercise(directoryStore, path.join(root, 'case-ahead'))
})

t('PostgreSQL', async () => {
  const pg = await postgresStore('planahead')
  try {
    await migrateStore(pg.url, { environment: {} })
    const store = await openSqlStore(pg.url, { environment: {} })
    try {
      await exercise(store, 'case-ahead')
    } finally {
      await store.close()
    }
  } finally {
    await pg.drop()
  }
})

t.run()
