/**
 * The checks of a stored log, like the directory scan: the declaration (canonical), every row's
 * line through the same {@link logChecker} (UTF-8, envelope, canonical form, hash, chain, ids,
 * command contiguity, the rule fold), the rows' columns against their lines, and the case row's
 * head against the log's end.
 */
import type { Knex } from 'knex'
import * as E from 'fp-ts/lib/Either.js'
import { CaseDeclaration } from '../../events/envelope.js'
import { finding, type Finding } from '../../events/findings.js'
import { decodeRecordFile, type ScanResult } from '../case-store/scan.js'
import { findingSink, logScanResult, startLogScan, type LogScanOptions } from '../case-store/log-scan.js'
import { DECLARATION_FILE, HEAD_FILE, LOG_FILE } from '../case-store/layout.js'
import { buf, num, PAGE_ROWS, type CaseRow } from './rows.js'

export interface ScanRowsOptions extends LogScanOptions {
  /** Stop at this generation (the head read in the same transaction). */
  readonly until?: number
}

/** The declaration stored in `row`, or null when it is invalid or names another case (reported). */
const storedDeclaration = (row: CaseRow, report: (f: Finding) => void): CaseDeclaration | null => {
  const decl = decodeRecordFile(row.declaration.toString('utf8'), CaseDeclaration)
  if (E.isLeft(decl)) {
    report(
      finding('CASE_DECLARATION_INVALID', `the stored declaration is invalid: ${decl.left}`, { path: DECLARATION_FILE })
    )
    return null
  }
  const declaration = decl.right
  if (declaration.case_id !== row.case_id)
    report(
      finding(
        'CASE_DECLARATION_INVALID',
        `the stored declaration names case ${declaration.case_id}, the row ${row.case_id}`,
        { path: DECLARATION_FILE }
      )
    )
  return declaration
}

/** Scans the stored log of `row` (from the start, or from `resume`). */
export const scanRows = async (
  q: Knex | Knex.Transaction,
  row: CaseRow,
  o: ScanRowsOptions = {}
): Promise<ScanResult> => {
  const sink = findingSink()
  const report = sink.report
  // A catch-up (resume) continues a log whose declaration the handle checked already.
  const declaration = o.resume === undefined ? storedDeclaration(row, report) : null
  const scan = startLogScan(declaration, o, report)
  const { start, checker } = scan
  const until = o.until ?? row.generation
  let pos = start.bytes
  let after = start.seq
  let expected = start.seq + 1
  for (;;) {
    const rows = (await q('vba_events')
      .select('seq', 'command_id', 'hash', 'line')
      .where('case_id', row.case_id)
      .andWhere('seq', '>', after)
      .andWhere('seq', '<=', until)
      .orderBy('seq')
      .limit(PAGE_ROWS)) as Array<Record<string, unknown>>
    for (const r of rows) {
      const seq = num(r['seq'])
      const line = buf(r['line'])
      if (seq !== expected)
        report(
          finding('SEQ_GAP', `the stored log has no event ${expected} (next stored: ${seq})`, {
            path: LOG_FILE,
            seq: expected
          })
        )
      expected = seq + 1
      const end = pos + line.length + 1
      checker.line(line, null, pos, end)
      if (checker.seq() === seq && (checker.hash() !== r['hash'] || checker.lastCommand() !== r['command_id'])) {
        report(
          finding('HEAD_MISMATCH', `the row of event ${seq} does not match its line (hash or command id column)`, {
            path: LOG_FILE,
            seq
          })
        )
      }
      pos = end
      after = seq
    }
    if (rows.length < PAGE_ROWS) break
  }
  checker.end()
  if (checker.seq() !== row.generation || checker.hash() !== row.head_hash || checker.bytes() !== row.log_bytes) {
    report(
      finding(
        'HEAD_MISMATCH',
        `the case row acknowledges seq ${row.generation}, the stored log ends at seq ${checker.seq()}${checker.hash() === row.head_hash ? '' : ' with another hash'}`,
        { path: HEAD_FILE, data: { head_seq: row.generation, log_seq: checker.seq() } }
      )
    )
  }
  return logScanResult(
    declaration,
    { seq: row.generation, hash: row.head_hash, bytes: row.log_bytes },
    sink,
    scan,
    checker.bytes()
  )
}
