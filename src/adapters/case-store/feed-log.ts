/**
 * Reading events.jsonl into the log checker: on two worker threads for a large log
 * (line-checks.ts), inline otherwise and for whatever the workers do not take.
 */
import { isUtf8 } from 'node:buffer'
import type { FileHandle } from 'node:fs/promises'
import { PARALLEL_THRESHOLD_BYTES, startLineChecks } from './line-checks.js'
import { eventOfLine, KIND_BYTES, KIND_CHECKED_REFS, LINE_INTS, storedDataOf } from './line-layout.js'
import { MAX_LINE_BYTES, type LogChecker } from './log-checker.js'
import type { ScanOptions } from './scan.js'

/** Bytes read at a time. */
const CHUNK_BYTES = 1 << 22

/**
 * Feeds the lines of events.jsonl from `from` to `limit` to the checker; a log of
 * PARALLEL_THRESHOLD_BYTES or more has its lines checked on two worker threads (line-checks.ts)
 * up to the first line they do not take, the rest inline. Returns how many bytes follow the last
 * LF (an incomplete line).
 */
export const feedLog = async (
  fh: FileHandle,
  file: string,
  from: number,
  limit: number,
  checker: LogChecker,
  options: ScanOptions
): Promise<number> => {
  const feed: LogFeed = { fh, file, limit, checker, options }
  let pos = from
  if (limit - from >= (options.parallelFromBytes ?? PARALLEL_THRESHOLD_BYTES)) {
    const fed = await feedChecked(feed, from)
    if ('carried' in fed) return fed.carried
    pos = fed.resume
  }
  return feedInline(feed, from, pos)
}

/** What both ways of feeding read and feed: the open log up to `limit`, into the checker. */
interface LogFeed {
  readonly fh: FileHandle
  readonly file: string
  readonly limit: number
  readonly checker: LogChecker
  readonly options: ScanOptions
}

/** The start of the first line at or after the middle of [from, limit), or null (one part). */
const findSeam = async (fh: FileHandle, from: number, limit: number): Promise<number | null> => {
  const middle = from + Math.floor((limit - from) / 2)
  const window = Buffer.allocUnsafe(Math.min(MAX_LINE_BYTES, limit - middle))
  const { bytesRead } = await fh.read(window, 0, window.length, middle)
  const lf = window.subarray(0, bytesRead).indexOf(10)
  const seam = lf < 0 ? null : middle + lf + 1
  return seam === null || seam >= limit ? null : seam
}

/**
 * The lines the workers checked, in order: a line they passed is folded from its offsets, any other
 * is checked inline from its bytes. Ends at the log's end, or where the workers stop (a line over
 * MAX_LINE_BYTES, a worker that failed): then the rest is read inline from `resume`.
 */
const feedChecked = async (
  { fh, file, limit, checker, options }: LogFeed,
  from: number
): Promise<{ readonly carried: number } | { readonly resume: number }> => {
  const checks = startLineChecks(file, from, await findSeam(fh, from, limit), limit, options.canonical !== false)
  let next = from
  try {
    for (;;) {
      const b = await checks.next().catch(() => ({ stop: next }))
      if ('stop' in b) return { resume: next }
      if ('done' in b) return { carried: b.carried }
      const buf = Buffer.from(b.buffer)
      const m = b.meta
      for (let i = 0, at = 0; i < b.lines; i++, at += LINE_INTS) {
        const s = m[at] as number
        const e = m[at + 1] as number
        // The workers read what this thread would have: a line elsewhere is a disagreement.
        if (b.base + s !== next) return { resume: next }
        const kind = m[at + 2]
        if (kind === KIND_BYTES) checker.line(buf.subarray(s, e - 1), null, next, b.base + e)
        else
          checker.checked(
            eventOfLine(buf, s, m, at),
            kind === KIND_CHECKED_REFS ? () => storedDataOf(buf, s, m, at) : null,
            next,
            b.base + e
          )
        next = b.base + e
      }
      options.onProgress?.(next, limit)
    }
  } finally {
    await checks.stop()
  }
}

/**
 * Feeds lines from `pos` (a line start) to `limit`, reading in chunks aligned to `base` as a read
 * from `base` would, so a line over MAX_LINE_BYTES is cut where it always was.
 */
const feedInline = async ({ fh, limit, checker, options }: LogFeed, base: number, from: number): Promise<number> => {
  const buf = Buffer.allocUnsafe(CHUNK_BYTES)
  let carry: Buffer = Buffer.alloc(0)
  let pos = from
  while (pos < limit) {
    const want = Math.min(CHUNK_BYTES - ((pos - base) % CHUNK_BYTES), limit - pos)
    const { bytesRead } = await fh.read(buf, 0, want, pos)
    if (bytesRead === 0) break
    const chunk = carry.length === 0 ? buf.subarray(0, bytesRead) : Buffer.concat([carry, buf.subarray(0, bytesRead)])
    const chunkStart = pos - carry.length
    const complete = chunk.lastIndexOf(10) + 1
    // Decode all complete lines of the chunk at once when they are valid UTF-8 (the usual case);
    // LF never occurs inside a multi-byte sequence, so string and byte lines correspond.
    const texts =
      complete > 0 && isUtf8(chunk.subarray(0, complete)) ? chunk.toString('utf8', 0, complete - 1).split('\n') : null
    let s = 0
    for (let i = 0; s < complete; i++) {
      const nl = chunk.indexOf(10, s)
      const text = texts === null ? undefined : texts[i]
      checker.line(text === undefined ? chunk.subarray(s, nl) : null, text ?? null, chunkStart + s, chunkStart + nl + 1)
      s = nl + 1
    }
    // Copy the remainder: `buf` is reused by the next read.
    carry = Buffer.from(chunk.subarray(s))
    pos += bytesRead
    options.onProgress?.(pos, limit)
    if (carry.length > MAX_LINE_BYTES + 1) {
      checker.line(carry, null, pos - carry.length, pos)
      carry = Buffer.alloc(0)
    }
  }
  return carry.length
}
