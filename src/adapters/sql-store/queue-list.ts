/**
 * Listing the SQL store's queue: pages in case-id order after a key (keyset: each page reads only
 * its own rows, through the primary key or the (state, case_id) index), the counts per state from
 * an aggregate over the state index (no declaration is read), one case's entry, and the older
 * listing by last update that the worker's idle check reads.
 */
import type { CaseLifecycleState } from '../../domain/case-state.js'
import {
  runnability,
  type QueueCounts,
  type QueueEntry,
  type QueuePage,
  type QueueRow
} from '../../projections/queue.js'
import { checkPageOptions } from '../case-store/queue-page.js'
import type { QueuePageOptions } from '../../projections/queue.js'
import type { SqlContext } from './connection.js'
import { dbNowMs } from './dialect.js'
import { buf, num, numOrNull, QUEUE_COLUMNS } from './rows.js'

/** The columns of a queue entry: the case's identity, its queue columns, its lease and times. */
const ENTRY_COLUMNS = [
  'case_id',
  'declaration',
  'generation',
  ...QUEUE_COLUMNS,
  'lease_owner',
  'lease_expires_ms',
  'updated_ms',
  'last_event_at',
  'created_at'
] as const

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

/** The queue entry of a case row read with {@link ENTRY_COLUMNS}, at the database's time `now`. */
const entryOf = (r: Record<string, unknown>, now: number): QueueEntry => {
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
}

/** Cases by last update (oldest first), at most `limit` (default 10,000), runnable ones first. */
export const listQueue = async (ctx: SqlContext, o: { readonly limit?: number } = {}): Promise<QueueEntry[]> =>
  ctx.guard(async () => {
    const now = await dbNowMs(ctx.k, ctx.dialect)
    const rows = (await ctx
      .k('vba_cases')
      .select(...ENTRY_COLUMNS)
      .orderBy([{ column: 'updated_ms' }, { column: 'case_id' }])
      .limit(o.limit ?? 10_000)) as Array<Record<string, unknown>>
    const entries = rows.map((r) => entryOf(r, now))
    return [...entries.filter((e) => e.runnable), ...entries.filter((e) => !e.runnable)]
  })

/** One case's queue entry, or null when the store holds no such case. */
export const queueEntry = async (ctx: SqlContext, caseId: string): Promise<QueueEntry | null> =>
  ctx.guard(async () => {
    const now = await dbNowMs(ctx.k, ctx.dialect)
    const r = (await ctx
      .k('vba_cases')
      .select(...ENTRY_COLUMNS)
      .where({ case_id: caseId })
      .first()) as Record<string, unknown> | undefined
    return r === undefined ? null : entryOf(r, now)
  })

/** Every case counted by state (the state index), and the runnable ones (the claim index). */
export const queueCounts = async (ctx: SqlContext, now: number): Promise<QueueCounts> => {
  const rows = (await ctx.k('vba_cases').select('state').count({ n: '*' }).groupBy('state')) as Array<
    Record<string, unknown>
  >
  const by: Partial<Record<CaseLifecycleState, number>> = {}
  for (const r of rows) by[r['state'] as CaseLifecycleState] = num(r['n'])
  const run = ctx.dialect.rows<{ n: unknown }>(
    await ctx.k.raw(
      `SELECT COUNT(*) AS n FROM vba_cases WHERE claimable = 1
        AND (lease_expires_ms IS NULL OR lease_expires_ms <= ?)
        AND (state <> 'BLOCKED' OR retry_not_before_ms IS NULL OR retry_not_before_ms <= ?)`,
      [now, now]
    )
  )
  return { total: Object.values(by).reduce((a, b) => a + b, 0), runnable: num(run[0]?.n ?? 0), by_state: by }
}

/**
 * The SQL of one page: the rows after the key in case-id order, one more than the page holds
 * (to tell whether another page follows). In some states: one ordered range of the (state,
 * case_id) index per state, merged, so a page reads about `limit` rows per state asked for.
 */
export const pageSql = (
  o: { readonly after: string | null; readonly states: readonly string[] | null },
  take: number
): { readonly sql: string; readonly bindings: string[] } => {
  const cols = ENTRY_COLUMNS.join(', ')
  const after = o.after === null ? '' : ' AND case_id > ?'
  const one = (state: boolean): string =>
    `SELECT ${cols} FROM vba_cases WHERE ${state ? 'state = ?' : '1 = 1'}${after} ORDER BY case_id LIMIT ${take}`
  if (o.states === null) return { sql: one(false), bindings: o.after === null ? [] : [o.after] }
  const [only] = o.states
  if (o.states.length === 1 && only !== undefined)
    return { sql: one(true), bindings: o.after === null ? [only] : [only, o.after] }
  const parts = o.states.map(() => `(${one(true)})`).join(' UNION ALL ')
  return {
    sql: `SELECT * FROM (${parts}) AS page ORDER BY case_id LIMIT ${take}`,
    bindings: o.states.flatMap((s) => (o.after === null ? [s] : [s, o.after]))
  }
}

/** One page of the queue (see {@link QueuePageOptions}); INVALID_ARGUMENT for options out of bounds. */
export const queuePage = async (ctx: SqlContext, options: QueuePageOptions = {}): Promise<QueuePage> => {
  const o = checkPageOptions(options)
  return ctx.guard(async () => {
    const now = await dbNowMs(ctx.k, ctx.dialect)
    const { sql, bindings } = pageSql(o, o.limit + 1)
    const rows = ctx.dialect.rows<Record<string, unknown>>(await ctx.k.raw(sql, bindings))
    const entries = rows.slice(0, o.limit).map((r) => entryOf(r, now))
    const last = entries[entries.length - 1]
    return {
      entries,
      next: rows.length > o.limit && last !== undefined ? last.case_id : null,
      counts: o.counts ? await queueCounts(ctx, now) : null
    }
  })
}
