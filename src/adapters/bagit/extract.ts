/**
 * Extracting a bag archive, streamed: every entry is checked before a byte of it is written, then
 * written and hashed (SHA-256 and SHA-512) chunk by chunk as it arrives, so memory is bounded by a
 * few buffers whatever the size of an entry. Refused: names that escape the bag's root, absolute
 * paths, names that are not UTF-8, links, devices and other special entries, duplicates, and
 * archives over the entry or byte limits.
 *
 * One error path: every refusal, at any point of any entry (its header, the middle of its body, a
 * write that fails), ends the iteration with a coded failure; the archive stream and the tar parser
 * are destroyed with it, and no stream is left emitting an error nobody listens to. The caller
 * removes the directory it extracted into.
 */
import { constants as fsc, createReadStream, mkdirSync, openSync, closeSync, writeSync, promises as fsp } from 'node:fs'
import { createHash } from 'node:crypto'
import * as path from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import tar from 'tar-stream'
import { failure, type FailureCode } from '../../failures/failure.js'
import { unsafeBagPath } from '../../domain/bag-paths.js'
import { errnoOf } from '../fs-util.js'
import { FailureError } from '../../failures/error.js'
import type { KnownChecksums } from './verify-bag.js'

/** @category transport */
export interface ArchiveLimits {
  /** Most entries an archive may hold (default 2,000,000). */
  readonly maxEntries?: number
  /** Most bytes of file content it may unpack to (default 256 GiB). */
  readonly maxBytes?: number
}

/** What an extraction produced: the bag's root, the archive's SHA-256, and every file's checksums. */
export interface Extracted {
  readonly root: string
  readonly sha256: string
  /** SHA-256 and SHA-512 of every file, by bag-relative path (computed while writing). */
  readonly checksums: KnownChecksums
}

const refuse = (code: FailureCode, message: string, data: Record<string, unknown> = {}): FailureError =>
  new FailureError(failure(code, message, data))

const shownName = (name: string): string => JSON.stringify(name.slice(0, 120))

/** Errors of creating a path where another entry already put something else (a file where a directory goes, or the reverse). */
const COLLISIONS = new Set(['EEXIST', 'ENOTDIR', 'EISDIR', 'ELOOP'])

const collides = (name: string): FailureError =>
  refuse('ARCHIVE_DUPLICATE_ENTRY', `archive entry ${shownName(name)} collides with another`, {
    entry: name.slice(0, 200)
  })

/** Runs a file-system step of one entry; a collision with an earlier entry is the archive's fault, not the disk's. */
const forEntry = <A>(name: string, step: () => A): A => {
  try {
    return step()
  } catch (e) {
    throw COLLISIONS.has(errnoOf(e) ?? '') ? collides(name) : e
  }
}

/** Write flags of an extracted file: a new file only, never through a link. */
const CREATE = fsc.O_WRONLY | fsc.O_CREAT | fsc.O_EXCL | fsc.O_NOFOLLOW

const writeAllSync = (fd: number, chunk: Uint8Array): void => {
  for (let done = 0; done < chunk.length; ) {
    const n = writeSync(fd, chunk, done, chunk.length - done)
    if (n <= 0) throw refuse('IO_ERROR', 'a write made no progress', { errno: 'EIO' })
    done += n
  }
}

/**
 * A thrown value as the one coded failure of an extraction: coded failures pass through, errno
 * errors (a full disk, a file size limit, an unreadable archive) are IO_ERROR, and whatever the tar
 * parser says about the bytes is ARCHIVE_INVALID.
 */
export const extractionFailure = (e: unknown): FailureError => {
  if (e instanceof FailureError) return e
  const errno = errnoOf(e)
  if (errno !== undefined && /^E[A-Z0-9]+$/.test(errno)) {
    return refuse('IO_ERROR', `the archive cannot be read or its files cannot be written (${errno})`, {
      errno,
      syscall: (e as NodeJS.ErrnoException).syscall ?? null
    })
  }
  return refuse(
    'ARCHIVE_INVALID',
    `the archive is not a valid tar (${e instanceof Error ? e.message.slice(0, 120) : 'read error'})`
  )
}

