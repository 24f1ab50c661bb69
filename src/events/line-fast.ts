/**
 * A shorter way through {@link checkLine} for the lines a writer seals: a line of events.jsonl is
 * read as the envelope's members in canonical order, each value in the one form a writer gives it
 * (ASCII strings without escapes, integers of up to 15 digits), and only `data` goes through
 * JSON.parse, the bounds, the canonical check, the reference walk and the codec. The envelope's
 * members are checked on the line's bytes: no object is built to parse them and no regular
 * expression runs (in a log of notes the envelope is a third of the bytes and most of the
 * parsing: ~60% of JSON.parse's time, the two digest patterns ~0.5 µs a line).
 *
 * It only ever says yes: a line it does not take (any other form, any failed check) is checked by
 * checkLine, so every finding is checkLine's. When it takes a line, checkLine would have found
 * nothing and returned the same envelope, event and references (a property test compares both on
 * generated and mutated lines). Pure.
 */
import * as E from 'fp-ts/lib/Either.js'
import { isCanonicalText } from './canonical.js'
import { canonicalBytes, NOT_CANONICAL, UNDECIDED } from './canonical-bytes.js'
import { registry } from './catalog.js'
import { lineDigestHexCut, recordedEvent, type CheckedLine } from './chain.js'
import { type GivenDigests, HEX_DIGITS, sameAcross } from './line-digests.js'
import { EVENT_FORMAT, type EventEnvelope } from './envelope.js'
import { boundsViolation, MAX_JSON_DEPTH, MAX_JSON_MEMBERS } from './bounds.js'
import { collectRefs } from './refs.js'
import { latin1Of } from './buffer-text.js'

const bytesOf = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0))

const ACTOR = bytesOf('{"actor":"')
const AT = bytesOf('","at":"')
const COMMAND_ID = bytesOf('","command_id":"')
const DATA = bytesOf('","data":')
const FORMAT_HASH = bytesOf(`,"format":"${EVENT_FORMAT}","hash":"`)
/** Where the hash member `,"hash":"...` begins, from the start of FORMAT_HASH. */
const HASH_MEMBER_AT = FORMAT_HASH.length - ',"hash":"'.length
const ID = bytesOf('","id":"')
const PREV = bytesOf('","prev":"')
const SEQ = bytesOf('","seq":')
const TYPE = bytesOf(',"type":"')
const VERSION = bytesOf('","version":')
const SHA256 = bytesOf('sha256:')
/** Characters of a digest (`sha256:` and 64 hex digits). */
export const DIGEST_CHARS = 'sha256:'.length + 64
const ACTORS = ['operator', 'controller', 'model', 'system'] as const
const ACTOR_BYTES = ACTORS.map(bytesOf)
/** An envelope's members besides `data`: its bounds are the line's less one level and these. */
const ENVELOPE_MEMBERS = 11
const TIMESTAMP = '0000-00-00T00:00:00.000Z'
/** Characters of an event's time. */
export const AT_CHARS = TIMESTAMP.length

/** Character classes of bytes, as bits: a digit, [A-Za-z0-9], an Identifier's, a lowercase hex digit, [A-Z]. */
const DIGIT = 1
const ALNUM = 2
const IDENT = 4
const HEX = 8
const UPPER = 16
const CLASS = new Uint8Array(256)
for (let c = 0; c < 128; c++) {
  const ch = String.fromCharCode(c)
  const digit = ch >= '0' && ch <= '9'
  const upper = ch >= 'A' && ch <= 'Z'
  const alnum = digit || upper || (ch >= 'a' && ch <= 'z')
  CLASS[c] =
    (digit ? DIGIT : 0) |
    (alnum ? ALNUM : 0) |
    (alnum || '._:-'.includes(ch) ? IDENT : 0) |
    (digit || (ch >= 'a' && ch <= 'f') ? HEX : 0) |
    (upper ? UPPER : 0)
}
const is = (b: Uint8Array, i: number, bits: number): boolean => ((CLASS[b[i] as number] as number) & bits) !== 0

/** Whether the bytes at `p` are `lit` (false for p < 0). */
const at = (b: Uint8Array, p: number, lit: Uint8Array): boolean => {
  if (p < 0 || p + lit.length > b.length) return false
  for (let i = 0; i < lit.length; i++) if (b[p + i] !== lit[i]) return false
  return true
}

