/**
 * Reading and writing the SQL store's rows: the case row (head, lease, queue columns), event
 * lines, command spans and objects. Values come back from the drivers as numbers, strings or
 * buffers depending on the dialect; these helpers read them one way.
 */
import type { Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import type { CaseState } from '../../domain/case-state.js'
import { EventEnvelope } from '../../events/envelope.js'
import { claimable, queueRow } from '../../projections/queue.js'
import { fail } from '../../failures/error.js'
import type { CommandSpan } from '../case-store/scan.js'
import type { SqlContext } from './connection.js'
import { built, keptStatements } from './kept-statements.js'

/** Event rows per INSERT statement. */
export const INSERT_ROWS = 500
/** Rows read per query when a log is scanned. */
export const PAGE_ROWS = 2000

export const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v))
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v))
export const buf = (v: unknown): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v as Uint8Array))

/** The head of a case as its row acknowledges it. */
export interface CaseRow {
  readonly case_id: string
  readonly declaration: Buffer
  readonly generation: number
  readonly head_hash: string
  readonly log_bytes: number
}

export interface LeasedCaseRow extends CaseRow {
  readonly lease_owner: string | null
  readonly lease_token: string | null
  readonly lease_expires_ms: number | null
}

/** How a case row is read beside its head and lease. */
export interface CaseRowRead {
  /** Locked FOR UPDATE. */
  readonly lock: boolean
  /** With the database's clock as `now_ms` (an append's lease check) instead of the declaration. */
  readonly clock?: boolean
  /** A condition taken before the row's lock, its one binding the case id (an append's turnstile). */
  readonly before?: string
}

/** The case row as `read` asks for it (`now_ms`: null unless `clock`), or CASE_NOT_FOUND. */
export const readCaseRow = async (
  ctx: SqlContext,
  q: Knex | Knex.Transaction,
  caseId: string,
  read: CaseRowRead
): Promise<LeasedCaseRow & { readonly now_ms: number | null }> => {
  const clock = read.clock === true
  const byKnex = () => {
    let query = q('vba_cases')
      .select(
        'case_id',
        ...(clock ? [] : ['declaration']),
        'generation',
        'head_hash',
        'log_bytes',
        'lease_owner',
        'lease_token',
        'lease_expires_ms',
        ...(clock ? [q.raw(`${ctx.dialect.nowMs} AS now_ms`)] : [])
      )
      .where({ case_id: caseId })
    if (read.before !== undefined) query = query.whereRaw(`${read.before} IS NOT NULL`, [caseId])
    if (read.lock) query = query.forUpdate()
    return query.first()
  }
  // Kept per shape, as the appends' statements are (the values: the case id, and LIMIT 1).
  const shape = {
    key: `row ${read.lock ? 'lock' : '-'} ${clock ? 'clock' : '-'} ${read.before ?? '-'}`,
    bindings: read.before === undefined ? [caseId, 1] : [caseId, caseId, 1]
  }
  const { sql, bindings } = keptStatements(ctx.k).statement(shape, () => built(byKnex()))
  const row = ctx.dialect.rows<Record<string, unknown>>(await q.raw(sql, bindings as Knex.RawBinding[]))[0]
  if (row === undefined)
    return fail('CASE_NOT_FOUND', `no case ${caseId} in the store ${ctx.display}`, { case_id: caseId })
  return {
    case_id: String(row['case_id']),
    declaration: clock ? Buffer.alloc(0) : buf(row['declaration']),
    generation: num(row['generation']),
    head_hash: String(row['head_hash']),
    log_bytes: num(row['log_bytes']),
    lease_owner: (row['lease_owner'] as string | null) ?? null,
    lease_token: (row['lease_token'] as string | null) ?? null,
    lease_expires_ms: numOrNull(row['lease_expires_ms']),
    now_ms: clock ? num(row['now_ms']) : null
  }
}

/** The case row (locked with `lock`), or CASE_NOT_FOUND. */
export const caseRow = (
  ctx: SqlContext,
  q: Knex | Knex.Transaction,
  caseId: string,
  lock: boolean
): Promise<LeasedCaseRow> => readCaseRow(ctx, q, caseId, { lock })

/**
 * The queue columns of a case row: the fold of its log ({@link queueColumns}), compared with it by
 * verify and the claim (the lease and timestamps are the store's own).
 */
export const QUEUE_COLUMNS = [
  'state',
  'reason',
  'retry_not_before',
  'retry_not_before_ms',
  'revision',
  'budget_left',
  'pending_plan',
  'model',
  'tokens_total',
  'last_failure_code',
  'last_failure_message',
  'claimable'
] as const

export type QueueColumn = (typeof QUEUE_COLUMNS)[number]

/** The queue columns of a case row, from the case state (a pure projection, {@link queueRow}). */
export const queueColumns = (s: CaseState): Record<QueueColumn, unknown> => {
  const r = queueRow(s)
  return {
    state: r.state,
    reason: r.reason,
    retry_not_before: r.retry_not_before,
    retry_not_before_ms: r.retry_not_before === null ? null : Date.parse(r.retry_not_before),
    revision: r.revision,
    budget_left: r.budget_left,
    pending_plan: r.pending_plan,
    model: r.model,
    tokens_total: r.tokens_total,
    last_failure_code: r.last_model_failure?.code ?? null,
    last_failure_message: r.last_model_failure?.message.slice(0, 500) ?? null,
    claimable: claimable(r) ? 1 : 0
  }
}

export interface EventRow {
  readonly seq: number
  readonly command_id: string
  readonly hash: string
  readonly line: Buffer
}

export const insertEvents = async (
  trx: Knex.Transaction,
  caseId: string,
  lines: readonly EventRow[]
): Promise<void> => {
  for (let i = 0; i < lines.length; i += INSERT_ROWS) {
    await trx('vba_events').insert(lines.slice(i, i + INSERT_ROWS).map((l) => ({ case_id: caseId, ...l })))
  }
}

/** The events of a recorded command, decoded. */
export const recordedEvents = async (
  q: Knex | Knex.Transaction,
  caseId: string,
  span: CommandSpan
): Promise<EventEnvelope[]> => {
  const rows = (await q('vba_events')
    .select('line')
    .where('case_id', caseId)
    .andWhere('seq', '>=', span.firstSeq)
    .andWhere('seq', '<=', span.lastSeq)
    .orderBy('seq')) as Array<Record<string, unknown>>
  return rows.map((r) => {
    const decoded = EventEnvelope.decode(JSON.parse(buf(r['line']).toString('utf8')))
    if (E.isLeft(decoded)) return fail('CASE_CORRUPT', 'recorded event no longer decodes')
    return decoded.right
  })
}
