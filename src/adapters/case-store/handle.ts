/**
 * An open case, whatever store it lives in: the cursor a writer appends through, the failure of a
 * case that does not verify, and catching a handle up with what other writers appended (checked
 * like open checks it). The directory store and the SQL store share these, so they cannot
 * disagree about what a moved, replaced or corrupt case is.
 */
import { failure, type Failure } from '../../failures/failure.js'
import type { CaseState } from '../../domain/case-state.js'
import type { NotApplied } from '../../domain/rules.js'
import type { CaseDeclaration } from '../../events/envelope.js'
import { causeFirst, finding, isError, type Finding } from '../../events/findings.js'
import { FailureError } from '../../failures/error.js'
import { HEAD_FILE } from './layout.js'
import type { ScanResult } from './scan.js'
import type { CommandIndex, IdSet } from './id-table.js'
import type { CaseStore } from './store.js'

/** Where an open handle stands in the log; advanced by every append through this handle. @category cases */
export interface Cursor {
  seq: number
  hash: string
  bytes: number
  commands: CommandIndex
  lastCommand: string | null
  /** The case state at `seq` (the rules' fold): what deciders decide on. */
  state: CaseState
  /** Every event id up to `seq`: a writer never acknowledges an id twice. */
  readonly ids: IdSet
}

/** An open case: what a writer appends through (reads need no handle). @category cases */
export interface CaseHandle {
  /** The store the case lives in, and its reference there (a directory, or a case id). */
  readonly store: CaseStore
  readonly ref: string
  /** The case directory (directory store), or '' (other stores). */
  readonly dir: string
  readonly declaration: CaseDeclaration
  readonly cursor: Cursor
  /** Crash leftovers seen when the case was opened (notices, nothing was changed). */
  readonly notices: readonly Finding[]
  /**
   * What the rules could not check when the case was opened (RULE_NOT_APPLIED: old event versions, no binding recorded).
   * @internal
   */
  readonly notApplied: readonly NotApplied[]
}

/** The generation (last sequence number) this handle has seen. */
export const generationOf = (h: CaseHandle): number => h.cursor.seq

/** CASE_CORRUPT with the first error findings. */
export const corrupt = (findings: readonly Finding[], omitted = 0): Failure => {
  const errors = causeFirst(findings.filter(isError))
  return failure(
    'CASE_CORRUPT',
    `case does not verify: ${errors.length + omitted} error finding(s), first: ${firstFinding(errors[0])}; vba verify lists them all (restore the case from a copy or an export)`,
    { findings: errors.slice(0, 20) }
  )
}

/** A finding as a summary names it: its code and the start of its message. */
export const firstFinding = (f: Finding | undefined): string =>
  f === undefined ? 'unknown' : `${f.code} (${f.message.length > 160 ? `${f.message.slice(0, 160)}…` : f.message})`

/** A handle on a scanned case, or the failure of a case that does not verify. */
export const handleFromScan = (ref: string, scan: ScanResult, store: CaseStore): CaseHandle | Failure => {
  const errors = scan.findings.filter(isError)
  if (errors.length > 0 || scan.declaration === null || scan.hash === null)
    return corrupt(scan.findings, scan.omittedFindings)
  return {
    store,
    ref: store.kind === 'directory' ? ref : scan.declaration.case_id,
    dir: store.kind === 'directory' ? ref : '',
    declaration: scan.declaration,
    cursor: {
      seq: scan.seq,
      hash: scan.hash,
      bytes: scan.bytes,
      commands: scan.commands,
      lastCommand: scan.lastCommand,
      state: scan.state,
      ids: scan.ids
    },
    notices: scan.findings,
    notApplied: scan.notApplied
  }
}

/** Where a scan of the rest of a log resumes: the handle's cursor. */
export type Resume = Pick<Cursor, 'seq' | 'hash' | 'bytes' | 'commands' | 'lastCommand' | 'state' | 'ids'>

/**
 * Catches a handle up with the head a store acknowledges: nothing to do at the same head, a scan
 * of what other writers appended (checked like open checks it) past it, CASE_CORRUPT when the head
 * changed without new events or went back.
 */
export const catchUp = async (
  handle: CaseHandle,
  head: { readonly seq: number; readonly hash: string; readonly bytes: number },
  scanFrom: (resume: Resume) => Promise<ScanResult>
): Promise<void> => {
  const c = handle.cursor
  if (head.seq === c.seq) {
    if (head.hash !== c.hash || head.bytes !== c.bytes)
      throw new FailureError(
        corrupt([
          finding('HEAD_MISMATCH', 'the head changed without new events (case replaced or edited)', { path: HEAD_FILE })
        ])
      )
    return
  }
  if (head.seq < c.seq)
    throw new FailureError(
      corrupt([finding('HEAD_MISMATCH', `the head went back from ${c.seq} to ${head.seq}`, { path: HEAD_FILE })])
    )
  const scan = await scanFrom({
    seq: c.seq,
    hash: c.hash,
    bytes: c.bytes,
    commands: c.commands,
    lastCommand: c.lastCommand,
    state: c.state,
    ids: c.ids
  })
  const errors = scan.findings.filter(isError)
  if (errors.length > 0 || scan.hash === null) throw new FailureError(corrupt(errors))
  c.seq = scan.seq
  c.hash = scan.hash
  c.bytes = scan.bytes
  c.lastCommand = scan.lastCommand
  c.state = scan.state
}