/** Checks one entry's header; returns its bag-relative name (the root's included). */
const checkHeader = (header: tar.Header): string => {
  const name = header.name.replace(/\/+$/, '')
  // tar-stream decodes names as UTF-8; bytes that are not become U+FFFD, which no bag name holds.
  if (name.includes('\ufffd'))
    throw refuse('ARCHIVE_ENTRY_UNSAFE', `archive entry ${shownName(name)} has a name that is not valid UTF-8`, {
      entry: name.slice(0, 200)
    })
  const unsafe = unsafeBagPath(name)
  if (unsafe !== null || name.includes('\\'))
    throw refuse('ARCHIVE_ENTRY_UNSAFE', `archive entry ${shownName(name)} is unsafe (${unsafe ?? 'backslash'})`, {
      entry: name.slice(0, 200)
    })
  if (header.type !== 'file' && header.type !== 'directory')
    throw refuse(
      'ARCHIVE_ENTRY_TYPE',
      `archive entry ${shownName(name)} is a ${header.type ?? 'special entry'}; only files and directories are accepted`,
      { entry: name.slice(0, 200), type: header.type ?? null }
    )
  return name
}

/**
 * The archive's size (for progress), or its refusal: missing, a directory, or a device or socket
 * (`/dev/zero` would feed the parser zero blocks for ever). A pipe is streamed like a file.
 */
const archiveSize = async (archive: string): Promise<number> => {
  try {
    const st = await fsp.stat(archive)
    if (st.isDirectory()) throw refuse('ARCHIVE_INVALID', `${archive} is a directory, not an archive`, { archive })
    if (!st.isFile() && !st.isFIFO())
      throw refuse('ARCHIVE_INVALID', `${archive} is a device or socket, not an archive file`, { archive })
    return st.size
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR')
      throw refuse('ARCHIVE_NOT_FOUND', `${archive} does not exist`, { archive })
    throw extractionFailure(e)
  }
}

/** Writes a file entry's bytes to `target` (created, never replaced); its SHA-256 and SHA-512 and its length. */
const writeEntry = async (
  name: string,
  target: string,
  entry: AsyncIterable<unknown>
): Promise<{ readonly checksums: Map<string, string>; readonly written: number }> => {
  const fd = forEntry(name, () => openSync(target, CREATE, 0o644))
  // Synchronous writes: small entries dominate case bags, and a promise per write cost more
  // than the write; the tar stream waits while a chunk is written (backpressure).
  const h256 = createHash('sha256')
  const h512 = createHash('sha512')
  let written = 0
  try {
    for await (const chunk of entry) {
      const c = chunk as Buffer
      writeAllSync(fd, c)
      h256.update(c)
      h512.update(c)
      written += c.length
    }
  } finally {
    closeSync(fd)
  }
  return {
    checksums: new Map([
      ['sha256', h256.digest('hex')],
      ['sha512', h512.digest('hex')]
    ]),
    written
  }
}

/** What an extraction has seen so far: names, made directories, counts, the bag's root, the checksums. */
interface Seen {
  readonly names: Set<string>
  readonly made: Set<string>
  readonly checksums: Map<string, Map<string, string>>
  root: string | null
  entries: number
  bytes: number
}

/** Checks an entry against the limits and what came before (one root, no duplicates, no escape); its target path. */
const placeEntry = (
  header: tar.Header,
  into: string,
  seen: Seen,
  maxEntries: number
): { name: string; target: string } => {
  if (++seen.entries > maxEntries)
    throw refuse('ARCHIVE_TOO_LARGE', `the archive has more than ${maxEntries} entries`, {
      max_entries: maxEntries
    })
  const name = checkHeader(header)
  const top = name.split('/')[0] ?? ''
  seen.root ??= top
  if (top !== seen.root)
    throw refuse('ARCHIVE_ENTRY_UNSAFE', `archive entry ${shownName(name)} is outside the bag's root ${seen.root}`, {
      entry: name.slice(0, 200)
    })
  if (seen.names.has(name))
    throw refuse('ARCHIVE_DUPLICATE_ENTRY', `archive entry ${shownName(name)} appears twice`, {
      entry: name.slice(0, 200)
    })
  seen.names.add(name)
  const target = path.join(into, name)
  if (!target.startsWith(into + path.sep)) throw refuse('ARCHIVE_ENTRY_UNSAFE', 'archive entry escapes the destination')
  return { name, target }
}