/** The offset after `lit` when the bytes at `p` are `lit`, else -1. */
const after = (b: Uint8Array, p: number, lit: Uint8Array): number => (at(b, p, lit) ? p + lit.length : -1)

/** The offset of `lit` when the bytes before `p` are `lit`, else -1. */
const before = (b: Uint8Array, p: number, lit: Uint8Array): number => (at(b, p - lit.length, lit) ? p - lit.length : -1)

/** The end of an Identifier (`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`) from `p`, at a quote; -1 if none. */
const identifierFrom = (b: Uint8Array, p: number): number => {
  if (p < 0 || !is(b, p, ALNUM)) return -1
  for (let i = p + 1; i < b.length && i <= p + 128; i++) {
    if (b[i] === 34) return i
    if (!is(b, i, IDENT)) return -1
  }
  return -1
}

/** The start of an Identifier ending at `e` (a quote), read backwards from there to the quote before it; -1 if none. */
const identifierTo = (b: Uint8Array, e: number, floor: number): number => {
  if (e < 0) return -1
  for (let i = e - 1; i >= floor && i >= e - 129; i--) {
    if (b[i] === 34) return i + 1 < e && is(b, i + 1, ALNUM) ? i + 1 : -1
    if (!is(b, i, IDENT)) return -1
  }
  return -1
}

/** Whether a Digest (`^sha256:[0-9a-f]{64}$`) is at `p`. */
const isDigest = (b: Uint8Array, p: number): boolean => {
  if (!at(b, p, SHA256)) return false
  for (let i = p + SHA256.length; i < p + DIGEST_CHARS; i++) if (!is(b, i, HEX)) return false
  return true
}

/** The end of a Timestamp (`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`) from `p`; -1 if none. */
const timestampFrom = (b: Uint8Array, p: number): number => {
  if (p < 0 || p + TIMESTAMP.length > b.length) return -1
  for (let i = 0; i < TIMESTAMP.length; i++) {
    const want = TIMESTAMP.charCodeAt(i)
    if (want === 48 ? !is(b, p + i, DIGIT) : b[p + i] !== want) return -1
  }
  return p + TIMESTAMP.length
}

/** The start of a positive integer in canonical form of at most 15 digits (a safe integer) ending at `e`; -1 if none. */
const positiveIntTo = (b: Uint8Array, e: number, floor: number): number => {
  let i = e
  while (i > floor && is(b, i - 1, DIGIT)) i--
  return i === e || e - i > 15 || b[i] === 48 ? -1 : i
}

const intOf = (b: Uint8Array, p: number, end: number): number => {
  let n = 0
  for (let i = p; i < end; i++) n = n * 10 + ((b[i] as number) - 48)
  return n
}

/** Where {@link scanLine} puts the offsets of a writer's line's members (into the line's bytes). */
export const S_ACTOR = 0
export const S_AT = 1
export const S_CMD = 2
export const S_CMD_END = 3
export const S_DATA = 4
export const S_DATA_END = 5
export const S_HASH = 6
export const S_ID = 7
export const S_ID_END = 8
export const S_PREV = 9
export const S_SEQ = 10
export const S_SEQ_END = 11
export const S_TYPE = 12
export const S_TYPE_END = 13
export const S_VERSION = 14
/** Set by {@link checkScanned}: 1 when the data holds object references. */
export const S_REFS = 15
/** Slots of a scan. */
export const SCAN_SLOTS = 16

/** The actors in the order a scan numbers them (`S_ACTOR`). */
export const SCAN_ACTORS: readonly string[] = ACTORS

/**
 * Reads the line `b[start, end)` (no LF) as a writer writes it: the members in canonical order,
 * every value but `data` an ASCII string of its pattern without escapes or an integer of up to 15
 * digits; their offsets go to `out`. False when the line is not in that form. The prev member is
 * only located: whether it is a digest is the caller's to check (equal to the line before's hash,
 * or {@link isDigestAt}), and so are the hash's value and `data`.
 */
