/**
 * Reading events.jsonl into the log checker: for a large log its lines checked on worker threads
 * (line-checks.ts) and folded here, inline otherwise and from a line the workers do not take on.
 */
import { isUtf8 } from 'node:buffer'
import type { FileHandle } from 'node:fs/promises'
import { lstat } from 'node:fs/promises'
import {
  type CheckedPiece,
  defaultLineWorkers,
  type LineWorkers,
  PARALLEL_THRESHOLD_BYTES,
  startLineWorkers
} from './line-checks.js'
import {
  eventOfLine,
  KIND_BYTES,
  KIND_CHECKED_REFS,
  L_DATA,
  L_DATA_END,
  L_END,
  L_KIND,
  L_START,
  LINE_INTS,
  storedDataOf
} from './line-layout.js'
import { MAX_LINE_BYTES, type LogChecker } from './log-checker.js'
import type { ScanOptions } from './scan.js'
import type { RecordedEvent } from '../../events/chain.js'
import { detachOnce } from '../worker-script.js'
import { digestLines } from '../../events/line-digests.js'

/** Bytes read at a time inline. */
const CHUNK_BYTES = 1 << 22
/**
 * The most bytes a piece for the workers is read in (a log of a few pieces gets smaller ones):
 * 512 KiB, where 256 KiB replayed the bench case 3-6% slower (what each piece costs: a message
 * each way, a buffer, the worker's set-up of a piece) and 1 MiB slower again (a longer start).
 */
const PIECE_BYTES = 1 << 19
/** Pieces a worker holds at most: enough waiting that it never waits while this thread folds one. */
const HELD = 4
/**
 * Pieces a worker is kept at as they are read; this thread tops it up to HELD with pieces whose
 * lines it hashed itself while it had nothing to fold (the worker then only compares digests).
 */
const LOW = 2

/**
 * Feeds the lines of events.jsonl from `from` to `limit` to the checker; a log of
 * PARALLEL_THRESHOLD_BYTES or more has its lines checked on worker threads and this one up to the
 * first line they do not take, the rest inline. Returns how many bytes follow the last LF (an
 * incomplete line).
 */
export const feedLog = async (
  fh: FileHandle,
  from: number,
  limit: number,
  checker: LogChecker,
  options: ScanOptions
): Promise<number> => {
  const feed: LogFeed = { fh, limit, checker, options }
  let pos = from
  if (limit - from >= (options.parallelFromBytes ?? PARALLEL_THRESHOLD_BYTES)) {
    const fed = await feedShared(feed, from)
    if ('carried' in fed) return fed.carried
    pos = fed.resume
  }
  return feedInline(feed, from, pos)
}

/**
 * Line workers started ahead of a scan of the log at `file`, when it is a regular file large enough
 * for them (else null): a worker takes ~35 ms to load, and started before the case's records are
 * read it has loaded about when the log's first piece is (pass them as `startedWorkers`). The
 * caller stops them once the scan ended (or failed before it reached the log).
 */
export const startLineWorkersFor = async (
  file: string,
  options: Pick<ScanOptions, 'canonical' | 'parallelFromBytes' | 'lineWorkers'>
): Promise<LineWorkers | null> => {
  const st = await lstat(file).catch(() => null)
  if (st === null || !st.isFile() || st.size < (options.parallelFromBytes ?? PARALLEL_THRESHOLD_BYTES)) return null
  return startLineWorkers(options.lineWorkers ?? defaultLineWorkers(), options.canonical !== false)
}

/** What both ways of feeding read and feed: the open log up to `limit`, into the checker. */
interface LogFeed {
  readonly fh: FileHandle
  readonly limit: number
  readonly checker: LogChecker
  readonly options: ScanOptions
}

/** A piece of whole lines read from `base`: `length` bytes of `bytes`, whose buffer is its own. */
interface Piece {
  readonly base: number
  readonly bytes: Buffer
  readonly length: number
}

/** A piece read for a worker, with its lines' digests when this thread hashed them. */
interface Outgoing {
  readonly piece: Piece
  readonly lines: number
  readonly digests: ArrayBuffer | null
}

/** How reading in pieces ends: at the log's end (bytes after the last LF), or at a line that may be over MAX_LINE_BYTES. */
type PiecesEnd = { readonly carried: number } | { readonly resume: number }

