/**
 * Reading files that must be regular files: the parts of a case package and of a bag. A symlink
 * is never followed (O_NOFOLLOW), a FIFO never waits for a writer (O_NONBLOCK), and the type of
 * what was opened is checked (fstat) before a byte is read, so `HEAD -> /dev/zero` or a FIFO
 * named `events.jsonl` is refused at once instead of growing or hanging the reader. Reads are
 * bounded: a file larger than the caller allows is refused without being read.
 *
 * Refusals are coded: FILE_NOT_REGULAR and FILE_TOO_LARGE (with the bag- or case-relative name
 * the caller gives, never the bytes of the file).
 */
import { constants as fsc, fstatSync, openSync, closeSync, readSync, promises as fsp, type Stats } from 'node:fs'
import { failure, type FailureCode } from '../failures/failure.js'
import { errnoOf } from './fs-util.js'
import { FailureError } from '../failures/error.js'
import { optional } from '../optional.js'

/** Flags of every read here: read-only, never through a final symlink, never blocking on a FIFO. */
const READ_FLAGS = fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK
/** The same for a file that is also written (never created: it must be there). */
const WRITE_FLAGS = fsc.O_RDWR | fsc.O_NOFOLLOW | fsc.O_NONBLOCK

/** What a non-regular file is, for messages. */
const kindOf = (st: Stats): string =>
  st.isDirectory()
    ? 'directory'
    : st.isFIFO()
      ? 'FIFO'
      : st.isCharacterDevice()
        ? 'character device'
        : st.isBlockDevice()
          ? 'block device'
          : st.isSocket()
            ? 'socket'
            : st.isSymbolicLink()
              ? 'symbolic link'
              : 'special file'

const notRegular = (shown: string, kind: string): FailureError =>
  new FailureError(
    failure('FILE_NOT_REGULAR', `${shown} is a ${kind}, not a regular file; it is not read`, { file: shown, kind })
  )

const tooLarge = (shown: string, size: number, max: number): FailureError =>
  new FailureError(
    failure('FILE_TOO_LARGE', `${shown} has ${size} bytes, more than the ${max} allowed; it is not read`, {
      file: shown,
      size,
      max
    })
  )

/** An open failure that says the name is not a regular file (a symlink under O_NOFOLLOW, a socket). */
const openRefusal = (e: unknown, shown: string): FailureError | null => {
  const code = errnoOf(e)
  if (code === 'ELOOP') return notRegular(shown, 'symbolic link')
  if (code === 'ENXIO') return notRegular(shown, 'socket or device without a reader')
  return null
}

/**
 * Opens `file` if it is a regular file of at most `maxBytes`; the caller closes the handle.
 * `shown` names the file in a refusal (default: the path as given).
 */
export const openRegular = async (
  file: string,
  options: {
    readonly maxBytes?: number
    readonly shown?: string
    /** Open for reading and writing (a writer's append or cut of its log), under the same checks. */
    readonly write?: boolean
  } = {}
): Promise<{ fh: fsp.FileHandle; size: number }> => {
  const shown = options.shown ?? file
  let fh: fsp.FileHandle
  try {
    fh = await fsp.open(file, options.write === true ? WRITE_FLAGS : READ_FLAGS)
  } catch (e) {
    throw openRefusal(e, shown) ?? e
  }
  try {
    const st = await fh.stat()
    if (!st.isFile()) throw notRegular(shown, kindOf(st))
    if (options.maxBytes !== undefined && st.size > options.maxBytes) throw tooLarge(shown, st.size, options.maxBytes)
    return { fh, size: st.size }
  } catch (e) {
    await fh.close().catch(() => undefined)
    throw e
  }
}

/** {@link openRegular}, synchronously: a file descriptor the caller closes. */
export const openRegularSync = (
  file: string,
  options: { readonly maxBytes?: number; readonly shown?: string } = {}
): { fd: number; size: number } => {
  const shown = options.shown ?? file
  let fd: number
  try {
    fd = openSync(file, READ_FLAGS)
  } catch (e) {
    throw openRefusal(e, shown) ?? e
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) throw notRegular(shown, kindOf(st))
    if (options.maxBytes !== undefined && st.size > options.maxBytes) throw tooLarge(shown, st.size, options.maxBytes)
    return { fd, size: st.size }
  } catch (e) {
    closeSync(fd)
    throw e
  }
}

/** Reads at most `size` bytes from `fd` at 0 (a file that shrank gives fewer; one that grew, no more). */
const readAllSync = (fd: number, size: number): Buffer => {
  const out = Buffer.allocUnsafe(size)
  let done = 0
  for (let n = 1; n > 0 && done < size; done += n) n = readSync(fd, out, done, size - done, done)
  return done === size ? out : out.subarray(0, done)
}

/** The bytes of a regular file of at most `maxBytes` (see {@link openRegular}). */
export const readRegular = async (
  file: string,
  options: { readonly maxBytes?: number; readonly shown?: string } = {}
): Promise<Buffer> => {
  const { fh, size } = await openRegular(file, options)
  try {
    const out = Buffer.allocUnsafe(size)
    let done = 0
    for (let n = 1; n > 0 && done < size; done += n) n = (await fh.read(out, done, size - done, done)).bytesRead
    return done === size ? out : out.subarray(0, done)
  } finally {
    await fh.close()
  }
}

