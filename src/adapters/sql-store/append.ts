/**
 * Appending to a case in the SQL store: one transaction.
 *  1. `SELECT … FOR UPDATE` on the case's row reads the head, the lease and the database's clock
 *     in one statement: writers of one case queue here (READ COMMITTED, a lock wait bounded by
 *     `lockWaitMs`: CASE_LOCKED), writers of different cases do not meet;
 *  2. an append under a lease needs the lease still held (LEASE_LOST); one without a lease is
 *     refused while another worker's lease is live (CASE_LEASED);
 *  3. catch up with events other writers committed since the handle last looked (checked like open);
 *  4. a known command id returns its recorded outcome; a stale expected generation is
 *     GENERATION_CONFLICT; the command is planned and its rules checked like the directory store's;
 *  5. objects (content-addressed, shared by cases, inserted if absent), the event rows, the command
 *     row (primary key (case, command id): a duplicate cannot commit) and the case row (head and
 *     queue columns, `WHERE generation = expected`) are written, then COMMIT acknowledges.
 * A writer killed before COMMIT leaves nothing: the server rolls the transaction back.
 */
import type { Knex } from 'knex'
import type { CaseState } from '../../domain/case-state.js'
import { systemEnv } from '../env.js'
import { fail, FailureError } from '../../failures/error.js'
import { finding } from '../../events/findings.js'
import type { AppendOutcome, RawCommand } from '../case-store/append.js'
import {
  appendedAs,
  duplicateOf,
  nothingToAppend,
  planCommand,
  rebaseCommand,
  type ObjectLookup,
  validateCommand
} from '../case-store/plan.js'
import { catchUp, corrupt, type CaseHandle } from '../case-store/handle.js'
import { planAhead } from '../case-store/plan-ahead.js'
import type { CommandSpan } from '../case-store/scan.js'
import type { StoreAppendOptions } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { INSERT_ROWS, insertEvents, num, numOrNull, queueColumns, recordedEvents, type CaseRow } from './rows.js'
import { scanRows } from './scan-rows.js'

/** The case row locked for an append, with its lease and the database's clock. */
const lockRow = async (
  ctx: SqlContext,
  trx: Knex.Transaction,
  caseId: string
): Promise<
  CaseRow & {
    readonly lease: { owner: string | null; token: string | null; expires: number | null }
    readonly now: number
  }
> => {
  const locked = (await trx('vba_cases')
    .select(
      'case_id',
      'generation',
      'head_hash',
      'log_bytes',
      'lease_owner',
      'lease_token',
      'lease_expires_ms',
      trx.raw(`${ctx.dialect.nowMs} AS now_ms`)
    )
    .where({ case_id: caseId })
    .forUpdate()
    .first()) as Record<string, unknown> | undefined
  if (locked === undefined)
    return fail('CASE_NOT_FOUND', `no case ${caseId} in the store ${ctx.display}`, { case_id: caseId })
  return {
    case_id: caseId,
    declaration: Buffer.alloc(0),
    generation: num(locked['generation']),
    head_hash: String(locked['head_hash']),
    log_bytes: num(locked['log_bytes']),
    lease: {
      owner: (locked['lease_owner'] as string | null) ?? null,
      token: (locked['lease_token'] as string | null) ?? null,
      expires: numOrNull(locked['lease_expires_ms'])
    },
    now: num(locked['now_ms'])
  }
}

/** Appends a command to a case of the store (see the module comment). */
export const appendInStore = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions = {}
): Promise<AppendOutcome> => {
  try {
    return await appendTransaction(ctx, handle, first, options)
  } catch (e) {
    // A key the log does not explain (event rows past the head, a planted command row) is a store
    // that does not verify: CASE_CORRUPT, never an internal error.
    const code = e instanceof FailureError ? e.failure.data['driver_code'] : undefined
    if (code === '23505' || code === 'ER_DUP_ENTRY') {
      throw new FailureError(
        corrupt([
          finding(
            'STORE_ROWS_BEYOND_HEAD',
            'the store holds event or command rows for this case that its log does not acknowledge: run vba verify',
            { data: { case_id: handle.ref } }
          )
        ])
      )
    }
    throw e
  }
}

type LockedRow = Awaited<ReturnType<typeof lockRow>>
type Plan = Awaited<ReturnType<typeof planCommand>>
/** Where the handle moves once the transaction committed. */
interface After {
  readonly state: CaseState
  readonly seq: number
  readonly hash: string
  readonly bytes: number
  readonly span: CommandSpan
  readonly ids: string[]
}

