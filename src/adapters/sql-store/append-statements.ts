/**
 * The SQL of the append statements (the one statement of append-one.ts, PostgreSQL's, and the
 * transaction's write of append.ts on either dialect), kept per shape. Building them with knex
 * took 57-142 µs of a PostgreSQL append of about 1,160 µs, and 15 µs more for a signed command's
 * second event row; their text depends only on the store's dialect, the number of event rows,
 * whether the append holds a lease, and which of the case row's columns it sets (knex leaves
 * undefined ones out) and which guards are null: the values are bound. So the text of a shape is
 * kept per store (kept-statements.ts, as the database research keeps its SELECTs) and the values
 * of an append are bound in the order knex binds them, an order checked against knex's own
 * bindings the first time a shape is built: a shape where they differ is never kept, and knex
 * builds it every time. What differs between the dialects is data: the text knex builds for the store's client,
 * and whether the write is one statement (Dialect.appendInOneStatement) or three.
 */
import type { Knex } from 'knex'
import type { Statement } from '../db/executors.js'
import { TURNSTILE } from './append-parts.js'
import { built, keptStatements } from './kept-statements.js'
import type { Dialect } from './dialect.js'
import { INSERT_ROWS, type EventRow } from './rows.js'

/** The rows an append writes on the head it planned on. */
export interface AppendRows {
  readonly ref: string
  /** The head the append was planned on. */
  readonly cursor: { readonly seq: number; readonly hash: string; readonly bytes: number }
  readonly lines: readonly EventRow[]
  /** The case row's new head and queue columns. */
  readonly head: Readonly<Record<string, unknown>>
  readonly commandRow: { case_id: string; command_id: string; first_seq: number; last_seq: number }
  /** The lease the append is made under (the one statement checks it on the database's clock). */
  readonly leaseToken?: string | undefined
}

/** `?` placeholders cast to the columns' types (a VALUES list has no target to take them from). */
const EVENT_VALUES = '(?::varchar, ?::integer, ?::varchar, ?::varchar, ?::bytea)'

/** The one statement of append-one.ts as knex builds it (`now`: the database's clock). */
export const oneStatementByKnex = (k: Knex, now: string, x: AppendRows): Statement => {
  let up = k('vba_cases')
    .where({ case_id: x.ref, generation: x.cursor.seq, head_hash: x.cursor.hash, log_bytes: x.cursor.bytes })
    .whereRaw('(SELECT got FROM lk)')
  // The lease on the database's clock, as the transaction's checkLease reads it.
  up =
    x.leaseToken === undefined
      ? up.whereRaw(`(lease_owner IS NULL OR lease_expires_ms IS NULL OR lease_expires_ms <= ${now})`)
      : up.whereRaw(`lease_token = ? AND lease_expires_ms > ${now}`, [x.leaseToken])
  const update = up.update(x.head).returning('case_id').toSQL()
  const sql =
    `WITH lk AS (SELECT ${TURNSTILE('pg_try_advisory_xact_lock')} AS got), up AS (${update.sql}), ` +
    `ev AS (INSERT INTO vba_events (case_id, seq, command_id, hash, line) SELECT * FROM (VALUES ${x.lines.map(() => EVENT_VALUES).join(', ')}) AS v WHERE EXISTS (SELECT 1 FROM up)), ` +
    'cm AS (INSERT INTO vba_commands (case_id, command_id, first_seq, last_seq) SELECT ?::varchar, ?::varchar, ?::integer, ?::integer WHERE EXISTS (SELECT 1 FROM up)) ' +
    'SELECT (SELECT count(*) FROM up) AS written, (SELECT got FROM lk) AS got'
  const c = x.commandRow
  return {
    sql,
    bindings: [
      x.ref,
      ...update.bindings,
      ...x.lines.flatMap((l) => [x.ref, l.seq, l.command_id, l.hash, l.line]),
      c.case_id,
      c.command_id,
      c.first_seq,
      c.last_seq
    ]
  }
}

/** The case row's columns set (undefined ones are left out, as knex leaves them), their values pushed onto `into`. */
const setColumns = (head: Readonly<Record<string, unknown>>, into: unknown[]): string => {
  let columns = ''
  for (const column in head) {
    const v = head[column]
    if (v === undefined) continue
    columns += `${column},`
    into.push(v)
  }
  return columns
}

/** A guard's value bound (knex binds no null: `IS NULL`), and its kind for the shape. */
const guard = (v: unknown, into: unknown[]): string => {
  if (v === null) return 'n'
  into.push(v)
  return 'v'
}

