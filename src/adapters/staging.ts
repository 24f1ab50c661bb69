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
import { shellPath } from './shell-word.js'
import { makeDirs } from './make-dirs.js'

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

/** The errors of a directory that cannot be made or written in: the user's to fix, not a crash. */
const UNWRITABLE = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOENT', 'ENOTDIR'])

/** The way out of a taken destination: a new directory beside it (`DIR-2`, … one that does not exist), or moving it aside. */
const takenHint = async (target: string, label: 'import' | 'init', shown: string): Promise<string> => {
  const trimmed = shown.replace(/\/+$/, '')
  const base = ['', '.', '..'].includes(path.basename(trimmed)) ? target : trimmed
  let free: string | null = null
  for (let n = 2; n < 100 && free === null; n++) {
    const taken = await fsp.lstat(path.resolve(`${base}-${n}`)).then(
      () => true,
      (e: unknown) => errnoOf(e) !== 'ENOENT'
    )
    if (!taken) free = `${base}-${n}`
  }
  const what = label === 'import' ? 'import into' : 'create the case in'
  return `${what} a new directory instead${free === null ? '' : ` (${shellPath(free)} does not exist)`}, or move the existing one aside first`
}

/** The nearest existing ancestor of `shown` that is not a directory (a file where a directory is to go), as the user named it. */
const blockingAncestor = async (shown: string): Promise<string | null> => {
  const p = await existingAncestor(shown)
  const st = p === null ? null : await fsp.stat(path.resolve(p)).catch(() => null)
  return st === null || st.isDirectory() ? null : p
}

/** The nearest directory or file above `shown` that exists, as `shown` names it (null: none does). */
const existingAncestor = async (shown: string): Promise<string | null> => {
  for (let p = path.dirname(shown); ; p = path.dirname(p)) {
    if ((await fsp.stat(path.resolve(p)).catch(() => null)) !== null) return p
    if (path.dirname(p) === p) return null
  }
}

/**
 * For writing a new directory `target` atomically: fails with CASE_EXISTS unless it is absent or
 * an empty directory (INVALID_ARGUMENT for a symbolic link, even to one; OUTPUT_DIR_MISSING when a
 * file stands where a directory above it is to be, IO_ERROR saying where when it cannot be written
 * in), sweeps the leftovers of killed writers beside it, then creates a staging directory next to
 * it (same file system, so the final move is one rename) and returns it. Absent parents are created.
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
    if (errnoOf(e) === 'ENOTDIR' && st !== null)
      fail('CASE_EXISTS', `${shown} exists and is not a directory; ${await takenHint(target, label, shown)}`, {
        dir: shown
      })
    if (errnoOf(e) !== 'ENOENT' && errnoOf(e) !== 'ENOTDIR') throw e
  }
  if (entries !== null && entries.length > 0)
    fail('CASE_EXISTS', `${shown} exists and is not empty; ${await takenHint(target, label, shown)}`, { dir: shown })
  const file = await blockingAncestor(shown)
  if (file !== null)
    fail(
      'OUTPUT_DIR_MISSING',
      `${shown} cannot be created: ${file} is not a directory; give a DIR under a directory (absent ones are created)`,
      { dir: shown }
    )
  const parent = path.dirname(target)
  // Where the creation stops: the nearest directory above DIR that exists (absent ones are made in it).
  const within = (await existingAncestor(shown)) ?? path.dirname(shown)
  const unwritable = (e: unknown): never => {
    const errno = errnoOf(e)
    if (errno === undefined || !UNWRITABLE.has(errno)) throw e
    return fail('IO_ERROR', `cannot create ${shown} in ${within} (${errno}); give a DIR in a directory you can write`, {
      dir: shown,
      errno
    })
  }
  await makeDirs(parent).catch(unwritable)
  await sweepStaging(parent)
  const staging = path.join(parent, stagingName(label, path.basename(target)))
  await fsp.mkdir(staging).catch(unwritable)
  return staging
}
