/**
 * Staging areas of long writes (import, export, report, bag verification): each is named after
 * its owner, `.vba-<label>-<name>-<host>-<pid>-<random>` beside the output, or
 * `vba-<label>-<host>-<pid>-<random>` in the system's temporary directory. A process that fails
 * removes its own; a process that was killed cannot, so every new one first sweeps the leftovers
 * of processes of this host that no longer run ({@link sweepStaging}). Another host's staging
 * (a shared file system) and a live process's are never touched.
 */
import { promises as fsp } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { errnoOf, processAlive } from './fs-util.js'
import { fail } from '../failures/error.js'

/** This host, as 8 hex characters (a host name can hold anything a file name cannot). */
const HOST = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8)

const OWNED = /^\.?vba-(?:import|export|report|verify|init)-(?:.*-)?([0-9a-f]{8})-(\d+)-[0-9a-f]{12}$/

/** The name of a new staging entry for `label`, beside `name` (a hidden entry) or in the temp directory. */
export const stagingName = (label: 'import' | 'export' | 'report' | 'verify' | 'init', name?: string): string =>
  `${name === undefined ? '' : '.'}vba-${label}-${name === undefined ? '' : `${name}-`}${HOST}-${process.pid}-${randomBytes(6).toString('hex')}`

/**
 * Removes the staging entries in `dir` left by processes of this host that no longer run (a
 * killed import, export or verification). Returns the names removed; never fails the caller.
 */
export const sweepStaging = async (dir: string): Promise<string[]> => {
  let names: string[]
  try {
    names = await fsp.readdir(dir)
  } catch {
    return []
  }
  const removed: string[] = []
  for (const name of names) {
    const m = OWNED.exec(name)
    if (m === null || m[1] !== HOST || processAlive(Number(m[2]))) continue
    try {
      await fsp.rm(path.join(dir, name), { recursive: true, force: true })
      removed.push(name)
    } catch (e) {
      // Someone else's (permissions) or gone meanwhile: not ours to insist on.
      if (errnoOf(e) !== 'ENOENT') continue
    }
  }
  return removed
}

/**
 * The destination `shown` was taken while it was written (another import or init won the race, or
 * something else appeared there): CASE_EXISTS, as for a destination that was there first.
 */
export const lostDestination = (e: unknown, shown: string): never => {
  const errno = errnoOf(e)
  if (errno === 'ENOTEMPTY' || errno === 'EEXIST' || errno === 'ENOTDIR')
    fail('CASE_EXISTS', `${shown} was created by someone else meanwhile; nothing was written there`, { dir: shown })
  throw e
}

/** A new private directory (mode 0700) in the system's temporary directory, after sweeping leftovers there. */
export const privateTempDir = async (label: 'verify' | 'import'): Promise<string> => {
  const base = os.tmpdir()
  await sweepStaging(base)
  const dir = path.join(base, stagingName(label))
  await fsp.mkdir(dir, { mode: 0o700 })
  return dir
}

/**
 * For writing a new directory `target` atomically: fails with CASE_EXISTS unless it is absent or
 * an empty directory (INVALID_ARGUMENT for a symbolic link, even to one), sweeps the leftovers of killed writers beside it, then creates a staging
 * directory next to it (same file system, so the final move is one rename) and returns it.
 */
export const stagingFor = async (target: string, label: 'import' | 'init', shown: string): Promise<string> => {
  // A link (to a directory or to nothing) is never written through, nor replaced: the user's mistake.
  const st = await fsp.lstat(target).catch((e: unknown) => {
    // Absent, or under a file (ENOTDIR, refused below as it was): no link.
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null
    throw e
  })
  if (st?.isSymbolicLink() === true)
    fail('INVALID_ARGUMENT', `${shown} is a symbolic link: give a real directory (absent or empty)`, { dir: shown })
  let entries: string[] | null = null
  try {
    entries = await fsp.readdir(target)
  } catch (e) {
    if (errnoOf(e) === 'ENOTDIR') fail('CASE_EXISTS', `${shown} exists and is not a directory`, { dir: shown })
    if (errnoOf(e) !== 'ENOENT') throw e
  }
  if (entries !== null && entries.length > 0) fail('CASE_EXISTS', `${shown} exists and is not empty`, { dir: shown })
  const parent = path.dirname(target)
  await fsp.mkdir(parent, { recursive: true })
  await sweepStaging(parent)
  const staging = path.join(parent, stagingName(label, path.basename(target)))
  await fsp.mkdir(staging)
  return staging
}
