/**
 * The queue of the SQL store: every case with its queue row (kept in the same transaction as
 * every append, so it never lags the log), claims that skip locked and leased cases (`FOR UPDATE
 * SKIP LOCKED`), leases on the database's clock, renewals and releases.
 */
import { randomUUID } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { checkWorkerName } from '../../domain/worker-name.js'
import { queueRow, runnability, TIMED_REASONS, type QueueEntry, type QueueRow } from '../../projections/queue.js'
import { isError } from '../../events/findings.js'
import { fail, FailureError } from '../../failures/error.js'
import { LEASE_MS, type Lease } from '../case-store/store.js'
import type { SqlContext } from './connection.js'
import { dbNowMs } from './dialect.js'
import { buf, caseRow, num, numOrNull, queueColumns } from './rows.js'
import { scanRows } from './scan-rows.js'
import { QUEUE_COLUMNS, queueDifferences } from './consistency.js'

const checkLease = (worker: string, leaseMs: number): void => {
  const name = checkWorkerName(worker)
  if (E.isLeft(name)) throw new FailureError(name.left)
  if (!Number.isSafeInteger(leaseMs) || leaseMs < LEASE_MS.min || leaseMs > LEASE_MS.max)
    fail('INVALID_ARGUMENT', 'a lease lasts between 1000 ms and 24 hours')
}

const titleOf = (declaration: Buffer): string | null => {
  try {
    const t = (JSON.parse(declaration.toString('utf8')) as { title?: unknown }).title
    return typeof t === 'string' ? t : null
  } catch {
    return null
  }
}

const failureOf = (code: unknown, message: unknown): QueueRow['last_model_failure'] =>
  typeof code === 'string' ? { code, message: typeof message === 'string' ? message : '' } : null

/** Every case with its queue row, runnable ones first (oldest update first), then the rest. */
export const listQueue = async (ctx: SqlContext, o: { readonly limit?: number } = {}): Promise<QueueEntry[]> =>
  ctx.guard(async () => {
    const now = await dbNowMs(ctx.k, ctx.dialect)
    const rows = (await ctx
      .k('vba_cases')
      .select(
        'case_id',
        'declaration',
        'generation',
        'state',
        'reason',
        'retry_not_before',
        'revision',
        'budget_left',
        'pending_plan',
        'model',
        'tokens_total',
        'last_failure_code',
        'last_failure_message',
        'lease_owner',
        'lease_expires_ms',
        'updated_ms',
        'last_event_at',
        'created_at'
      )
      .orderBy([{ column: 'updated_ms' }, { column: 'case_id' }])
      .limit(o.limit ?? 10_000)) as Array<Record<string, unknown>>
    const entries = rows.map((r): QueueEntry => {
      const q: QueueRow = {
        state: r['state'] as QueueRow['state'],
        reason: (r['reason'] as string | null) ?? null,
        retry_not_before: (r['retry_not_before'] as string | null) ?? null,
        revision: num(r['revision']),
        budget_left: numOrNull(r['budget_left']),
        pending_plan: (r['pending_plan'] as string | null) ?? null,
        model: (r['model'] as string | null) ?? null,
        tokens_total: num(r['tokens_total'] ?? 0),
        last_model_failure: failureOf(r['last_failure_code'], r['last_failure_message'])
      }
      const run = runnability(q, now)
      const expires = numOrNull(r['lease_expires_ms'])
      const leased = expires !== null && expires > now && r['lease_owner'] !== null
      return {
        case_id: String(r['case_id']),
        title: titleOf(buf(r['declaration'])),
        generation: num(r['generation']),
        ...q,
        runnable: run.runnable && !leased,
        why: leased ? `leased by ${String(r['lease_owner'])}` : run.why,
        lease: leased ? { worker: String(r['lease_owner']), expires_at: new Date(expires).toISOString() } : null,
        last_activity: String(r['last_event_at'] ?? r['created_at'])
      }
    })
    return [...entries.filter((e) => e.runnable), ...entries.filter((e) => !e.runnable)]
  })

/** Candidates one claim looks at (their queue columns are re-derived from their logs). */
const CANDIDATES = 8

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
    const timed = TIMED_REASONS.map(() => '?').join(', ')
    const sql = `SELECT case_id FROM vba_cases
      WHERE revision > 0
        AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?)
        AND (state IN ('NOT_STARTED', 'INTERPRETING', 'INVESTIGATING')
             OR (state = 'BLOCKED' AND reason IN (${timed}) AND (retry_not_before_ms IS NULL OR retry_not_before_ms <= ?)))
      ORDER BY updated_ms, case_id
      LIMIT ${CANDIDATES}
      FOR UPDATE SKIP LOCKED`
    const rows = ctx.dialect.rows<{ case_id: string }>(await trx.raw(sql, [now, ...TIMED_REASONS, now]))
    for (const { case_id: caseId } of rows) {
      const row = await caseRow(ctx, trx, caseId, false)
      const scan = await scanRows(trx, row, { canonical: false })
      if (scan.findings.some(isError)) {
        await trx('vba_cases').where({ case_id: caseId }).update({ updated_ms: now })
        continue
      }
      const stored = (await trx('vba_cases')
        .select(...QUEUE_COLUMNS)
        .where({ case_id: caseId })
        .first()) as Record<string, unknown>
      if (queueDifferences(stored, scan.state).length > 0)
        await trx('vba_cases').where({ case_id: caseId }).update(queueColumns(scan.state))
      if (!runnability(queueRow(scan.state), now).runnable) continue
      const lease: Lease = { caseId, worker, token: randomUUID(), expiresAt: now + leaseMs }
      await trx('vba_cases')
        .where({ case_id: caseId })
        .update({ lease_owner: worker, lease_token: lease.token, lease_expires_ms: lease.expiresAt })
      return lease
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
    const lease: Lease = { caseId, worker, token: randomUUID(), expiresAt: now + leaseMs }
    await trx('vba_cases')
      .where({ case_id: caseId })
      .update({ lease_owner: worker, lease_token: lease.token, lease_expires_ms: lease.expiresAt })
    return lease
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
