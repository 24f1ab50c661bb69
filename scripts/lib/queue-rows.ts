/**
 * Synthetic queue rows for the scale tests and bench/store-scale: `count` copies of one real case
 * row of a SQL store (its declaration, head and queue columns as a prepared case has them), under
 * new case ids `${prefix}${i}` (i zero-padded to 7 digits), updated `stepMs` apart after `fromMs`,
 * written by one INSERT ... SELECT per 100,000 rows over generate_series (PostgreSQL) or a
 * sequence table (MariaDB's seq_A_to_B). Only the case row is copied, not the log: a copy is a row to list,
 * count and skip; a claim that reaches one finds its log does not verify and passes it over.
 */
import type { Knex } from 'knex'
import { QUEUE_COLUMNS } from '../../src/adapters/sql-store/rows.js'

/** The columns a copy takes from its source row: the head, then the queue columns verify compares. */
const COPIED = [
  'declaration',
  'created_at',
  'generation',
  'head_hash',
  'log_bytes',
  'last_event_at',
  ...QUEUE_COLUMNS
] as const

export interface CopyOptions {
  readonly prefix: string
  /** The first copy's number (default 0). */
  readonly first?: number
  readonly fromMs: number
  readonly stepMs?: number
  /** Override of copied columns, as SQL expressions over the source row `c` and the number `g.i`. */
  readonly set?: Readonly<Partial<Record<(typeof COPIED)[number], string>>>
}

const CHUNK = 100_000

/** Copies the row of `source` `count` times (see the module comment); returns the rows written. */
export const copyQueueRows = async (knex: Knex, source: string, count: number, o: CopyOptions): Promise<number> => {
  const pg = knex.client.config.client === 'pg'
  const step = o.stepMs ?? 1
  const first = o.first ?? 0
  const cols = COPIED.map((c) => o.set?.[c] ?? `c.${c}`)
  let written = 0
  for (let from = 0; from < count; from += CHUNK) {
    const n = Math.min(CHUNK, count - from)
    const lo = first + from
    const id = pg ? `? || lpad(g.i::text, 7, '0')` : `CONCAT(?, LPAD(g.i, 7, '0'))`
    const select = `SELECT ${id}, ${cols.join(', ')}, CAST(? AS ${pg ? 'BIGINT' : 'SIGNED'}) + (g.i - ${first}) * ${step}
      FROM vba_cases c CROSS JOIN ${pg ? `generate_series(${lo}, ${lo + n - 1}) AS g(i)` : `(SELECT seq AS i FROM seq_${lo}_to_${lo + n - 1}) AS g`}
      WHERE c.case_id = ?`
    await knex.raw(`INSERT INTO vba_cases (case_id, ${COPIED.join(', ')}, updated_ms) ${select}`, [
      o.prefix,
      o.fromMs,
      source
    ])
    written += n
  }
  return written
}
