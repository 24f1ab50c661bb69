/**
 * Appending to a case in one autocommitted statement (PostgreSQL: data-modifying CTEs). The
 * command is planned on the handle's head before anything is sent (sealed, signed, its rules
 * checked), then one statement writes it only if that head is still the case's:
 *
 *   WITH lk AS (SELECT pg_try_advisory_xact_lock(<the case's turnstile>) AS got),
 *        up AS (UPDATE vba_cases SET <new head, queue columns>
 *               WHERE case_id = ? AND generation = ? AND head_hash = ? AND log_bytes = ?
 *                 AND (SELECT got FROM lk) AND <the lease holds, on the database's clock>
 *               RETURNING case_id),
 *        ev AS (INSERT INTO vba_events … SELECT … WHERE EXISTS (SELECT 1 FROM up)),
 *        cm AS (INSERT INTO vba_commands … SELECT … WHERE EXISTS (SELECT 1 FROM up))
 *   SELECT (SELECT count(*) FROM up) AS written, (SELECT got FROM lk) AS got
 *
 * The guard on the head is the chain's proof: the plan's first event continues the head the
 * handle knew, and the row still acknowledging that head when it is updated (its lock taken, the
 * condition checked again on the newest row) means no other command came between. The case row is
 * held for that one statement and its commit, instead of the transaction's four round trips.
 *
 * A statement that updated no row wrote nothing. When the turnstile (append-parts.ts) was taken,
 * another writer's statement was in flight: its commit is awaited on the turnstile, outside any row
 * lock. Then the row is read again (a lost lease or another worker's is refused as in the
 * transaction), the handle catches up with the rows it lost to, and the command is decided again
 * and sent again after a short random wait (backoffMs), at most ATTEMPTS times; then the
 * transaction (append.ts) writes it, queued on the turnstile and the row's lock. Every plan of the
 * command takes the environment's draws of the first (draws.ts), so its recorded bytes are what
 * one plan would have recorded. Commands carrying objects, known commands, commands on a stale
 * generation and plans that fail take the transaction, which decides them under the lock as before.
 */
import type { Knex } from 'knex'
import type { AppendOutcome, RawCommand } from '../case-store/append.js'
import type { Draws } from '../case-store/draws.js'
import type { CaseHandle } from '../case-store/handle.js'
import { appendedAs, clockFloor, planCommand, type CommandPlan } from '../case-store/plan.js'
import type { StoreAppendOptions } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { afterPlan, appendRow, decideOnRow, lookupIn, moveHandle, planRows, TURNSTILE } from './append-parts.js'
import { INSERT_ROWS } from './rows.js'
import { oneStatement } from './append-statements.js'

/** Statements sent for one command before it is left to the transaction. */
const ATTEMPTS = 16

/**
 * How long a writer that lost waits before it reads the case again: a random time up to 2, 4,
 * 8 … ms after its first, second, third … lost statement, at most 50. Another writer that keeps
 * winning is one whose handle is current, and its next command follows its last within a round
 * trip: a loser reading and sending again at once would lose again, and its reads, plans and
 * statements take the machine from the writer that is getting commands in.
 */
const backoffMs = (attempt: number): number => Math.random() * Math.min(2 ** attempt, 50)

/** Whether a command may be written in one statement (else the transaction writes it). */
export const fitsOneStatement = (ctx: SqlContext, handle: CaseHandle, cmd: RawCommand): boolean =>
  ctx.dialect.appendInOneStatement &&
  (cmd.objects ?? []).length === 0 &&
  // The events and a signature's.
  cmd.events.length < INSERT_ROWS &&
  cmd.expectedGeneration === handle.cursor.seq &&
  !handle.cursor.commands.has(cmd.commandId)

/** What the one statement did: wrote the command, or not, and whether another writer's statement was in flight. */
interface Sent {
  readonly written: boolean
  readonly busy: boolean
}

/** The one statement of a plan (see the module comment). */
const sendPlan = async (
  ctx: SqlContext,
  handle: CaseHandle,
  cmd: RawCommand,
  plan: CommandPlan,
  options: StoreAppendOptions
): Promise<Sent> => {
  const { lines, head, commandRow } = planRows(handle, cmd, plan)
  const { sql, bindings } = oneStatement(ctx.k, ctx.dialect.nowMs, {
    ref: handle.ref,
    cursor: handle.cursor,
    lines,
    head,
    commandRow,
    leaseToken: options.lease?.token
  })
  const r = (await ctx.k.raw(sql, bindings as Knex.RawBinding[])) as { rows: Array<{ written: unknown; got: unknown }> }
  const row = r.rows[0]
  return { written: Number(row?.written) === 1, busy: row?.got !== true }
}

/**
 * After a statement that wrote nothing: the lease checked on the row read again, the handle caught
 * up with what other writers committed, and the command decided again: the outcome when that
 * settles it (a duplicate, nothing left to append), else the command to send again.
 */
const decideAgain = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions
): Promise<AppendOutcome | RawCommand | null> => {
  const row = await ctx.guard(() => appendRow(ctx, ctx.k, handle.ref, false))
  const next = await decideOnRow(ctx.k, row, handle, first, options, ctx.guard)
  if ('status' in next) return next
  return fitsOneStatement(ctx, handle, next) ? next : null
}

/**
 * Appends `first` in one statement (see the module comment): the outcome, or undefined when the
 * transaction is to write it (with the same draws).
 */
export const appendInOneStatement = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions,
  draws: Draws
): Promise<AppendOutcome | undefined> => {
  let cmd = first
  for (let attempt = 1; ; attempt++) {
    let plan: CommandPlan
    try {
      plan = await planCommand(handle, cmd, draws.env(clockFloor(handle)), lookupIn(ctx.k, ctx))
    } catch {
      // Decided under the lock, after the lease and the head are read, it fails there if it still does.
      return undefined
    }
    if (plan.sealed.length > INSERT_ROWS) return undefined
    const sent = await ctx.guard(() => sendPlan(ctx, handle, cmd, plan, options))
    if (sent.written) {
      // Committed: only now does the handle move on.
      moveHandle(handle, cmd.commandId, afterPlan(handle, plan))
      return appendedAs(cmd.commandId, plan, [])
    }
    // Another writer's statement is in flight: its commit is awaited before the row is read again.
    if (sent.busy) await ctx.guard(() => ctx.k.raw(`SELECT ${TURNSTILE('pg_advisory_xact_lock')}`, [handle.ref]))
    await new Promise((r) => setTimeout(r, backoffMs(attempt)))
    const next = await decideAgain(ctx, handle, first, options)
    if (next !== null && 'status' in next) return next
    if (next === null || attempt === ATTEMPTS) return undefined
    cmd = next
  }
}
