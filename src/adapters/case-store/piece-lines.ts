/**
 * The checks a line of events.jsonl has on its own, over a piece of whole lines, as a line worker
 * runs them (line-worker.ts). A line is checked by the shorter way for a
 * writer's lines (line-fast.ts) on its bytes: no text of the line and no strings of its envelope
 * are made, only its data's text for JSON.parse. Any other line is left to the folding thread's
 * inline check (checkLine), so every finding is checkLine's.
 */
import { isAscii, isUtf8 } from 'node:buffer'
import type { GivenDigests } from '../../events/line-digests.js'
import {
  AT_CHARS,
  checkScanned,
  DIGEST_CHARS,
  isDigestAt,
  S_ACTOR,
  S_AT,
  S_CMD,
  S_CMD_END,
  S_DATA,
  S_DATA_END,
  S_HASH,
  S_ID,
  S_ID_END,
  S_PREV,
  S_REFS,
  S_SEQ,
  S_VERSION,
  sameBytes,
  bytesAre,
  scannedType,
  S_TYPE,
  S_TYPE_END,
  SCAN_SLOTS,
  scanLine,
  scannedInt
} from '../../events/line-fast.js'
import {
  KIND_BYTES,
  KIND_CHECKED,
  KIND_CHECKED_REFS,
  L_ACTOR,
  L_AT,
  L_CMD,
  L_CMD_END,
  L_DATA,
  L_DATA_END,
  L_END,
  L_HASH,
  L_ID,
  L_ID_END,
  L_KIND,
  L_PREV,
  L_SEQ,
  L_START,
  L_TYPE,
  L_VERSION,
  LINE_INTS,
  TYPE_INDEX,
  TYPES
} from './line-layout.js'
import { MAX_LINE_BYTES } from './log-checker.js'
import { latin1Of, utf8Of } from '../../events/buffer-text.js'

/** The lines of a piece as checked: LINE_INTS ints per line up to `lines` (line-layout.ts). */
export interface PieceLines {
  readonly meta: Int32Array
  readonly lines: number
  /** The offset in the piece of a line longer than MAX_LINE_BYTES (not checked, nor any after it), or -1. */
  readonly stopAt: number
}

const scan = new Int32Array(SCAN_SLOTS)

/** The type of the line just scanned: the line before's string when it has the same (runs of one type are the usual log). */
const typeOf = (b: Buffer, m: Int32Array, before: number): string => {
  if (before >= 0) {
    const t = TYPES[m[before + L_TYPE] as number] as string
    const ts = scan[S_TYPE] as number
    if ((scan[S_TYPE_END] as number) - ts === t.length && bytesAre(b, ts, t)) return t
  }
  return scannedType(b, scan)
}

/**
 * Checks every line of `piece` (whole lines, each ending with an LF) on its own (canonical form
 * too when `canonical`), in order, into LINE_INTS ints per line; `given`: the lines' digests, when
 * the thread that handed the piece over computed them (line-fast.ts). Stops at a line longer than
 * MAX_LINE_BYTES.
 */
export const checkPiece = (piece: Buffer, canonical: boolean, given: GivenDigests | null = null): PieceLines => {
  let count = 0
  for (let at = piece.indexOf(10); at >= 0; at = piece.indexOf(10, at + 1)) count++
  const meta = new Int32Array(count * LINE_INTS)
  // An ASCII piece (the usual one) has its data's text read as latin1, to the same text at about
  // half the cost of UTF-8; LF never occurs inside a multi-byte sequence, so a valid piece's lines
  // are valid too.
  const ascii = isAscii(piece)
  const utf8 = ascii || isUtf8(piece)
  let before = -1
  let s = 0
  for (let i = 0; i < count; i++) {
    const nl = piece.indexOf(10, s)
    if (nl + 1 - s > MAX_LINE_BYTES) return { meta, lines: i, stopAt: s }
    const at = i * LINE_INTS
    meta[at + L_START] = s
    meta[at + L_END] = nl + 1
    const text = utf8 || isUtf8(piece.subarray(s, nl))
    const passed = checkOne(piece, s, nl, text, ascii, canonical, given, i, meta, at, before)
    meta[at + L_KIND] = passed
    before = passed === KIND_BYTES ? -1 : at
    s = nl + 1
  }
  return { meta, lines: count, stopAt: -1 }
}

/**
 * Checks the line `b[start, end)` on its own and describes it at `m[at...]` (`before`: where the
 * line before's ints are when it passed, else -1): its kind, KIND_BYTES when it did not pass.
 */
const checkOne = (
  b: Buffer,
  start: number,
  end: number,
  utf8: boolean,
  ascii: boolean,
  canonical: boolean,
  given: GivenDigests | null,
  line: number,
  m: Int32Array,
  at: number,
  before: number
): number => {
  if (!utf8 || !scanLine(b, start, end, scan)) return KIND_BYTES
  const prev = scan[S_PREV] as number
  const sameLink = before >= 0 && sameBytes(b, prev, m[before + L_HASH] as number, DIGEST_CHARS)
  if (!sameLink && !isDigestAt(b, prev)) return KIND_BYTES
  const ds = scan[S_DATA] as number
  const de = scan[S_DATA_END] as number
  const dataText = ascii ? latin1Of(b, ds, de) : utf8Of(b, ds, de)
  const c = checkScanned(b, start, end, scan, dataText, canonical, typeOf(b, m, before), given, line, true)
  if (c === null) return KIND_BYTES
  const type = TYPE_INDEX.get(c.type)
  const seq = scannedInt(b, scan, S_SEQ, end)
  const version = scannedInt(b, scan, S_VERSION, end)
  if (type === undefined || seq > 0x7fffffff || version > 0x7fffffff) return KIND_BYTES
  const cmd = scan[S_CMD] as number
  const cmdEnd = scan[S_CMD_END] as number
  // The line before's command id is where its ints say (complemented when it is the one before it).
  const beforeCmd = before < 0 ? -1 : (m[before + L_CMD] as number)
  const beforeAt = beforeCmd < 0 ? ~beforeCmd : beforeCmd
  const sameCommand =
    before >= 0 &&
    (m[before + L_CMD_END] as number) - beforeAt === cmdEnd - cmd &&
    sameBytes(b, cmd, beforeAt, cmdEnd - cmd)
  m[at + L_TYPE] = type
  m[at + L_ACTOR] = scan[S_ACTOR] as number
  m[at + L_VERSION] = version
  m[at + L_SEQ] = seq
  // The line before's time when it is the same (a command's events are stamped at once).
  const atStart = scan[S_AT] as number
  const beforeTime = before < 0 ? -1 : (m[before + L_AT] as number)
  const beforeTimeAt = beforeTime < 0 ? ~beforeTime : beforeTime
  m[at + L_AT] = before >= 0 && sameBytes(b, atStart, beforeTimeAt, AT_CHARS) ? ~atStart : atStart
  m[at + L_ID] = scan[S_ID] as number
  m[at + L_ID_END] = scan[S_ID_END] as number
  m[at + L_CMD] = sameCommand ? ~cmd : cmd
  m[at + L_CMD_END] = cmdEnd
  m[at + L_HASH] = scan[S_HASH] as number
  m[at + L_PREV] = sameLink ? -1 : prev
  m[at + L_DATA] = ds
  m[at + L_DATA_END] = de
  return scan[S_REFS] === 1 ? KIND_CHECKED_REFS : KIND_CHECKED
}
