/**
 * The queue of the SQL store: every case with its queue row (kept in the same transaction as
 * every append, so it never lags the log), claims that skip locked and leased cases (`FOR UPDATE
 * SKIP LOCKED`), leases on the database's clock, renewals and releases.
 */
import { randomUUID } from 'node:crypto'
import type { Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import { checkWorkerName } from '../../domain/worker-name.js'
import { queueRow, runnability, type QueueEntry } from '../../projections/queue.js'
import { isError } from '../../events/findings.js'
import { fail, FailureError } from '../../failures/error.js'
import { LEASE_MS, type Lease } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { dbNowMs } from './dialect.js'
import { caseRow, QUEUE_COLUMNS, queueColumns } from './rows.js'
import { scanRows } from './scan-rows.js'
import { queueDifferences } from './consistency.js'

const checkLease = (worker: string, leaseMs: number): void => {
  const name = checkWorkerName(worker)
  if (E.isLeft(name)) throw new FailureError(name.left)
  if (!Number.isSafeInteger(leaseMs) || leaseMs < LEASE_MS.min || leaseMs > LEASE_MS.max)
    fail('INVALID_ARGUMENT', 'a lease lasts between 1000 ms and 24 hours')
}

/** Candidates one claim looks at (their queue columns are re-derived from their logs). */
const CANDIDATES = 8

/**
 * The claim's candidate query: the oldest claimable case (by update, then id) that no live lease
 * holds, whose retry time (if blocked) has passed, and that no other transaction has locked; it
 * locks that one row. Bindings: now, now, then the ids already passed over in this claim.
 *
 * Its plan reads only the rows it returns (the index vba_cases_claim, in the query's order: a
 * partial index on PostgreSQL, one led by the flag on MariaDB), so its time does not grow with the
 * backlog; and with LIMIT 1 a claim locks only the row it looks at (MariaDB locks the rows a
 * locking read scans).
 */
export const claimCandidateSql = (dialect: SqlContext['dialect'], passedOver: number): string =>
  `SELECT case_id FROM vba_cases${dialect.name === 'mysql' ? ' FORCE INDEX (vba_cases_claim)' : ''}
      WHERE claimable = 1
        AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?)
        AND (state <> 'BLOCKED' OR retry_not_before_ms IS NULL OR retry_not_before_ms <= ?)${
          passedOver === 0
            ? ''
            : `\n        AND case_id NOT IN (${Array.from({ length: passedOver }, () => '?').join(', ')})`
        }
      ORDER BY updated_ms, case_id
      LIMIT 1
      FOR UPDATE SKIP LOCKED`

/** Whether the locked candidate can be leased after its log is re-derived (its columns corrected when stale). */
const candidateRunnable = async (ctx: SqlContext, trx: Knex.Transaction, caseId: string, now: number) => {
  const row = await caseRow(ctx, trx, caseId, false)
  const scan = await scanRows(trx, row, { canonical: false })
  if (scan.findings.some(isError)) {
    await trx('vba_cases').where({ case_id: caseId }).update({ updated_ms: now })
    return false
  }
  const stored = (await trx('vba_cases')
    .select(...QUEUE_COLUMNS)
    .where({ case_id: caseId })
    .first()) as Record<string, unknown>
  if (queueDifferences(stored, scan.state).length > 0)
    await trx('vba_cases').where({ case_id: caseId }).update(queueColumns(scan.state))
  return runnability(queueRow(scan.state), now).runnable
}

/** Leases the locked case to `worker` until `expiresAt` (a new token). */
const grantLease = async (trx: Knex.Transaction, caseId: string, worker: string, expiresAt: number): Promise<Lease> => {
  const lease: Lease = { caseId, worker, token: randomUUID(), expiresAt }
  await trx('vba_cases')
    .where({ case_id: caseId })
    .update({ lease_owner: worker, lease_token: lease.token, lease_expires_ms: lease.expiresAt })
  return lease
}

/**
 * Leases one runnable case to `worker`, or null (cases held by a live lease are skipped; an
 * expired one is taken over). The queue columns only nominate candidates: each is re-derived from
 * its log before it is leased, so a row whose columns were edited (or left stale) is corrected,
 * not trusted, and a case whose log does not verify is passed over (and moved to the back).
 */
export const claimCase = async (ctx: SqlContext, worker: string, leaseMs: number): Promise<Lease | null> => {
  checkLease(worker, leaseMs)
  return ctx.transaction(async (trx) => {
    const now = await dbNowMs(trx, ctx.dialect)
    const passed: string[] = []
    while (passed.length < CANDIDATES) {
      const sql = claimCandidateSql(ctx.dialect, passed.length)
      const rows = ctx.dialect.rows<{ case_id: string }>(await trx.raw(sql, [now, now, ...passed]))
      const caseId = rows[0]?.case_id
      if (caseId === undefined) return null
      if (!(await candidateRunnable(ctx, trx, caseId, now))) {
        passed.push(caseId)
        continue
      }
      return grantLease(trx, caseId, worker, now + leaseMs)
    }
    return null
  })
}

/** The live lease on one case (the database's clock), or null; CASE_NOT_FOUND for an unknown case. */
export const caseLease = async (ctx: SqlContext, caseId: string): Promise<QueueEntry['lease']> =>
  ctx.guard(async () => {
    const row = await caseRow(ctx, ctx.k, caseId, false)
    const now = await dbNowMs(ctx.k, ctx.dialect)
    return row.lease_expires_ms !== null && row.lease_expires_ms > now && row.lease_owner !== null
      ? { worker: row.lease_owner, expires_at: new Date(row.lease_expires_ms).toISOString() }
      : null
  })

/** Leases one named case, runnable or not, unless another worker's live lease holds it (CASE_LEASED). */
export const leaseNamedCase = async (
  ctx: SqlContext,
  caseId: string,
  worker: string,
  leaseMs: number
): Promise<Lease> => {
  checkLease(worker, leaseMs)
  return ctx.transaction(async (trx) => {
    const row = await caseRow(ctx, trx, caseId, true)
    const now = await dbNowMs(trx, ctx.dialect)
    if (row.lease_expires_ms !== null && row.lease_expires_ms > now && row.lease_owner !== worker) {
      fail(
        'CASE_LEASED',
        `case ${caseId} is being worked on by ${String(row.lease_owner)} until ${new Date(row.lease_expires_ms).toISOString()}`,
        { case_id: caseId, worker: row.lease_owner, expires_at: new Date(row.lease_expires_ms).toISOString() }
      )
    }
    return grantLease(trx, caseId, worker, now + leaseMs)
  })
}

/** Extends a lease that is still held (LEASE_LOST otherwise). */
export const renewLease = async (ctx: SqlContext, lease: Lease, leaseMs: number): Promise<Lease> => {
  checkLease(lease.worker, leaseMs)
  return ctx.transaction(async (trx) => {
    const now = await dbNowMs(trx, ctx.dialect)
    const n = await trx('vba_cases')
      .where({ case_id: lease.caseId, lease_token: lease.token })
      .andWhere('lease_expires_ms', '>', now)
      .update({ lease_expires_ms: now + leaseMs })
    if (n !== 1)
      fail('LEASE_LOST', `the lease of ${lease.worker} on case ${lease.caseId} was lost (expired or taken over)`, {
        case_id: lease.caseId,
        worker: lease.worker
      })
    return { ...lease, expiresAt: now + leaseMs }
  })
}

/** Gives a case back (by lease, or by case id and worker name); false when it was not held. */
export const releaseLease = async (
  ctx: SqlContext,
  l: Lease | { readonly caseId: string; readonly worker: string }
): Promise<boolean> =>
  ctx.guard(async () => {
    const where =
      'token' in l ? { case_id: l.caseId, lease_token: l.token } : { case_id: l.caseId, lease_owner: l.worker }
    const n = await ctx
      .k('vba_cases')
      .where(where)
      .update({ lease_owner: null, lease_token: null, lease_expires_ms: null })
    return n === 1
  })
