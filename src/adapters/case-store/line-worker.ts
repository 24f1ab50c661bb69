/**
 * Worker thread of {@link startLineChecks}: reads one part of events.jsonl and checks every line
 * on its own (UTF-8, JSON, bounds, envelope, canonical form when asked, hash, object references,
 * event data), exactly as checkLine does without the chain. Each chunk read goes to the folding
 * thread as its bytes (transferred, not copied) with eleven ints per line: where it lies, and for
 * a line that passed, where its members lie (line-layout.ts). A line that did not pass, or is not
 * laid out plainly, is marked for the folding thread to check from its bytes, as it always did.
 *
 * A line longer than MAX_LINE_BYTES stops the worker: the folding thread goes on from that line's
 * start by itself, reading the way it always did (an over-long line is cut where its chunks end).
 */
import { parentPort, workerData } from 'node:worker_threads'
import { promises as fsp, constants as fsc } from 'node:fs'
import { isUtf8 } from 'node:buffer'
import { checkLine } from '../../events/chain.js'
import { describeLine, KIND_BYTES, LINE_INTS } from './line-layout.js'
import { MAX_LINE_BYTES } from './log-checker.js'

const { file, start, end, canonical, control } = workerData as {
  file: string
  start: number
  end: number
  canonical: boolean
  /** [batches consumed by the folding thread, stop flag]: the worker stays at most WINDOW batches ahead. */
  control: SharedArrayBuffer
}
const port = parentPort
if (port === null) throw new Error('line-worker must run as a worker thread')

const CHUNK = 1 << 22
/** Batches (chunks) a worker may be ahead of the folding thread: its memory stays bounded. */
const WINDOW = 16
const flags = new Int32Array(control)

const ints = (lines: number): Int32Array => new Int32Array(lines * LINE_INTS)

/** Checks the lines of `chunk` up to `complete` into ints; -1 when a line is too long (stop there). */
const checkChunk = (chunk: Buffer, complete: number): { meta: Int32Array; lines: number; stopAt: number } => {
  let lines = 0
  for (let at = chunk.indexOf(10); at >= 0 && at < complete; at = chunk.indexOf(10, at + 1)) lines++
  const meta = ints(lines)
  const texts = isUtf8(chunk.subarray(0, complete)) ? chunk.toString('utf8', 0, complete).split('\n') : null
  let s = 0
  for (let i = 0; i < lines; i++) {
    const nl = chunk.indexOf(10, s)
    if (nl + 1 - s > MAX_LINE_BYTES) return { meta, lines: i, stopAt: s }
    const m = i * LINE_INTS
    meta[m] = s
    meta[m + 1] = nl + 1
    meta[m + 2] = KIND_BYTES
    const text = texts?.[i] ?? (isUtf8(chunk.subarray(s, nl)) ? chunk.toString('utf8', s, nl) : null)
    if (text !== null) {
      const c = checkLine(text, { seq: null, prev: null, lineNo: 0, canonical })
      if (c.findings.length === 0 && c.event !== undefined)
        describeLine(text, nl - s, c.event, meta, m, c.refs.length > 0, canonical)
    }
    s = nl + 1
  }
  return { meta, lines, stopAt: -1 }
}

const fh = await fsp.open(file, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK)
let carry = Buffer.alloc(0)
let pos = start
let sent = 0
let stop: number | null = null
try {
  while (pos < end && stop === null && Atomics.load(flags, 1) === 0) {
    while (sent - Atomics.load(flags, 0) >= WINDOW && Atomics.load(flags, 1) === 0)
      Atomics.wait(flags, 0, Atomics.load(flags, 0), 100)
    const want = Math.min(CHUNK, end - pos)
    const chunk = Buffer.from(new ArrayBuffer(carry.length + want))
    carry.copy(chunk)
    const { bytesRead } = await fh.read(chunk, carry.length, want, pos)
    if (bytesRead === 0) break
    const base = pos - carry.length
    const filled = chunk.subarray(0, carry.length + bytesRead)
    const complete = filled.lastIndexOf(10) + 1
    const { meta, lines, stopAt } = checkChunk(filled, complete)
    // Copied before the chunk's bytes are handed over.
    carry = Buffer.from(filled.subarray(complete))
    pos += bytesRead
    if (stopAt >= 0) stop = base + stopAt
    else if (carry.length >= MAX_LINE_BYTES) stop = pos - carry.length
    port.postMessage({ base, buffer: chunk.buffer, meta, lines }, [
      chunk.buffer as ArrayBuffer,
      meta.buffer as ArrayBuffer
    ])
    sent++
  }
} finally {
  await fh.close()
}
port.postMessage(stop === null ? { done: true, carried: carry.length } : { stop })