/** Extracts one entry: a directory made, or a file written within the byte limit and checked for its length. */
const extractEntry = async (
  entry: AsyncIterable<unknown> & { header: tar.Header },
  into: string,
  seen: Seen,
  limits: { readonly maxEntries: number; readonly maxBytes: number }
): Promise<void> => {
  const header = entry.header
  const { name, target } = placeEntry(header, into, seen, limits.maxEntries)
  if (header.type === 'directory') {
    // The parser never hands out a directory's body (it would read it as the next header).
    if ((header.size ?? 0) > 0)
      throw refuse('ARCHIVE_INVALID', `directory entry ${shownName(name)} claims ${header.size ?? 0} bytes of data`, {
        entry: name.slice(0, 200)
      })
    await fsp.mkdir(target, { recursive: true }).catch((e: unknown) => {
      throw COLLISIONS.has(errnoOf(e) ?? '') ? collides(name) : e
    })
    return
  }
  seen.bytes += header.size ?? 0
  if (seen.bytes > limits.maxBytes)
    throw refuse('ARCHIVE_TOO_LARGE', `the archive unpacks to more than ${limits.maxBytes} bytes`, {
      max_bytes: limits.maxBytes
    })
  const dir = path.dirname(target)
  if (!seen.made.has(dir)) {
    forEntry(name, () => mkdirSync(dir, { recursive: true }))
    seen.made.add(dir)
  }
  const w = await writeEntry(name, target, entry)
  if (w.written !== header.size)
    throw refuse('ARCHIVE_INVALID', `archive entry ${shownName(name)} ends early`, { entry: name.slice(0, 200) })
  seen.checksums.set(name.slice(name.indexOf('/') + 1), w.checksums)
}

/** Bytes of headers allowed per entry (its header, a PAX or long-name header before it, padding). */
const HEADER_ALLOWANCE = 64 << 10
/** Bytes read ahead of the parser, or padding after the last entry, beyond what the entries hold. */
const TRAILING_SLACK = 32 << 20

/** Extracts `archive` under `into` (see the module comment). */
export const extractArchive = async (
  archive: string,
  into: string,
  limits: ArchiveLimits = {},
  onProgress?: (done: number, total: number) => void
): Promise<Extracted> => {
  const bounds = { maxEntries: limits.maxEntries ?? 2_000_000, maxBytes: limits.maxBytes ?? 256 * 2 ** 30 }
  const total = await archiveSize(archive)
  const archiveHash = createHash('sha256')
  const seen: Seen = { names: new Set(), made: new Set(), checksums: new Map(), root: null, entries: 0, bytes: 0 }
  let read = 0
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      archiveHash.update(chunk)
      read += chunk.length
      try {
        onProgress?.(read, total)
      } catch (e) {
        // The caller's callback threw: the import ends with its error (thrown here, it ended the process).
        cb(e instanceof Error ? e : new Error(String(e)))
        return
      }
      // The parser reads zero blocks as empty headers for as long as they come: an endless pipe of
      // zeros (or of padding) never ended the import. Past what the entries seen so far can hold
      // (their data, a header allowance each, and a slack for what is buffered ahead), it is refused.
      if (read - (seen.bytes + seen.entries * HEADER_ALLOWANCE) > TRAILING_SLACK)
        cb(
          refuse(
            'ARCHIVE_INVALID',
            `the archive goes on for more than ${TRAILING_SLACK} bytes past what its ${seen.entries} entr${seen.entries === 1 ? 'y' : 'ies'} hold (padding or zeros with no end)`,
            { bytes_read: read }
          )
        )
      else cb(null, chunk)
    }
  })
  const source = createReadStream(archive, { highWaterMark: 1 << 20 })
  const extract = tar.extract()
  // The parser's errors surface through the iteration below; this promise only ends the feed.
  const feeding = pipeline(source, meter, extract).catch((e: unknown) => e)
  try {
    for await (const entry of extract) await extractEntry(entry, into, seen, bounds)
  } catch (e) {
    source.destroy()
    extract.destroy()
    await feeding
    throw extractionFailure(e)
  }
  const fed = await feeding
  if (fed !== undefined) throw extractionFailure(fed)
  if (seen.root === null) throw refuse('ARCHIVE_INVALID', 'the archive is empty')
  return { root: path.join(into, seen.root), sha256: archiveHash.digest('hex'), checksums: seen.checksums }
}