/** {@link readRegular}, synchronously (small files: one open, one fstat, one read). */
export const readRegularSync = (
  file: string,
  options: { readonly maxBytes?: number; readonly shown?: string } = {}
): Buffer => {
  const { fd, size } = openRegularSync(file, options)
  try {
    return readAllSync(fd, size)
  } finally {
    closeSync(fd)
  }
}

/** True for the refusals of this module (the caller turns them into findings). */
export const isFileRefusal = (e: unknown): e is FailureError =>
  e instanceof FailureError && (e.failure.code === 'FILE_NOT_REGULAR' || e.failure.code === 'FILE_TOO_LARGE')

/**
 * Streams a regular file in chunks of `chunkBytes` to `each` (one reused buffer, so `each` must
 * not keep the chunk): memory is bounded by the chunk, not by the file. Returns the bytes read.
 */
export const eachChunk = async (
  file: string,
  each: (chunk: Buffer) => void,
  options: { readonly shown?: string; readonly chunkBytes?: number } = {}
): Promise<number> => {
  const { fh } = await openRegular(file, optional('shown', options.shown))
  const buf = Buffer.allocUnsafe(options.chunkBytes ?? 1 << 20)
  let total = 0
  try {
    for (
      let n = (await fh.read(buf, 0, buf.length, total)).bytesRead;
      n > 0;
      n = (await fh.read(buf, 0, buf.length, total)).bytesRead
    ) {
      each(buf.subarray(0, n))
      total += n
    }
  } finally {
    await fh.close()
  }
  return total
}

/** What a refused named file becomes: the caller's code, the refusal's own as `data.cause`. */
const asCode = (e: FailureError, code: FailureCode | undefined): FailureError =>
  code === undefined
    ? e
    : new FailureError(failure(code, e.failure.message, { ...e.failure.data, cause: e.failure.code }))

/**
 * Reads from `fh` until its end or until it has given more than `maxBytes` (then FILE_TOO_LARGE):
 * memory is bounded by the limit whatever the file says its size is (a pipe says none, a file
 * under /proc says 0).
 */
const readUpTo = async (fh: fsp.FileHandle, maxBytes: number, shown: string): Promise<Buffer> => {
  const chunks: Buffer[] = []
  const buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, 1 << 16))
  let total = 0
  for (let n = (await fh.read(buf, 0, buf.length, null)).bytesRead; n > 0; ) {
    chunks.push(Buffer.from(buf.subarray(0, n)))
    total += n
    if (total > maxBytes)
      throw new FailureError(
        failure('FILE_TOO_LARGE', `${shown} holds more than the ${maxBytes} bytes allowed; it is not read`, {
          file: shown,
          max: maxBytes
        })
      )
    n = (await fh.read(buf, 0, buf.length, null)).bytesRead
  }
  return Buffer.concat(chunks, total)
}

/**
 * A file a person named: a command-line option's file (`--config`, `--input`, `--query`,
 * `--expect-head`, `--trust`, `--token-file`), a profile's include, key or password file. The path
 * is the caller's own, so symbolic links on it are followed; what it reaches must be a regular
 * file, or a FIFO when `pipe` is true (a pipe such as bash's `<(command)`: opened as a pipe, so it
 * waits for its writer). A directory, a device (`/dev/zero`), a socket, or a FIFO where `pipe` is
 * false is refused before a byte is read (FILE_NOT_REGULAR), and at most `maxBytes` are read: a
 * larger file is refused after one fstat, a pipe (or a file that grew) once it has given more
 * (FILE_TOO_LARGE). With `code`, a refusal carries that code instead (the option's own, such as
 * CONFIG_INVALID) and the refusal's as `data.cause`. Messages name the path (`shown`), never
 * what the file holds. An open that fails (ENOENT, EACCES) throws the errno error as it is.
 */
export const readNamedFile = async (
  file: string,
  options: { readonly maxBytes: number; readonly pipe?: boolean; readonly shown?: string; readonly code?: FailureCode }
): Promise<Buffer> => {
  const shown = options.shown ?? file
  // A FIFO is opened without O_NONBLOCK only when it is one before the open and pipes are taken.
  const before = options.pipe === true ? await fsp.stat(file) : null
  const flags = before?.isFIFO() === true ? fsc.O_RDONLY : fsc.O_RDONLY | fsc.O_NONBLOCK
  let fh: fsp.FileHandle
  try {
    fh = await fsp.open(file, flags)
  } catch (e) {
    const refused = openRefusal(e, shown)
    throw refused === null ? e : asCode(refused, options.code)
  }
  try {
    const st = await fh.stat()
    const piped = options.pipe === true && st.isFIFO() && flags === fsc.O_RDONLY
    if (!st.isFile() && !piped) throw notRegular(shown, kindOf(st))
    if (st.size > options.maxBytes) throw tooLarge(shown, st.size, options.maxBytes)
    return await readUpTo(fh, options.maxBytes, shown)
  } catch (e) {
    throw e instanceof FailureError ? asCode(e, options.code) : e
  } finally {
    await fh.close().catch(() => undefined)
  }
}
