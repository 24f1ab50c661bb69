/** Opening a case: read and check the whole chain (not object contents) and index its commands. */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import * as TE from 'fp-ts/lib/TaskEither.js'
import { failure, type Failure } from '../../domain/failure.js'
import { errnoOf, FailureError, toFailure } from '../fs-util.js'
import { DECLARATION_FILE, LOG_FILE } from './layout.js'
import { scanCase, type ScanResult } from './scan.js'
import { handleFromScan as handleOf, type CaseHandle } from './handle.js'
import type { CaseStore } from './store.js'
import { directoryStore } from './directory-store.js'

export { corrupt, generationOf, type CaseHandle, type Cursor } from './handle.js'

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

/** A handle on a scanned case (the directory store by default), or the failure of a case that does not verify. */
export const handleFromScan = (dir: string, scan: ScanResult, store: CaseStore = directoryStore): CaseHandle | Failure => handleOf(dir, scan, store)

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