export const scanLine = (b: Uint8Array, start: number, end: number, out: Int32Array): boolean => {
  // The envelope's members after data, read backwards from the line's end.
  if (b[end - 1] !== 125) return false
  const versionStart = positiveIntTo(b, end - 1, start)
  const typeEnd = before(b, versionStart, VERSION)
  let typeStart = typeEnd - 1
  while (typeStart > start && typeStart > typeEnd - 64 && is(b, typeStart, ALNUM)) typeStart--
  if (typeEnd < 0 || !is(b, ++typeStart, UPPER) || typeEnd - typeStart < 2) return false
  const seqEnd = before(b, typeStart, TYPE)
  const seqStart = positiveIntTo(b, seqEnd, start)
  const prevEnd = before(b, seqStart, SEQ)
  const prevStart = prevEnd - DIGEST_CHARS
  const idEnd = before(b, prevStart, PREV)
  const idStart = identifierTo(b, idEnd, start)
  const hashEnd = before(b, idStart, ID)
  const hashStart = hashEnd - DIGEST_CHARS
  const dataEnd = before(b, hashStart, FORMAT_HASH)
  if (dataEnd < 0 || b[dataEnd - 1] !== 125) return false
  // The members before data, read forwards.
  if (!at(b, start, ACTOR)) return false
  let p = start + ACTOR.length
  let actor = -1
  for (let a = 0; a < ACTORS.length && actor < 0; a++) {
    const q = after(b, p, ACTOR_BYTES[a] as Uint8Array)
    if (q >= 0 && b[q] === 34) {
      actor = a
      p = q
    }
  }
  if (actor < 0) return false
  const atStart = after(b, p, AT)
  const atEnd = timestampFrom(b, atStart)
  const cmdStart = after(b, atEnd, COMMAND_ID)
  const cmdEnd = identifierFrom(b, cmdStart)
  const dataStart = after(b, cmdEnd, DATA)
  if (dataStart < 0 || dataStart >= dataEnd || b[dataStart] !== 123) return false
  out[S_ACTOR] = actor
  out[S_AT] = atStart
  out[S_CMD] = cmdStart
  out[S_CMD_END] = cmdEnd
  out[S_DATA] = dataStart
  out[S_DATA_END] = dataEnd
  out[S_HASH] = hashStart
  out[S_ID] = idStart
  out[S_ID_END] = idEnd
  out[S_PREV] = prevStart
  out[S_SEQ] = seqStart
  out[S_SEQ_END] = seqEnd
  out[S_TYPE] = typeStart
  out[S_TYPE_END] = typeEnd
  out[S_VERSION] = versionStart
  return true
}

/** Whether a Digest (`^sha256:[0-9a-f]{64}$`) is at `p`. */
export const isDigestAt = (b: Uint8Array, p: number): boolean => isDigest(b, p)

/** Whether the bytes at `p` are the (ASCII) string `s`. */
export const bytesAre = (b: Uint8Array, p: number, s: string): boolean => {
  if (p < 0 || p + s.length > b.length) return false
  for (let i = 0; i < s.length; i++) if (b[p + i] !== s.charCodeAt(i)) return false
  return true
}

/** Whether the bytes at `p` and `q` are the same for `n` bytes. */
export const sameBytes = (b: Uint8Array, p: number, q: number, n: number): boolean => {
  for (let i = 0; i < n; i++) if (b[p + i] !== b[q + i]) return false
  return true
}

/** What {@link checkScanned} found in a line's data: the data as stored, and as decoded (upcast). */
export interface ScannedData {
  readonly type: string
  readonly data: Record<string, unknown>
  readonly body: unknown
  readonly refs: CheckedLine['refs']
}

/**
 * The checks of a scanned line (`s` from {@link scanLine}; its prev checked by the caller) that
 * need no other line: its hash, and its data (`dataText`, the data's characters) parsed, within
 * bounds (one level and the envelope's members less than a line), canonical when asked, with
 * well-formed object references, decoding by its type's codec (`type`: its type, when the caller
 * has it; `utf8`: the line's bytes are valid UTF-8, so canonical form is read off them). Null
 * when one fails. Sets `s[S_REFS]`.
 */
