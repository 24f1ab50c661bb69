/**
 * What a SQL store keeps beside the log must agree with it: no event rows past the case row's
 * head, exactly the command rows the log's commands make, and queue columns that are the fold of
 * the log (src/projections/queue.ts). Verify reports every difference as an error finding; the
 * queue's claim re-derives the columns of a case it picks before it trusts them.
 */
import type { Knex } from 'knex'
import type { CaseState } from '../../domain/case-state.js'
import { finding, type Finding } from '../../events/findings.js'
import type { CommandIndex } from '../case-store/id-table.js'
import { HEAD_FILE, LOG_FILE } from '../case-store/layout.js'
import { num, QUEUE_COLUMNS, queueColumns } from './rows.js'

const same = (a: unknown, b: unknown): boolean =>
  a === null || a === undefined
    ? b === null || b === undefined
    : b !== null && b !== undefined && String(a) === String(b)

/** The queue columns of a stored row that differ from the fold of its log. */
export const queueDifferences = (row: Record<string, unknown>, state: CaseState): string[] => {
  const want = queueColumns(state)
  return QUEUE_COLUMNS.filter((c) => !same(row[c], want[c]))
}

/** Findings about rows past the head, command rows and queue columns of one case. */
export const storeConsistency = async (
  q: Knex | Knex.Transaction,
  caseId: string,
  generation: number,
  commands: CommandIndex,
  state: CaseState
): Promise<Finding[]> => {
  const out: Finding[] = []
  const beyond = (await q('vba_events')
    .count({ n: '*' })
    .min({ first: 'seq' })
    .where('case_id', caseId)
    .andWhere('seq', '>', generation)
    .first()) as Record<string, unknown> | undefined
  const n = num(beyond?.['n'] ?? 0)
  if (n > 0)
    out.push(
      finding(
        'STORE_ROWS_BEYOND_HEAD',
        `${n} event row(s) past the head (seq ${generation}), the first at seq ${num(beyond?.['first'])}: the store holds events the case never acknowledged`,
        { path: LOG_FILE, data: { rows: n, head_seq: generation } }
      )
    )
  const rows = (await q('vba_commands')
    .select('command_id', 'first_seq', 'last_seq')
    .where('case_id', caseId)) as Array<Record<string, unknown>>
  const seen = new Set<string>()
  for (const r of rows) {
    const id = String(r['command_id'])
    seen.add(id)
    const span = commands.get(id)
    if (span === undefined)
      out.push(
        finding('STORE_COMMAND_ROWS', `command row ${id} names no command of the log`, { data: { command_id: id } })
      )
    else if (span.firstSeq !== num(r['first_seq']) || span.lastSeq !== num(r['last_seq']))
      out.push(
        finding(
          'STORE_COMMAND_ROWS',
          `command row ${id} spans ${num(r['first_seq'])}-${num(r['last_seq'])}, the log ${span.firstSeq}-${span.lastSeq}`,
          { data: { command_id: id } }
        )
      )
  }
  for (const id of commands.keys())
    if (!seen.has(id))
      out.push(
        finding('STORE_COMMAND_ROWS', `command ${id} of the log has no command row (its id could be recorded twice)`, {
          data: { command_id: id }
        })
      )
  const caseRow = (await q('vba_cases')
    .select(...QUEUE_COLUMNS)
    .where({ case_id: caseId })
    .first()) as Record<string, unknown> | undefined
  if (caseRow !== undefined) {
    const diff = queueDifferences(caseRow, state)
    if (diff.length > 0)
      out.push(
        finding(
          'STORE_QUEUE_MISMATCH',
          `the queue columns ${diff.join(', ')} differ from the fold of the log (state ${state.state}); a claim would trust them`,
          { path: HEAD_FILE, data: { columns: diff } }
        )
      )
  }
  return out
}
