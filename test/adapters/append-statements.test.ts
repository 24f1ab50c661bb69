/**
 * The SQL store's append statements kept per shape (src/adapters/sql-store/append-statements.ts)
 * against knex itself: on random appends (one event row or a signed command's two, up to many;
 * under a lease or not; queue columns null or not, some left undefined), many of the same shape
 * with other values, every statement given is the one knex builds for that append: on PostgreSQL
 * the one statement and the transaction's write alike, on MariaDB the transaction's three.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import knexFactory, { type Knex } from 'knex'
import { mysql, postgres, type Dialect } from '../../src/adapters/sql-store/dialect.js'
import {
  oneStatement,
  oneStatementByKnex,
  oneStatementShape,
  writeParts,
  writeStatements,
  type AppendRows
} from '../../src/adapters/sql-store/append-statements.js'
import { INSERT_ROWS, QUEUE_COLUMNS } from '../../src/adapters/sql-store/rows.js'
import { fcOptions } from '../helpers/seed.js'

const s = suite('append statements')

const text = fc.constantFrom('a', "o'k", '?', '$1', '\\', 'cmd-1')
const queueValue = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 9 }), text)

/** An append of `events` rows (`seq` its head, `lease` its token). */
const appendOf = (r: {
  ref: string
  seq: number
  bytes: number
  hash: string
  events: number
  queue: readonly unknown[]
  undefinedColumn: string | null
  lease: string | null
}): AppendRows => {
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
}

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
  .map(appendOf)

/** The transaction's write of `x` as knex builds it, statement by statement. */
const writeByKnex = (k: Knex, dialect: Dialect, x: AppendRows) => writeParts(k, dialect, x).map((p) => p.build())

for (const [name, client, dialect] of [
  ['PostgreSQL', 'pg', postgres],
  ['MariaDB', 'mysql2', mysql]
] as const) {
  s(`${name}: every append statement is the one knex builds, kept for shapes seen before`, () => {
    const k = knexFactory({ client })
    const now = dialect.nowMs
    const seen = new Set<string>()
    let hits = 0
    fc.assert(
      fc.property(append, (x) => {
        const keys = writeParts(k, dialect, x).map((p) => p.key)
        if (dialect.appendInOneStatement) keys.push(oneStatementShape(x).key)
        for (const key of keys) {
          if (seen.has(key)) hits++
          seen.add(key)
        }
        const write = writeByKnex(k, dialect, x)
        assert.equal(write.length, dialect.appendInOneStatement ? 1 : 3)
        assert.equal(writeStatements(k, dialect, k, x), write)
        // The values are bound in knex's order: the shape's text is kept, not built again by knex.
        assert.equal(
          writeParts(k, dialect, x).map((p) => p.bindings),
          write.map((w) => w.bindings)
        )
        if (!dialect.appendInOneStatement) return
        const one = oneStatementByKnex(k, now, x)
        assert.equal(oneStatement(k, now, x), one)
        assert.equal(oneStatementShape(x).bindings, one.bindings)
      }),
      fcOptions(600)
    )
    assert.ok(hits > 300, `only ${hits} appends of a shape seen before`)
  })

  s(`${name}: an append of more event rows than one INSERT takes is written by INSERT_ROWS at a time`, () => {
    const k = knexFactory({ client })
    const events = 2 * INSERT_ROWS + 3
    const queue = QUEUE_COLUMNS.map(() => null)
    for (const ref of ['big-1', 'big-2']) {
      const x = appendOf({ ref, seq: 7, bytes: 900, hash: 'h', events, queue, undefinedColumn: null, lease: null })
      const write = writeByKnex(k, dialect, x)
      // Three INSERTs of events (500, 500, 3 rows), the command's, the case row's UPDATE.
      assert.equal(write.length, 5)
      assert.ok(write[2]?.sql.startsWith('insert into') && (write[4]?.sql ?? '').startsWith('update'))
      assert.equal(writeStatements(k, dialect, k, x), write)
    }
  })
}

s.run()
