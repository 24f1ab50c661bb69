/**
 * The checks a line of events.jsonl has on its own, over a piece of whole lines: what a line
 * worker (line-worker.ts) and the folding thread, when it takes a piece itself (feed-log.ts), both
 * run, so the two can never judge a line differently.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import { checkLine, lineDigestOfBytes, type CheckedLine, type RecordedEvent } from '../../events/chain.js'
import { checkLineFast } from '../../events/line-fast.js'
import type { EventEnvelope } from '../../events/envelope.js'
import { MAX_LINE_BYTES } from './log-checker.js'

/** A line that passed every check it has on its own. */
export interface PassedLine {
  readonly envelope: EventEnvelope
  readonly event: RecordedEvent
  readonly refs: CheckedLine['refs']
}

/** How a piece's lines are checked. */
export interface PieceChecks {
  /** Check canonical form too (verify). */
  readonly canonical: boolean
  /** The events are kept beyond the piece (the folding thread's own pieces): strings of their own, not slices of its text. */
  readonly fresh: boolean
}

/**
 * Calls `onLine` for every line of `piece` (whole lines, each ending with an LF) in order, with its
 * offsets (`end` one past its LF), its text (null when it is not UTF-8) and, when it passed every
 * check it has on its own, what checkLine found (by its shorter way for a writer's line,
 * line-fast.ts); `onCount` first, with the number of lines. Stops at a line longer than
 * MAX_LINE_BYTES: `stopAt` is its offset (-1 when there is none), `lines` how many lines were
 * passed to `onLine`.
 */
export const eachPieceLine = (
  piece: Buffer,
  checks: PieceChecks,
  onCount: (lines: number) => void,
  onLine: (i: number, start: number, end: number, text: string | null, passed: PassedLine | null) => void
): { readonly lines: number; readonly stopAt: number } => {
  const { canonical, fresh } = checks
  let count = 0
  for (let at = piece.indexOf(10); at >= 0; at = piece.indexOf(10, at + 1)) count++
  onCount(count)
  // Each line read by itself: a string of a whole piece (over 128 KiB) is a large object of V8's,
  // ~8x the cost of the lines' strings. ASCII (the usual piece) reads as latin1, to the same text
  // at about half the cost of UTF-8; LF never occurs inside a multi-byte sequence, so a valid
  // piece's lines are valid too.
  const encoding = isAscii(piece) ? 'latin1' : isUtf8(piece) ? 'utf8' : null
  let hashBefore: string | null = null
  let s = 0
  for (let i = 0; i < count; i++) {
    const nl = piece.indexOf(10, s)
    if (nl + 1 - s > MAX_LINE_BYTES) return { lines: i, stopAt: s }
    const text =
      encoding !== null
        ? piece.toString(encoding, s, nl)
        : isUtf8(piece.subarray(s, nl))
          ? piece.toString('utf8', s, nl)
          : null
    let passed: PassedLine | null = null
    if (text !== null) {
      const line = { bytes: piece, start: s, end: nl, text, from: 0, to: text.length }
      const c: CheckedLine =
        checkLineFast(line, { canonical, fresh, hashBefore }) ??
        // The digest from the bytes: hashing the text would encode it to UTF-8 again.
        checkLine(text, {
          seq: null,
          prev: null,
          lineNo: 0,
          canonical,
          precomputed: { digest: lineDigestOfBytes(piece.subarray(s, nl)) }
        })
      if (c.findings.length === 0 && c.event !== undefined && c.envelope !== undefined)
        passed = { envelope: c.envelope, event: c.event, refs: c.refs }
    }
    hashBefore = passed === null ? null : passed.event.hash
    onLine(i, s, nl + 1, text, passed)
    s = nl + 1
  }
  return { lines: count, stopAt: -1 }
}
