/**
 * What both of the SQL store's append paths share (the transaction of append.ts and the one
 * statement of append-one.ts): the case row with its lease and the database's clock, the lease
 * check, deciding a command again on the row read, the store's answers to a plan's object
 * questions, the rows a plan writes, and moving the handle past a committed command.
 */
import type { Knex } from 'knex'
import type { CaseState } from '../../domain/case-state.js'
import { fail } from '../../failures/error.js'
import type { AppendOutcome, RawCommand } from '../case-store/append.js'
import { duplicateOf, nothingToAppend, rebaseCommand, type CommandPlan, type ObjectLookup } from '../case-store/plan.js'
import { catchUp, type CaseHandle } from '../case-store/handle.js'
import type { CommandSpan } from '../case-store/scan.js'
import type { StoreAppendOptions } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { num, queueColumns, readCaseRow, recordedEvents, type EventRow, type LeasedCaseRow } from './rows.js'
import { scanRows } from './scan-rows.js'

/** A case row as an append reads it: its head, its lease and the database's clock. */
export type AppendRow = LeasedCaseRow & { readonly now: number }

/**
 * The turnstile of one case's appends on PostgreSQL: a transaction-level advisory lock (class
 * 'vba\0', the case id's hash; a hash shared by two cases only makes one wait for the other),
 * taken by the one statement of append-one.ts if it is free and by the transaction before it locks
 * the row. A statement that finds it taken writes nothing and waits for it outside any row lock:
 * one that met the row locked instead would lock the row's newer version before failing its guard,
 * and hold it through a commit of its own. It orders nothing the row's guard does not prove.
 */
export const TURNSTILE = (fn: 'pg_try_advisory_xact_lock' | 'pg_advisory_xact_lock'): string =>
  `${fn}(1986158848, hashtext(?))`

/**
 * The case row (locked with `lock`, after the turnstile on PostgreSQL) with its lease and the
 * database's clock, or CASE_NOT_FOUND.
 */
export const appendRow = async (
  ctx: SqlContext,
  q: Knex | Knex.Transaction,
  caseId: string,
  lock: boolean
): Promise<AppendRow> => {
  const turnstile = lock && ctx.dialect.appendInOneStatement ? { before: TURNSTILE('pg_advisory_xact_lock') } : {}
  const row = await readCaseRow(ctx, q, caseId, { lock, clock: true, ...turnstile })
  return { ...row, now: row.now_ms ?? 0 }
}

/** An append under a lease needs it still held (LEASE_LOST); one without is refused while another's is live (CASE_LEASED). */
export const checkLease = (row: AppendRow, ref: string, options: StoreAppendOptions): void => {
  const live = row.lease_expires_ms !== null && row.lease_expires_ms > row.now
  if (options.lease !== undefined) {
    if (row.lease_token !== options.lease.token || !live) {
      fail(
        'LEASE_LOST',
        `the lease of ${options.lease.worker} on case ${ref} was lost (expired or taken over); stop working on the case`,
        { case_id: ref, worker: options.lease.worker }
      )
    }
  } else if (live && row.lease_owner !== null) {
    fail(
      'CASE_LEASED',
      `case ${ref} is being worked on by ${row.lease_owner} until ${new Date(row.lease_expires_ms ?? 0).toISOString()}; retry when it is released`,
      { case_id: ref, worker: row.lease_owner, expires_at: new Date(row.lease_expires_ms ?? 0).toISOString() }
    )
  }
}

/**
 * On the case row just read (in the transaction, or on the pool after a statement that wrote
 * nothing): the lease checked, the handle caught up with what other writers committed, and the
 * command decided again: the outcome when that settles it (a duplicate, nothing left to append),
 * else the command to write. `run` wraps each read: ctx.guard on the pool; in the transaction,
 * which retries a deadlock on the driver's own error, nothing.
 */
