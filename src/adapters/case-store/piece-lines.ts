/**
 * The checks a line of events.jsonl has on its own, over a piece of whole lines: what a line
 * worker (line-worker.ts) and the folding thread, when it takes a piece itself (feed-log.ts), both
 * run, so the two can never judge a line differently.
 */
import { isUtf8 } from 'node:buffer'
import { checkLine, lineDigestOfBytes, type CheckedLine, type RecordedEvent } from '../../events/chain.js'
import type { EventEnvelope } from '../../events/envelope.js'
import { MAX_LINE_BYTES } from './log-checker.js'

/** A line that passed every check it has on its own. */
export interface PassedLine {
  readonly envelope: EventEnvelope
  readonly event: RecordedEvent
  readonly refs: CheckedLine['refs']
}

/**
 * Calls `onLine` for every line of `piece` (whole lines, each ending with an LF) in order, with its
 * offsets (`end` one past its LF), its text (null when it is not UTF-8) and, when it passed every
 * check it has on its own, what checkLine found; `onCount` first, with the number of lines. Stops
 * at a line longer than MAX_LINE_BYTES: `stopAt` is its offset (-1 when there is none), `lines`
 * how many lines were passed to `onLine`.
 */
export const eachPieceLine = (
  piece: Buffer,
  canonical: boolean,
  onCount: (lines: number) => void,
  onLine: (i: number, start: number, end: number, text: string | null, passed: PassedLine | null) => void
): { readonly lines: number; readonly stopAt: number } => {
  let count = 0
  for (let at = piece.indexOf(10); at >= 0; at = piece.indexOf(10, at + 1)) count++
  onCount(count)
  // LF never occurs inside a multi-byte sequence, so string and byte lines correspond.
  const texts = isUtf8(piece) ? piece.toString('utf8', 0, piece.length - 1).split('\n') : null
  let s = 0
  for (let i = 0; i < count; i++) {
    const nl = piece.indexOf(10, s)
    if (nl + 1 - s > MAX_LINE_BYTES) return { lines: i, stopAt: s }
    const text = texts?.[i] ?? (isUtf8(piece.subarray(s, nl)) ? piece.toString('utf8', s, nl) : null)
    let passed: PassedLine | null = null
    if (text !== null) {
      // The digest from the bytes: hashing the text would encode it to UTF-8 again.
      const precomputed = { digest: lineDigestOfBytes(piece.subarray(s, nl)) }
      const c = checkLine(text, { seq: null, prev: null, lineNo: 0, canonical, precomputed })
      if (c.findings.length === 0 && c.event !== undefined && c.envelope !== undefined)
        passed = { envelope: c.envelope, event: c.event, refs: c.refs }
    }
    onLine(i, s, nl + 1, text, passed)
    s = nl + 1
  }
  return { lines: count, stopAt: -1 }
}