export const checkScanned = (
  b: Buffer,
  start: number,
  end: number,
  s: Int32Array,
  dataText: string,
  canonical: boolean,
  type: string = scannedType(b, s),
  given: GivenDigests | null = null,
  line = 0,
  utf8 = false
): ScannedData | null => {
  const dataEnd = s[S_DATA_END] as number
  // The hash is compared with the digest of the line without its hash member (computed here, or
  // given for the very same cut of these bytes): equal, it is a digest.
  const hashAt = s[S_HASH] as number
  const cut = dataEnd + HASH_MEMBER_AT
  if (!at(b, hashAt, SHA256)) return null
  const digits = hashAt + SHA256.length
  if (given !== null && given.cuts[line] === cut) {
    if (!sameAcross(b, digits, given.hex, line * HEX_DIGITS, HEX_DIGITS)) return null
  } else if (!bytesAre(b, digits, lineDigestHexCut(b, start, cut, end))) return null
  let data: unknown
  try {
    data = JSON.parse(dataText)
  } catch {
    return null
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null
  if (boundsViolation(data, MAX_JSON_DEPTH - 1, MAX_JSON_MEMBERS - ENVELOPE_MEMBERS) !== null) return null
  if (canonical) {
    // Read off the bytes when they are known to be UTF-8 (they are dataText's), else serialised.
    const c = utf8 ? canonicalBytes(b, s[S_DATA] as number, dataEnd) : UNDECIDED
    if (c === NOT_CANONICAL || (c === UNDECIDED && !isCanonicalText(dataText, data))) return null
  }
  const { refs, invalid } = collectRefs(data)
  if (invalid.length > 0) return null
  const body = registry.decode(type, intOf(b, s[S_VERSION] as number, end - 1), data)
  if (E.isLeft(body)) return null
  s[S_REFS] = refs.length > 0 ? 1 : 0
  return { type, data: data as Record<string, unknown>, body: body.right, refs }
}

/** The type of a scanned line. */
export const scannedType = (b: Buffer, s: Int32Array): string =>
  latin1Of(b, s[S_TYPE] as number, s[S_TYPE_END] as number)

/** A member of a scanned line that is an integer (seq: `S_SEQ`, version: `S_VERSION`). */
export const scannedInt = (b: Uint8Array, s: Int32Array, slot: typeof S_SEQ | typeof S_VERSION, end: number): number =>
  slot === S_SEQ ? intOf(b, s[S_SEQ] as number, s[S_SEQ_END] as number) : intOf(b, s[S_VERSION] as number, end - 1)

/** How a line is read: its bytes, and its text (`text` from `from`, the line's characters up to `to`). */
export interface FastLine {
  readonly bytes: Buffer
  readonly start: number
  readonly end: number
  readonly text: string
  readonly from: number
  readonly to: number
}

export interface FastOptions {
  /** Check canonical form too (verify). */
  readonly canonical: boolean
  /** The hash of the line before, when it passed: a prev equal to it is a digest. */
  readonly hashBefore: string | null
}

const scan = new Int32Array(SCAN_SLOTS)

/**
 * checkLine's answer for the line (no LF), checked on its own (no sequence or link), or null when
 * checkLine must check it (it is not in a writer's form, or a check fails).
 */
export const checkLineFast = (l: FastLine, o: FastOptions): CheckedLine | null => {
  const b = l.bytes
  const { start, end } = l
  if (!scanLine(b, start, end, scan)) return null
  const prevStart = scan[S_PREV] as number
  if (!(o.hashBefore !== null && bytesAre(b, prevStart, o.hashBefore)) && !isDigest(b, prevStart)) return null
  // Data's characters: before data every member is ASCII, so a byte there is a character; after it too.
  const dataText = l.text.slice(
    l.from + ((scan[S_DATA] as number) - start),
    l.to - (end - (scan[S_DATA_END] as number))
  )
  const c = checkScanned(b, start, end, scan, dataText, o.canonical)
  if (c === null) return null
  const str = (slot: number, length: number): string =>
    b.toString('latin1', scan[slot] as number, (scan[slot] as number) + length)
  // In the members' order, as JSON.parse gives them for a canonical line.
  const env: EventEnvelope = {
    actor: ACTORS[scan[S_ACTOR] as number] as (typeof ACTORS)[number],
    at: str(S_AT, TIMESTAMP.length),
    command_id: b.toString('latin1', scan[S_CMD] as number, scan[S_CMD_END] as number),
    data: c.data,
    format: EVENT_FORMAT,
    hash: str(S_HASH, DIGEST_CHARS),
    id: b.toString('latin1', scan[S_ID] as number, scan[S_ID_END] as number),
    prev: str(S_PREV, DIGEST_CHARS),
    seq: scannedInt(b, scan, S_SEQ, end),
    type: c.type,
    version: scannedInt(b, scan, S_VERSION, end)
  }
  return { envelope: env, event: recordedEvent(env, c.body), refs: c.refs, findings: [] }
}
