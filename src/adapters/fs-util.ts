/**
 * The one place where file-system calls become coded failures, plus the durable-write primitives
 * the case store relies on (write to a temporary file, fsync, rename, fsync the directory).
 */
import { promises as fsp, constants as fsc } from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import { fail } from '../failures/error.js'

/** Whether a process with this pid runs on this machine (EPERM: it runs, as another user). */
/** Why a file could not be read, in words (its errno; the code itself when it is not a common one). */
export const unreadableWhy = (e: unknown): string => {
  const code = errnoOf(e)
  switch (code) {
    case 'ENOENT':
      return 'it does not exist'
    case 'EACCES':
    case 'EPERM':
      return 'permission denied'
    case 'EISDIR':
      return 'it is a directory'
    case 'ENOTDIR':
      return 'a part of its path is not a directory'
    case 'ELOOP':
      return 'too many symbolic links'
    default:
      return code ?? 'an error reading it'
  }
}

export const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return errnoOf(e) === 'EPERM'
  }
}

export const errnoOf = (e: unknown): string | undefined =>
  e !== null && typeof e === 'object' && typeof (e as { code?: unknown }).code === 'string'
    ? (e as { code: string }).code
    : undefined

/**
 * Writes all of `bytes` at `position` (or the current position): a short write (a file size
 * limit, a nearly full disk) is continued, so it ends in the real error rather than torn data.
 */
export const writeAll = async (
  fh: fsp.FileHandle,
  bytes: Uint8Array,
  position: number | null = null
): Promise<void> => {
  for (let done = 0; done < bytes.length; ) {
    const { bytesWritten } = await fh.write(
      bytes,
      done,
      bytes.length - done,
      position === null ? null : position + done
    )
    if (bytesWritten <= 0) fail('IO_ERROR', 'a write made no progress', { errno: 'EIO' })
    done += bytesWritten
  }
}

/** fsync a directory so a rename or create inside it survives a power cut. */
export const fsyncDir = async (dir: string): Promise<void> => {
  const fh = await fsp.open(dir, fsc.O_RDONLY)
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

export const tempName = (prefix: string): string => `${prefix}${process.pid}-${randomBytes(6).toString('hex')}`

/**
 * Creates `file` (which must not exist) with `bytes`, and fsyncs it. A write that fails (a full
 * disk) removes the partial file: a failed write leaves nothing behind.
 */
export const writeNewSynced = async (file: string, bytes: Uint8Array | string, mode = 0o644): Promise<void> => {
  const fh = await fsp.open(file, 'wx', mode)
  try {
    await fh.writeFile(bytes)
    await fh.sync()
  } catch (e) {
    await fh.close().catch(() => undefined)
    await fsp.rm(file, { force: true })
    throw e
  }
  await fh.close()
}

/**
 * Writes `bytes` to `target` atomically and durably via a temporary file in `tmpDir`.
 * `afterRename` runs once the target holds the new bytes (before the directory is fsynced).
 */
export const writeFileDurably = async (
  target: string,
  bytes: Uint8Array | string,
  tmpDir = path.dirname(target),
  afterRename?: () => void
): Promise<void> => {
  const tmp = path.join(tmpDir, tempName('.vba-tmp-'))
  await writeNewSynced(tmp, bytes)
  try {
    await fsp.rename(tmp, target)
  } catch (e) {
    await fsp.rm(tmp, { force: true })
    throw e
  }
  afterRename?.()
  await fsyncDir(path.dirname(target))
}

export const exists = async (p: string): Promise<boolean> => {
  try {
    await fsp.lstat(p)
    return true
  } catch (e) {
    if (errnoOf(e) === 'ENOENT') return false
    throw e
  }
}

/**
 * Decodes text input (a query, a profile, a report file) as UTF-8, refusing bytes that are not:
 * silently replacing them with U+FFFD would change what a person wrote (INPUT_NOT_UTF8).
 */
export const decodeUtf8 = (bytes: Uint8Array, what: string): string => {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes)
  } catch {
    return fail('INPUT_NOT_UTF8', `${what} is not valid UTF-8`, { input: what })
  }
}