/**
 * Reads [from, limit) in pieces of whole lines, each in a buffer of its own (a worker takes it).
 * Stops before a line that may be longer than MAX_LINE_BYTES: the inline reader cuts such a line
 * where its chunks end, so it is read inline from its start. Reads one piece ahead: the read of the
 * next piece starts as soon as this one is in (where it starts depends on this one's last line),
 * so the folding thread hashes and folds while libuv's thread reads, instead of waiting for each
 * read (reads into fresh memory wait for a core while the line worker and V8's compiler threads run).
 */
const pieceReader = (fh: FileHandle, from: number, limit: number) => {
  const size = Math.min(PIECE_BYTES, Math.max(256, Math.floor((limit - from) / 16)))
  let pos = from
  let carry: Buffer = Buffer.alloc(0)
  let end: PiecesEnd | null = null
  const readOne = async (): Promise<Piece | PiecesEnd> => {
    for (;;) {
      if (end !== null) return end
      const want = Math.min(size, limit - pos)
      // Not zero-filled, and not from the pool: its ArrayBuffer is its own, to be transferred.
      const bytes = Buffer.allocUnsafeSlow(carry.length + Math.max(want, 0))
      carry.copy(bytes)
      const { bytesRead } = want <= 0 ? { bytesRead: 0 } : await fh.read(bytes, carry.length, want, pos)
      if (bytesRead === 0) {
        end = { carried: carry.length }
        continue
      }
      const base = pos - carry.length
      const filled = carry.length + bytesRead
      pos += bytesRead
      const complete = bytes.subarray(0, filled).lastIndexOf(10) + 1
      carry = Buffer.from(bytes.subarray(complete, filled))
      if (carry.length >= MAX_LINE_BYTES) end = { resume: base + complete }
      if (complete > 0) return { base, bytes, length: complete }
    }
  }
  /** The read of the piece after the one last returned, under way. */
  let ahead: Promise<Piece | PiecesEnd> | null = null
  return (): Promise<Piece | PiecesEnd> => {
    const current = ahead ?? readOne()
    ahead = current.then((r) => ('bytes' in r ? readOne() : r))
    // A read that fails is reported when its piece is asked for; until then (or if it never is,
    // when the pieces stop early) its rejection is not unhandled.
    ahead.catch(() => undefined)
    return current
  }
}

/**
 * The lines from `from` in order, checked on the workers: a piece goes to a worker that has loaded
 * as it is read while the worker holds fewer than LOW, and the pieces are folded in order as they
 * come back. This thread checks no line itself: on two cores it would compete with the worker for
 * the second core (and V8 would compile the line checks for this thread too); folding takes less
 * time than checking, so the worker sets the pace, and whenever this thread has nothing to fold it
 * hashes the lines of the next piece for the worker (native SHA-256, little JavaScript) and tops
 * the worker up to HELD (while no worker has loaded, it hashes the first pieces ahead). A line that passed is folded from its ints, any other is checked inline
 * from its bytes. Ends at the log's end, or where the pieces stop (a line that may be over
 * MAX_LINE_BYTES, a worker that failed): then the rest is read inline from `resume`.
 */
