/** Whether a directory holds a case package at all (before anything reads it). */
import { promises as fsp } from 'node:fs'
import * as path from 'node:path'
import { failure } from '../../failures/failure.js'
import { FailureError } from '../../failures/error.js'
import { errnoOf } from '../fs-util.js'
import { DECLARATION_FILE, LOG_FILE } from './layout.js'

/** Fails with CASE_NOT_FOUND when `dir` does not look like a case package at all. */
export const ensureCaseDir = async (dir: string): Promise<void> => {
  try {
    const st = await fsp.stat(dir)
    if (!st.isDirectory()) throw new FailureError(failure('CASE_NOT_FOUND', `${dir} is not a directory`, { dir }))
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') throw new FailureError(failure('CASE_NOT_FOUND', `${dir} does not exist`, { dir }))
    throw e
  }
  const present = await Promise.all(
    [DECLARATION_FILE, LOG_FILE].map((f) =>
      fsp.access(path.join(dir, f)).then(
        () => true,
        () => false
      )
    )
  )
  if (!present.some(Boolean))
    throw new FailureError(
      failure('CASE_NOT_FOUND', `${dir} is not a case directory (no case.json, no events.jsonl)`, { dir })
    )
}