export const decideOnRow = async (
  q: Knex | Knex.Transaction,
  row: AppendRow,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions,
  run: <A>(work: () => Promise<A>) => Promise<A>
): Promise<AppendOutcome | RawCommand> => {
  checkLease(row, handle.ref, options)
  await catchUp(handle, { seq: row.generation, hash: row.head_hash, bytes: row.log_bytes }, (resume) =>
    run(() => scanRows(q, row, { canonical: false, resume }))
  )
  const recorded = handle.cursor.commands.get(first.commandId)
  if (recorded !== undefined)
    return duplicateOf(handle, first, await run(() => recordedEvents(q, handle.ref, recorded)), options.sameIntent)
  return rebaseCommand(handle, first, options) ?? nothingToAppend(handle, first.commandId)
}

/**
 * The store's objects as a plan asks about them (sizes, and bytes the rules read): inside the
 * append's transaction, or on the pool (objects are content-addressed and never deleted, so an
 * answer read before the write still holds when it commits).
 */
export const lookupIn = (q: Knex | Knex.Transaction, ctx: SqlContext): ObjectLookup => ({
  sizeOf: async (digest) => {
    const r = (await q('vba_objects').select('size').where({ digest }).first()) as Record<string, unknown> | undefined
    return r === undefined ? null : num(r['size'])
  },
  read: async (ref) => {
    try {
      return await ctx.objects.read(q, ref)
    } catch {
      return undefined
    }
  }
})

/** The rows a planned command writes: its event rows, the case row's new head and queue columns, its command row. */
export const planRows = (
  handle: CaseHandle,
  cmd: RawCommand,
  plan: CommandPlan
): {
  readonly lines: EventRow[]
  readonly head: Record<string, unknown>
  readonly commandRow: { case_id: string; command_id: string; first_seq: number; last_seq: number }
} => {
  const lines = plan.sealed.map((x) => ({
    seq: x.envelope.seq,
    command_id: x.envelope.command_id,
    hash: x.envelope.hash,
    line: Buffer.from(x.line, 'utf8')
  }))
  // The queue's clock is the events' own time (the env clock is not consumed twice).
  const lastAt = plan.sealed[plan.sealed.length - 1]?.envelope.at ?? new Date(0).toISOString()
  const head = {
    generation: plan.newHead.seq,
    head_hash: plan.newHead.hash,
    log_bytes: plan.newHead.bytes,
    last_event_at: lastAt,
    updated_ms: Date.parse(lastAt),
    ...queueColumns(plan.rules.state())
  }
  const commandRow = {
    case_id: handle.ref,
    command_id: cmd.commandId,
    first_seq: handle.cursor.seq + 1,
    last_seq: plan.newHead.seq
  }
  return { lines, head, commandRow }
}

/** Where the handle moves once a command committed. */
export interface After {
  readonly state: CaseState
  readonly seq: number
  readonly hash: string
  readonly bytes: number
  readonly span: CommandSpan
  readonly ids: string[]
}

/** Where a plan written on the handle's head leaves the handle. */
export const afterPlan = (handle: CaseHandle, plan: CommandPlan): After => ({
  state: plan.rules.state(),
  seq: plan.newHead.seq,
  hash: plan.newHead.hash,
  bytes: plan.newHead.bytes,
  span: {
    firstSeq: handle.cursor.seq + 1,
    lastSeq: plan.newHead.seq,
    start: handle.cursor.bytes,
    end: plan.newHead.bytes
  },
  ids: plan.sealed.map((x) => x.envelope.id)
})

/** Moves the handle past a committed command. */
export const moveHandle = (handle: CaseHandle, commandId: string, a: After): void => {
  handle.cursor.commands.set(commandId, a.span)
  handle.cursor.lastCommand = commandId
  handle.cursor.seq = a.seq
  handle.cursor.hash = a.hash
  handle.cursor.bytes = a.bytes
  handle.cursor.state = a.state
  for (const id of a.ids) handle.cursor.ids.add(id)
}