/** An append under a lease needs it still held (LEASE_LOST); one without is refused while another's is live (CASE_LEASED). */
const checkLease = (row: LockedRow, ref: string, options: StoreAppendOptions): void => {
  const live = row.lease.expires !== null && row.lease.expires > row.now
  if (options.lease !== undefined) {
    if (row.lease.token !== options.lease.token || !live) {
      fail(
        'LEASE_LOST',
        `the lease of ${options.lease.worker} on case ${ref} was lost (expired or taken over); stop working on the case`,
        { case_id: ref, worker: options.lease.worker }
      )
    }
  } else if (live && row.lease.owner !== null) {
    fail(
      'CASE_LEASED',
      `case ${ref} is being worked on by ${row.lease.owner} until ${new Date(row.lease.expires ?? 0).toISOString()}; retry when it is released`,
      { case_id: ref, worker: row.lease.owner, expires_at: new Date(row.lease.expires ?? 0).toISOString() }
    )
  }
}

/** The store's objects as a plan asks about them (sizes and bytes read inside the transaction). */
const lookupIn = (trx: Knex.Transaction, ctx: SqlContext): ObjectLookup => ({
  sizeOf: async (digest) => {
    const r = (await trx('vba_objects').select('size').where({ digest }).first()) as Record<string, unknown> | undefined
    return r === undefined ? null : num(r['size'])
  },
  read: async (ref) => {
    try {
      return await ctx.objects.read(trx, ref)
    } catch {
      return undefined
    }
  }
})

/** Writes a planned command's event rows, command row and case row; the rows the case update touched. */
const writePlan = async (
  trx: Knex.Transaction,
  ctx: SqlContext,
  handle: CaseHandle,
  cmd: RawCommand,
  plan: Plan
): Promise<number> => {
  await ctx.objects.insert(trx, plan.provided.values())
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
  if (ctx.dialect.appendInOneStatement && lines.length <= INSERT_ROWS) {
    // Events, command and head in one statement (data-modifying CTEs): one round trip while the
    // case row is locked, instead of three.
    const ev = trx('vba_events')
      .insert(lines.map((l) => ({ case_id: handle.ref, ...l })))
      .toSQL()
    const cm = trx('vba_commands').insert(commandRow).toSQL()
    const up = trx('vba_cases').where({ case_id: handle.ref, generation: handle.cursor.seq }).update(head).toSQL()
    const r = (await trx.raw(`WITH ev AS (${ev.sql}), cm AS (${cm.sql}) ${up.sql}`, [
      ...ev.bindings,
      ...cm.bindings,
      ...up.bindings
    ] as Knex.RawBinding[])) as { rowCount: number }
    return r.rowCount
  }
  await insertEvents(trx, handle.ref, lines)
  await trx('vba_commands').insert(commandRow)
  return trx('vba_cases').where({ case_id: handle.ref, generation: handle.cursor.seq }).update(head)
}

/** Moves the handle past a committed command. */
const moveHandle = (handle: CaseHandle, commandId: string, a: After): void => {
  handle.cursor.commands.set(commandId, a.span)
  handle.cursor.lastCommand = commandId
  handle.cursor.seq = a.seq
  handle.cursor.hash = a.hash
  handle.cursor.bytes = a.bytes
  handle.cursor.state = a.state
  for (const id of a.ids) handle.cursor.ids.add(id)
}

const appendTransaction = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions
): Promise<AppendOutcome> => {
  validateCommand(first)
  const env = options.env ?? systemEnv
  let after: After | null = null
  const outcome = await ctx.transaction(async (trx) => {
    const locking = lockRow(ctx, trx, handle.ref)
    const ahead = planAhead(handle, first, env, lookupIn(trx, ctx))
    const row = await locking
    checkLease(row, handle.ref, options)
    await catchUp(handle, { seq: row.generation, hash: row.head_hash, bytes: row.log_bytes }, (resume) =>
      scanRows(trx, row, { canonical: false, resume })
    )
    const recorded = handle.cursor.commands.get(first.commandId)
    if (recorded !== undefined)
      return duplicateOf(handle, first, await recordedEvents(trx, handle.ref, recorded), options.sameIntent)
    const cmd = rebaseCommand(handle, first, options)
    if (cmd === null) return nothingToAppend(handle, first.commandId)
    const plan =
      (await ahead?.take({ seq: row.generation, hash: row.head_hash, bytes: row.log_bytes })) ??
      (await planCommand(handle, cmd, env, lookupIn(trx, ctx)))
    const updated = await writePlan(trx, ctx, handle, cmd, plan)
    if (updated !== 1)
      fail('GENERATION_CONFLICT', 'the case moved while the command was written; retry', {
        expected: cmd.expectedGeneration
      })
    after = {
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
    }
    return appendedAs(cmd.commandId, plan, [])
  })
  // Acknowledged (committed): only now does the handle move on.
  const a = after as After | null
  if (a !== null && outcome.status === 'appended') moveHandle(handle, first.commandId, a)
  return outcome
}