const feedShared = async ({ fh, limit, checker, options }: LogFeed, from: number): Promise<PiecesEnd> => {
  // Pieces go to the workers transferred: the first transfer would discard the fold's optimized code.
  detachOnce()
  const read = pieceReader(fh, from, limit)
  const workers =
    options.startedWorkers ?? startLineWorkers(options.lineWorkers ?? defaultLineWorkers(), options.canonical !== false)
  /** The pieces sent, in order: their ids and where each starts. */
  const queue: Array<{ readonly id: number; readonly base: number }> = []
  const answered = new Map<number, CheckedPiece>()
  let ended: PiecesEnd | null = null
  let ids = 0
  const cursor = { next: from }
  /** Pieces read, and their lines hashed, while no worker had loaded yet: the first sent. */
  const ahead: Outgoing[] = []
  /** Reads the next piece (its lines hashed here when `digest`); null at the end. */
  const readPiece = async (digest: boolean): Promise<Outgoing | null> => {
    if (ended !== null) return null
    const p = await read()
    if (!('bytes' in p)) {
      ended = p
      return null
    }
    const lines = digest ? countLines(p.bytes, p.length) : 0
    return { piece: p, lines, digests: digest ? digestLines(p.bytes, lines) : null }
  }
  const more = (): boolean => ahead.length > 0 || ended === null
  /** Sends the next piece to worker `w`; false at the end. */
  const send = async (w: number, digest: boolean): Promise<boolean> => {
    const o = ahead.shift() ?? (await readPiece(digest))
    if (o === null) return false
    queue.push({ id: ids, base: o.piece.base })
    workers.send(w, ids++, o.piece.bytes.buffer as ArrayBuffer, o.piece.length, o.digests, o.lines)
    return true
  }
  try {
    for (;;) {
      let loaded = false
      for (let w = 0; w < workers.count; w++) {
        if (!workers.ready(w)) continue
        loaded = true
        while (more() && workers.held(w) < LOW) if (!(await send(w, false))) break
      }
      // A worker that failed: the rest is read inline.
      if (!workers.poll((a) => answered.set(a.id, a))) return { resume: cursor.next }
      const head = queue[0]
      const ready = head === undefined ? undefined : answered.get(head.id)
      if (head !== undefined && ready !== undefined) {
        queue.shift()
        answered.delete(head.id)
        if (foldChecked(ready.meta, ready.lines, ready.stopAt, Buffer.from(ready.buffer), head.base, cursor, checker))
          return { resume: cursor.next }
        options.onProgress?.(cursor.next, limit)
        continue
      }
      if (head === undefined && !more()) return ended ?? { resume: cursor.next }
      // Nothing to fold: hash the lines of a piece for a worker that holds fewer than HELD, or,
      // while no worker has loaded, of a piece it will be sent first.
      let topped = false
      for (let w = 0; w < workers.count && !topped; w++)
        if (more() && workers.ready(w) && workers.held(w) < HELD) topped = await send(w, true)
      if (!loaded && ahead.length < HELD) {
        // The first piece goes without digests: the worker's checks then meet both ways of checking
        // a line's hash before V8 optimizes them (a piece without digests after only pieces with
        // them threw the optimized checks away, and they were compiled again).
        const o = await readPiece(ids > 0 || ahead.length > 0)
        if (o !== null) ahead.push(o)
        topped = o !== null
      }
      if (topped) continue
      // The next piece is on a worker, or no worker has loaded yet.
      if (!(await workers.next((a) => answered.set(a.id, a)))) return { resume: cursor.next }
    }
  } finally {
    await workers.stop()
  }
}

/** The lines (LFs) in the first `length` bytes of `bytes`. */
const countLines = (bytes: Buffer, length: number): number => {
  let n = 0
  for (let at = bytes.indexOf(10); at >= 0 && at < length; at = bytes.indexOf(10, at + 1)) n++
  return n
}

/**
 * Folds a checked piece (`lines` lines of `buf`, their ints in `m`; `stopAt`: where a line over
 * MAX_LINE_BYTES stopped its checks, or -1); true when reading goes on inline from `cursor.next`.
 */
const foldChecked = (
  m: Int32Array,
  lines: number,
  stopAt: number,
  buf: Buffer,
  base: number,
  cursor: { next: number },
  checker: LogChecker
): boolean => {
  let before: RecordedEvent | null = null
  for (let i = 0, at = 0; i < lines; i++, at += LINE_INTS) {
    const s = m[at + L_START] as number
    const e = m[at + L_END] as number
    // The lines are read where this thread would have read them: a line elsewhere is a disagreement.
    if (base + s !== cursor.next) return true
    const kind = m[at + L_KIND]
    if (kind === KIND_BYTES) {
      checker.line(buf.subarray(s, e - 1), null, base + s, base + e)
      before = null
    } else {
      const event = eventOfLine(buf, m, at, before)
      const ds = m[at + L_DATA] as number
      const de = m[at + L_DATA_END] as number
      checker.checked(event, kind === KIND_CHECKED_REFS ? () => storedDataOf(buf, ds, de) : null, base + s, base + e)
      before = event
    }
    cursor.next = base + e
  }
  return stopAt >= 0
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