/** The shape of the one statement of `x` and the values it binds, in knex's order. */
export const oneStatementShape = (x: AppendRows): { readonly key: string; readonly bindings: unknown[] } => {
  const b: unknown[] = [x.ref]
  const columns = setColumns(x.head, b)
  const guards = guard(x.ref, b) + guard(x.cursor.seq, b) + guard(x.cursor.hash, b) + guard(x.cursor.bytes, b)
  if (x.leaseToken !== undefined) b.push(x.leaseToken)
  for (const l of x.lines) b.push(x.ref, l.seq, l.command_id, l.hash, l.line)
  const c = x.commandRow
  b.push(c.case_id, c.command_id, c.first_seq, c.last_seq)
  return { key: `one ${x.lines.length} ${x.leaseToken === undefined ? '-' : 'l'} ${guards} ${columns}`, bindings: b }
}

/** A statement of an append: its shape's key and values (in knex's order), and how knex builds it. */
export interface AppendPart {
  readonly key: string
  readonly bindings: unknown[]
  readonly build: () => Statement
}

/** The event rows (at most INSERT_ROWS); knex sorts an insert's columns: case_id, command_id, hash, line, seq. */
const eventsPart = (q: Knex | Knex.Transaction, ref: string, lines: readonly EventRow[]): AppendPart => {
  const b: unknown[] = []
  for (const l of lines) b.push(ref, l.command_id, l.hash, l.line, l.seq)
  return {
    key: `ev ${lines.length}`,
    bindings: b,
    build: () => built(q('vba_events').insert(lines.map((l) => ({ case_id: ref, ...l }))))
  }
}

/** The command row (case_id, command_id, first_seq, last_seq). */
const commandPart = (q: Knex | Knex.Transaction, c: AppendRows['commandRow']): AppendPart => ({
  key: 'cm',
  bindings: [c.case_id, c.command_id, c.first_seq, c.last_seq],
  build: () => built(q('vba_commands').insert(c))
})

/** The case row's new head and queue columns, `WHERE generation = expected`. */
const headPart = (q: Knex | Knex.Transaction, x: AppendRows): AppendPart => {
  const b: unknown[] = []
  const columns = setColumns(x.head, b)
  const guards = guard(x.ref, b) + guard(x.cursor.seq, b)
  return {
    key: `up ${guards} ${columns}`,
    bindings: b,
    build: () => built(q('vba_cases').where({ case_id: x.ref, generation: x.cursor.seq }).update(x.head))
  }
}

/**
 * The statements of the transaction's write of `x`, built in `q`: where the dialect writes an
 * append in one statement (PostgreSQL's data-modifying CTEs) and its events fit one INSERT, events,
 * command and head in one; else the events' INSERTs (INSERT_ROWS rows each), the command's and the
 * case row's UPDATE. The last statement is the UPDATE: the rows it touched are the head's.
 */
export const writeParts = (q: Knex | Knex.Transaction, dialect: Dialect, x: AppendRows): AppendPart[] => {
  const cm = commandPart(q, x.commandRow)
  const up = headPart(q, x)
  if (dialect.appendInOneStatement && x.lines.length <= INSERT_ROWS) {
    const ev = eventsPart(q, x.ref, x.lines)
    return [
      {
        key: `write ${ev.key} ${up.key}`,
        bindings: [...ev.bindings, ...cm.bindings, ...up.bindings],
        build: () => {
          const [e, c, u] = [ev.build(), cm.build(), up.build()]
          return {
            sql: `WITH ev AS (${e.sql}), cm AS (${c.sql}) ${u.sql}`,
            bindings: [...e.bindings, ...c.bindings, ...u.bindings]
          }
        }
      }
    ]
  }
  const parts: AppendPart[] = []
  for (let i = 0; i < x.lines.length; i += INSERT_ROWS)
    parts.push(eventsPart(q, x.ref, x.lines.slice(i, i + INSERT_ROWS)))
  parts.push(cm, up)
  return parts
}

/** The one statement of `x` on the store of `k` (`now`: its clock, fixed per store), kept per shape. */
export const oneStatement = (k: Knex, now: string, x: AppendRows): Statement =>
  keptStatements(k).statement(oneStatementShape(x), () => oneStatementByKnex(k, now, x))

/** The statements of the transaction's write of `x` ({@link writeParts}) on the store of `k`, built in `q`, kept per shape. */
export const writeStatements = (k: Knex, dialect: Dialect, q: Knex | Knex.Transaction, x: AppendRows): Statement[] => {
  const cache = keptStatements(k)
  return writeParts(q, dialect, x).map((p) => cache.statement(p, p.build))
}
