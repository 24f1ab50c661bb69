/** Opening a case: read and check the whole chain (not object contents) and index its commands. */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { failure, type Failure } from '../../domain/failure.js'
import type { CaseDeclaration } from '../../events/envelope.js'
import { isError, type Finding } from '../../events/findings.js'
import { errnoOf, FailureError, toFailure } from '../fs-util.js'
import { DECLARATION_FILE, LOG_FILE } from './layout.js'
import { scanCase, type CommandSpan, type ScanResult } from './scan.js'
import type { CaseState } from '../../domain/case-state.js'
import type { CaseStore } from './store.js'
import { directoryStore } from './directory-store.js'

/** Where an open handle stands in the log; advanced by every append through this handle. */
export interface Cursor {
  seq: number
  hash: string
  bytes: number
  commands: Map<string, CommandSpan>
  lastCommand: string | null
  /** The case state at `seq` (the rules' fold): what deciders decide on. */
  state: CaseState
}

/** An open case: what a writer appends through (reads need no handle). */
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
}

/** The generation (last sequence number) this handle has seen. */
export const generationOf = (h: CaseHandle): number => h.cursor.seq

export const corrupt = (findings: readonly Finding[], omitted = 0): Failure =>
  failure('CASE_CORRUPT', `case does not verify: ${findings.filter(isError).length + omitted} finding(s), first: ${findings.find(isError)?.code ?? 'unknown'}`, {
    findings: findings.filter(isError).slice(0, 20)
  })

/** Fails with CASE_NOT_FOUND when `dir` does not look like a case package at all. */
export const ensureCaseDir = async (dir: string): Promise<void> => {
  try {
    const st = await fsp.stat(dir)
    if (!st.isDirectory()) throw new FailureError(failure('CASE_NOT_FOUND', `${dir} is not a directory`, { dir }))
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') throw new FailureError(failure('CASE_NOT_FOUND', `${dir} does not exist`, { dir }))
    throw e
  }
  const present = await Promise.all([DECLARATION_FILE, LOG_FILE].map((f) => fsp.access(path.join(dir, f)).then(() => true, () => false)))
  if (!present.some(Boolean)) throw new FailureError(failure('CASE_NOT_FOUND', `${dir} is not a case directory (no case.json, no events.jsonl)`, { dir }))
}

export const handleFromScan = (dir: string, scan: ScanResult, store: CaseStore = directoryStore): CaseHandle | Failure => {
  const errors = scan.findings.filter(isError)
  if (errors.length > 0 || scan.declaration === null || scan.hash === null) return corrupt(scan.findings, scan.omittedFindings)
  return {
    store,
    ref: store.kind === 'directory' ? dir : scan.declaration.case_id,
    dir: store.kind === 'directory' ? dir : '',
    declaration: scan.declaration,
    cursor: { seq: scan.seq, hash: scan.hash, bytes: scan.bytes, commands: scan.commands, lastCommand: scan.lastCommand, state: scan.state },
    notices: scan.findings
  }
}

/**
 * Opens a case for appending: checks declaration, HEAD, every event line and every event's rules,
 * and folds the case state (`handle.cursor.state`). A torn or unacknowledged tail is reported in
 * `notices` and cut by the next append; anything else that does not check out (a forged event
 * included) is CASE_CORRUPT with its findings. Changes nothing on disk.
 */
export const openCase = (dir: string): TE.TaskEither<Failure, CaseHandle> =>
  TE.tryCatch(async () => {
    const resolved = path.resolve(dir)
    await ensureCaseDir(resolved)
    const result = handleFromScan(resolved, await scanCase(resolved, { canonical: false }))
    if ('_tag' in result) throw new FailureError(result)
    return result
  }, (e) => toFailure(e, 'open case'))
