/**
 * The summary beside a case's log (`.vba-summary`): the case's queue row as of one head, written by
 * the directory store after every acknowledged append, so that a listing of thousands of cases
 * (`vba serve`) reads HEAD and the summary instead of folding every log.
 *
 * A summary is a cache, never evidence: it is not part of the package (no export holds it, verify
 * ignores it), it is written after HEAD without a lock or a flush, and it is used only when the head
 * it names is HEAD's, member for member (a summary of an older head, one torn or unreadable, is not
 * used: the log is read instead). One consistent with HEAD but false (written by hand) is caught
 * when the case is opened: the listing then checks the log and lists what the log says
 * (`DirectoryQueue.check`).
 */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import type { CaseState } from '../../domain/case-state.js'
import { canonicalJson } from '../../events/canonical.js'
import { Head } from '../../events/envelope.js'
import { LifecycleState } from '../../events/investigation-events.js'
import { queueRow, type QueueRow } from '../../projections/queue.js'
import { tempName } from '../fs-util.js'
import { readRegularSync } from '../regular-file.js'
import { SUMMARY_FILE, TEMP_PREFIX } from './layout.js'
import { decodeRecordFile } from './scan.js'

const nullable = <C extends t.Mixed>(c: C) => t.union([c, t.null])

/** The queue row as a summary holds it (the fields of {@link QueueRow}). */
const SummaryRow = t.type({
  state: t.union([LifecycleState, t.literal('NOT_STARTED')]),
  reason: nullable(t.string),
  retry_not_before: nullable(t.string),
  revision: t.number,
  budget_left: nullable(t.number),
  pending_plan: nullable(t.string),
  model: nullable(t.string),
  tokens_total: t.number,
  last_model_failure: nullable(t.type({ code: t.string, message: t.string }))
})

/** The summary file: its format, the head it was folded at, the queue row there. */
export const CaseSummary = t.type({ format: t.literal('vba-summary/1'), head: Head, row: SummaryRow }, 'CaseSummary')
export type CaseSummary = t.TypeOf<typeof CaseSummary>

/**
 * Writes the summary of `state` at `head` (a temporary file renamed over the old one). A summary
 * that cannot be written is left out: the append it follows is acknowledged already.
 */
export const writeSummary = async (dir: string, head: Head, state: CaseState): Promise<void> => {
  const summary: CaseSummary = { format: 'vba-summary/1', head, row: queueRow(state) }
  const text = canonicalJson(summary)
  if (E.isLeft(text)) return
  const tmp = path.join(dir, tempName(TEMP_PREFIX))
  try {
    await fsp.writeFile(tmp, `${text.right}\n`, { flag: 'wx' })
    await fsp.rename(tmp, path.join(dir, SUMMARY_FILE))
  } catch {
    await fsp.rm(tmp, { force: true }).catch(() => undefined)
  }
}

/**
 * The queue row of a case's summary when the summary names exactly the head in `headBytes` (HEAD's
 * bytes, read by the caller); null when there is none, it does not decode, or it names another head.
 */
export const summaryAtHead = (dir: string, headBytes: Buffer): QueueRow | null => {
  let text: string
  try {
    text = readRegularSync(path.join(dir, SUMMARY_FILE), { maxBytes: 64 << 10 }).toString('utf8')
  } catch {
    return null
  }
  const head = decodeRecordFile(headBytes.toString('utf8'), Head)
  const summary = decodeRecordFile(text, CaseSummary)
  if (E.isLeft(head) || E.isLeft(summary)) return null
  const [a, b] = [head.right, summary.right.head]
  return a.seq === b.seq && a.hash === b.hash && a.bytes === b.bytes ? summary.right.row : null
}
