/**
 * The SQL store's append statements kept per shape (src/adapters/sql-store/append-statements.ts)
 * against knex itself: on random appends (one event row or a signed command's two, up to many;
 * under a lease or not; queue columns null or not, some left undefined), many of the same shape
 * with other values, every statement given is the one knex builds for that append on PostgreSQL,
 * the one statement and the transaction's write alike.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import knexFactory from 'knex'
import { postgres } from '../../src/adapters/sql-store/dialect.js'
import {
  oneStatement,
  oneStatementByKnex,
  oneStatementShape,
  writeStatement,
  writeStatementByKnex,
  writeStatementShape,
  type AppendRows
} from '../../src/adapters/sql-store/append-statements.js'
import { QUEUE_COLUMNS } from '../../src/adapters/sql-store/rows.js'
import { fcOptions } from '../helpers/seed.js'

const s = suite('append statements')

const text = fc.constantFrom('a', "o'k", '?', '$1', '\\', 'cmd-1')
const queueValue = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 9 }), text)

const append: fc.Arbitrary<AppendRows> = fc
  .record({
    ref: text,
    seq: fc.nat({ max: 1000 }),
    bytes: fc.nat({ max: 100000 }),
    hash: text,
    // One event, a signed command's event and signature, or many.
    events: fc.oneof(fc.constant(1), fc.constant(2), fc.integer({ min: 1, max: 12 })),
    queue: fc.array(queueValue, { minLength: QUEUE_COLUMNS.length, maxLength: QUEUE_COLUMNS.length }),
    undefinedColumn: fc.option(fc.constantFrom(...QUEUE_COLUMNS), { freq: 4 }),
    lease: fc.option(text)
  })
  .map((r) => {
    const lines = Array.from({ length: r.events }, (_, i) => ({
      seq: r.seq + 1 + i,
      command_id: `${r.ref}-c`,
      hash: `h${i}`,
      line: Buffer.from(`{"seq":${r.seq + 1 + i}}\n`)
    }))
    const head: Record<string, unknown> = {
      generation: r.seq + r.events,
      head_hash: `h${r.events - 1}`,
      log_bytes: r.bytes + 40 * r.events,
      last_event_at: '2026-12-04T02:00:00.000Z',
      updated_ms: 1796349600000
    }
    QUEUE_COLUMNS.forEach((c, i) => {
      head[c] = c === r.undefinedColumn ? undefined : r.queue[i]
    })
    return {
      ref: r.ref,
      cursor: { seq: r.seq, hash: r.hash, bytes: r.bytes },
      lines,
      head,
      commandRow: { case_id: r.ref, command_id: `${r.ref}-c`, first_seq: r.seq + 1, last_seq: r.seq + r.events },
      leaseToken: r.lease ?? undefined
    }
  })

s('PostgreSQL: every append statement is the one knex builds, kept for shapes seen before', () => {
  const k = knexFactory({ client: 'pg' })
  const now = postgres.nowMs
  const seen = new Set<string>()
  let hits = 0
  fc.assert(
    fc.property(append, (x) => {
      for (const key of [oneStatementShape(x).key, writeStatementShape(x).key]) {
        if (seen.has(key)) hits++
        seen.add(key)
      }
      const one = oneStatementByKnex(k, now, x)
      const write = writeStatementByKnex(k, x)
      assert.equal(oneStatement(k, now, x), one)
      assert.equal(writeStatement(k, k, x), write)
      // The values are bound in knex's order: the shape's text is kept, not built again by knex.
      assert.equal(oneStatementShape(x).bindings, one.bindings)
      assert.equal(writeStatementShape(x).bindings, write.bindings)
    }),
    fcOptions(600)
  )
  assert.ok(hits > 300, `only ${hits} appends of a shape seen before`)
})

s.run()
