/**
 * `mkdir -p` one directory at a time. Node 20's `mkdir(…, { recursive: true })` never returns where
 * a file system answers ENOENT for a directory whose parent exists (`/proc/x`, `/sys/x`): it makes
 * the parent again and again, at full CPU (`vba import X.tar /proc/a/b` hung). Here each missing
 * directory is made once, from the top, and the first refusal is thrown as it came.
 */
import { mkdirSync, promises as fsp, statSync, type MakeDirectoryOptions } from 'node:fs'
import * as path from 'node:path'
import { errnoOf } from './fs-util.js'

/** The directories of `dir` to make, top first: those that do not exist (as far as stat says). */
const missingOf = (dir: string, exists: (p: string) => boolean): string[] => {
  const missing: string[] = []
  for (let p = path.resolve(dir); !exists(p); p = path.dirname(p)) {
    missing.unshift(p)
    if (path.dirname(p) === p) break
  }
  return missing
}

const existsSync = (p: string): boolean => {
  try {
    statSync(p)
    return true
  } catch {
    return false
  }
}

/** Makes `dir` and every missing directory above it (a directory made meanwhile by another is fine). */
export const makeDirs = async (dir: string, mode?: MakeDirectoryOptions['mode']): Promise<void> => {
  for (const p of missingOf(dir, existsSync))
    await fsp.mkdir(p, mode === undefined ? {} : { mode }).catch((e: unknown) => {
      if (errnoOf(e) !== 'EEXIST') throw e
    })
}

/** {@link makeDirs}, synchronously. */
export const makeDirsSync = (dir: string, mode?: MakeDirectoryOptions['mode']): void => {
  for (const p of missingOf(dir, existsSync))
    try {
      mkdirSync(p, mode === undefined ? {} : { mode })
    } catch (e) {
      if (errnoOf(e) !== 'EEXIST') throw e
    }
}
