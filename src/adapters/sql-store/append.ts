/**
 * Appending to a case in the SQL store. On PostgreSQL a new command without objects, on the head
 * the handle knows, is planned first and written in one autocommitted statement guarded by that
 * head and the lease (append-one.ts); every other command, and one whose statement kept losing
 * to other writers, is written in one transaction:
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
import { systemEnv } from '../env.js'
import { fail, FailureError } from '../../failures/error.js'
import { finding } from '../../events/findings.js'
import type { AppendOutcome, RawCommand } from '../case-store/append.js'
import { appendedAs, planCommand, clockFloor, validateCommand } from '../case-store/plan.js'
import { recordDraws, type Draws } from '../case-store/draws.js'
import { corrupt, type CaseHandle } from '../case-store/handle.js'
import { planAhead } from '../case-store/plan-ahead.js'
import type { StoreAppendOptions } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { afterPlan, appendRow, decideOnRow, lookupIn, moveHandle, planRows, type After } from './append-parts.js'
import { appendInOneStatement, fitsOneStatement } from './append-one.js'
import { writeStatements } from './append-statements.js'

/** The last append through each handle (settled or not): the next one starts after it. */
const inFlight = new WeakMap<CaseHandle, Promise<unknown>>()

/**
 * Appends a command to a case of the store (see the module comment). Appends through one handle
 * run one at a time, in the order they were called, as the directory store's lock runs them: each
 * plans on the handle's cursor and moves it once committed, so two at once would plan on the same
 * head (one statement's plan written over a head the other had moved the handle past, a catch-up
 * scanning events the other was about to add): a false CASE_CORRUPT.
 */
export const appendInStore = (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions = {}
): Promise<AppendOutcome> => {
  const before = inFlight.get(handle)
  const run =
    before === undefined
      ? appendNow(ctx, handle, first, options)
      : before.then(
          () => appendNow(ctx, handle, first, options),
          () => appendNow(ctx, handle, first, options)
        )
  const settled = run.catch(() => undefined)
  inFlight.set(handle, settled)
  void settled.then(() => {
    if (inFlight.get(handle) === settled) inFlight.delete(handle)
  })
  return run
}

const appendNow = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions
): Promise<AppendOutcome> => {
  validateCommand(first)
  // Every plan of the command (a retry, the fallback, a plan made ahead) takes the same draws.
  const draws = recordDraws(options.env ?? systemEnv)
  try {
    if (fitsOneStatement(ctx, handle, first)) {
      const done = await appendInOneStatement(ctx, handle, first, options, draws)
      if (done !== undefined) return done
    }
    return await appendTransaction(ctx, handle, first, options, draws)
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

type Plan = Awaited<ReturnType<typeof planCommand>>

/** Writes a planned command's event rows, command row and case row; the rows the case update touched. */
const writePlan = async (
  trx: Knex.Transaction,
  ctx: SqlContext,
  handle: CaseHandle,
  cmd: RawCommand,
  plan: Plan
): Promise<number> => {
  await ctx.objects.insert(trx, plan.provided.values())
  const { lines, head, commandRow } = planRows(handle, cmd, plan)
  // On PostgreSQL events, command and head in one statement (data-modifying CTEs): one round trip
  // while the case row is locked, instead of three.
  const statements = writeStatements(ctx.k, ctx.dialect, trx, {
    ref: handle.ref,
    cursor: handle.cursor,
    lines,
    head,
    commandRow
  })
  let updated = 0
  for (const { sql, bindings } of statements)
    updated = ctx.dialect.rowsWritten(await trx.raw(sql, bindings as Knex.RawBinding[]))
  return updated
}

/** The transaction (see the module comment), its plans taking the command's draws. */
const appendTransaction = async (
  ctx: SqlContext,
  handle: CaseHandle,
  first: RawCommand,
  options: StoreAppendOptions,
  draws: Draws
): Promise<AppendOutcome> => {
  let after: After | null = null
  const outcome = await ctx.transaction(async (trx) => {
    const locking = appendRow(ctx, trx, handle.ref, true)
    const ahead = planAhead(handle, first, draws.env(clockFloor(handle)), lookupIn(trx, ctx))
    const row = await locking
    const cmd = await decideOnRow(trx, row, handle, first, options, (work) => work())
    if ('status' in cmd) return cmd
    const plan =
      (await ahead?.take({ seq: row.generation, hash: row.head_hash, bytes: row.log_bytes })) ??
      (await planCommand(handle, cmd, draws.env(clockFloor(handle)), lookupIn(trx, ctx)))
    const updated = await writePlan(trx, ctx, handle, cmd, plan)
    if (updated !== 1)
      fail('GENERATION_CONFLICT', 'the case moved while the command was written; retry', {
        expected: cmd.expectedGeneration
      })
    after = afterPlan(handle, plan)
    return appendedAs(cmd.commandId, plan, [])
  })
  // Acknowledged (committed): only now does the handle move on.
  const a = after as After | null
  if (a !== null && outcome.status === 'appended') moveHandle(handle, first.commandId, a)
  return outcome
}
