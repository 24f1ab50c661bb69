/**
 * The exclusive writer lock of a case: a file created atomically (hard link of a fully written
 * temporary file), holding the owner's pid, host and a random token.
 *
 * A lock whose owner is a dead process on this host is *stale*. It is reported with a coded error
 * (CASE_LOCK_STALE) and never silently stolen: the crashed writer may have been mid-append, and
 * an operator decides (`vba case unlock DIR`) after looking. Opening the case for reading, which
 * cuts nothing, never needs the lock.
 */
import { promises as fsp } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { LOCK_FILE, TEMP_PREFIX } from './layout.js'
import { errnoOf, processAlive, tempName } from '../fs-util.js'
import { fail } from '../../failures/error.js'
import { isFileRefusal, readRegular } from '../regular-file.js'
import { shellPath } from '../shell-word.js'

/** @category cases */
export const LockInfo = t.type({ pid: t.number, host: t.string, token: t.string, acquired_at: t.string })
export type LockInfo = t.TypeOf<typeof LockInfo>

export interface HeldLock {
  readonly dir: string
  readonly info: LockInfo
}

/** @category cases */
export type LockState =
  | { readonly state: 'free' }
  | { readonly state: 'held'; readonly info: LockInfo }
  | { readonly state: 'stale'; readonly info: LockInfo | null; readonly reason: string }

/** Reads and classifies the lock of a case without changing anything. */
export const inspectLock = async (dir: string): Promise<LockState> => {
  let text: string
  try {
    text = (await readRegular(path.join(dir, LOCK_FILE), { maxBytes: 64 << 10, shown: LOCK_FILE })).toString('utf8')
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return { state: 'free' }
    // A FIFO, a link or a huge file is no lock this library wrote: reported, never waited on.
    if (isFileRefusal(e)) return { state: 'stale', info: null, reason: e.failure.message }
    throw e
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  const info = LockInfo.decode(parsed)
  if (E.isLeft(info)) return { state: 'stale', info: null, reason: 'lock file is unreadable' }
  if (info.right.host === os.hostname() && !processAlive(info.right.pid)) {
    return { state: 'stale', info: info.right, reason: `owner process ${info.right.pid} is not running` }
  }
  return { state: 'held', info: info.right }
}

const tryCreate = async (dir: string): Promise<HeldLock | null> => {
  const info: LockInfo = {
    pid: process.pid,
    host: os.hostname(),
    token: randomBytes(12).toString('hex'),
    acquired_at: new Date().toISOString()
  }
  const tmp = path.join(dir, tempName(`${TEMP_PREFIX}lock-`))
  await fsp.writeFile(tmp, `${JSON.stringify(info)}\n`, { flag: 'wx' })
  try {
    await fsp.link(tmp, path.join(dir, LOCK_FILE))
    return { dir, info }
  } catch (e) {
    if (errnoOf(e) === 'EEXIST') return null
    throw e
  } finally {
    await fsp.rm(tmp, { force: true })
  }
}

export interface AcquireOptions {
  /** How long to wait for a live writer to finish, in milliseconds (default 0: fail at once). */
  readonly waitMs?: number
}

/**
 * What CASE_LOCKED says, and what to do: a writer on this host finishes (retry); whether one on
 * another host runs vba cannot tell, and a case directory copied while a writer held it keeps that
 * lock for ever, so the message names the check and the forced unlock instead of a bare retry.
 */
const lockedMessage = (dir: string, info: LockInfo): string =>
  info.host === os.hostname()
    ? `case is being written by process ${info.pid} on this host (${info.host}); retry once it has finished`
    : `case is locked by process ${info.pid} on host ${info.host} (another host: vba cannot tell whether it runs); once that process has stopped, or if this directory was copied while it wrote, check the case (vba verify ${shellPath(dir)}), then run: vba case unlock ${shellPath(dir)} --force`

/** Takes the lock or fails with CASE_LOCKED (live owner) or CASE_LOCK_STALE (dead owner). */
export const acquireLock = async (dir: string, options: AcquireOptions = {}): Promise<HeldLock> => {
  const deadline = Date.now() + (options.waitMs ?? 0)
  let delay = 2
  for (;;) {
    const held = await tryCreate(dir)
    if (held !== null) return held
    const state = await inspectLock(dir)
    if (state.state === 'stale') {
      fail(
        'CASE_LOCK_STALE',
        `case is locked by a writer that is gone (${state.reason}); check the case, then run: vba case unlock ${dir}`,
        {
          owner_pid: state.info?.pid ?? null,
          acquired_at: state.info?.acquired_at ?? null
        }
      )
    }
    if (state.state === 'held' && Date.now() >= deadline) {
      fail('CASE_LOCKED', lockedMessage(dir, state.info), {
        owner_pid: state.info.pid,
        owner_host: state.info.host,
        acquired_at: state.info.acquired_at
      })
    }
    await new Promise((r) => setTimeout(r, delay + Math.random() * delay))
    delay = Math.min(delay * 2, 50)
  }
}

/** Releases a lock this process holds (only if the token still matches). */
export const releaseLock = async (lock: HeldLock): Promise<void> => {
  const state = await inspectLock(lock.dir)
  if (state.state !== 'free' && state.info?.token === lock.info.token) {
    await fsp.rm(path.join(lock.dir, LOCK_FILE), { force: true })
  }
}

/**
 * Removes a stale lock (dead owner on this host). A lock held by a live process, or by another
 * host, is only removed with `force`.
 */
export const breakLock = async (dir: string, options: { readonly force?: boolean } = {}): Promise<LockState> => {
  const state = await inspectLock(dir)
  if (state.state === 'free') fail('CASE_NOT_LOCKED', 'case is not locked')
  if (state.state === 'held' && options.force !== true) {
    // Whether a process runs is known on this host only: another host's is neither live nor dead here.
    const { pid, host } = state.info
    fail(
      'CASE_LOCKED',
      host === os.hostname()
        ? `lock is held by live process ${pid} on this host (${host}); wait for it to finish (--force only once it has stopped)`
        : `lock is held by process ${pid} on host ${host} (another host: vba cannot tell whether it runs); use --force only once that process has stopped or that host is gone`,
      {
        owner_pid: pid,
        owner_host: host
      }
    )
  }
  await fsp.rm(path.join(dir, LOCK_FILE), { force: true })
  return state
}
