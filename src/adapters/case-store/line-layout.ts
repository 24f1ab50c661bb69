/**
 * Where the members of a canonical event line lie, so a line checked on a worker thread reaches
 * the folding thread as byte offsets instead of a decoded object (structured cloning an event
 * costs about what parsing it does). A canonical line is
 *
 *   {"actor":"A","at":"T","command_id":"C","data":D,"format":"vba-event/1","hash":"H","id":"I","prev":"P","seq":S,"type":"Y","version":V}
 *
 * The worker describes a line this way only when it passed every check a line has on its own
 * (see checkLine) and has exactly this layout with ASCII strings that need no escapes; any other
 * line goes to the folding thread as bytes and is checked there as before.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../../events/chain.js'
import { registry } from '../../events/catalog.js'
import { EVENT_FORMAT } from '../../events/envelope.js'

/** Ints per line in a batch: start, end, kind, type, actor, version, seq, and the lengths of at, command_id, data, id. */
export const LINE_INTS = 11

/** A line the folding thread checks from its bytes. */
export const KIND_BYTES = 0
/** A line that passed its own checks, described by offsets. */
export const KIND_CHECKED = 1
/** The same, and its data holds object references (walked again by whoever collects them). */
export const KIND_CHECKED_REFS = 2

export const TYPES: readonly string[] = [...registry.definitions.keys()]
export const ACTORS: readonly string[] = ['operator', 'controller', 'model', 'system']

const P_ACTOR = '{"actor":"'
const P_AT = '","at":"'
const P_COMMAND = '","command_id":"'
const P_DATA = '","data":'
const S_HASH = `,"format":"${EVENT_FORMAT}","hash":"`
const S_ID = '","id":"'
const S_PREV = '","prev":"'
const S_SEQ = '","seq":'
const S_TYPE = ',"type":"'
const S_VERSION = '","version":'
const DIGEST_CHARS = 'sha256:'.length + 64

/** Whether the backslashes before `at` are odd in number (the quote there is escaped). */
const escaped = (text: string, at: number): boolean => {
  let n = 0
  for (let i = at - 1; i >= 0 && text.charCodeAt(i) === 92; i--) n++
  return n % 2 === 1
}

/**
 * Where the object or array that opens at `from` in the valid JSON `text` closes (one past), or
 * -1. Strings are skipped with indexOf: most of a line's bytes are a note's text.
 */
export const valueEnd = (text: string, from: number): number => {
  let depth = 0
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      let j = text.indexOf('"', i + 1)
      while (j > 0 && escaped(text, j)) j = text.indexOf('"', j + 1)
      if (j < 0) return -1
      i = j
    } else if (c === 123 || c === 91) depth++
    else if (c === 125 || c === 93) {
      depth--
      if (depth === 0) return i + 1
    }
  }
  return -1
}

/**
 * The offsets of a checked line (`text`, `bytes` long) into `out` at `at`, or false when the line
 * does not have the plain layout (then it travels as bytes). `canonical`: the line is known to be
 * canonical (no member repeated), so its data need not be scanned for its end.
 */
export const describeLine = (
  text: string,
  bytes: number,
  e: RecordedEvent,
  out: Int32Array,
  at: number,
  hasRefs: boolean,
  canonical: boolean
): boolean => {
  const type = TYPES.indexOf(e.type)
  const actor = ACTORS.indexOf(e.actor)
  if (type < 0 || actor < 0 || e.seq > 0x7fffffff || e.version > 0x7fffffff) return false
  // at, id and command_id are ASCII without escapes (the envelope's patterns), so chars are bytes.
  if (e.hash.length !== DIGEST_CHARS || e.prev.length !== DIGEST_CHARS) return false
  // Member by member, without building the expected text (this runs for every line).
  let p = 0
  for (const part of [P_ACTOR, e.actor, P_AT, e.at, P_COMMAND, e.command_id, P_DATA]) {
    if (!text.startsWith(part, p)) return false
    p += part.length
  }
  const dataStart = p
  let q = text.length
  for (const part of [
    '}',
    String(e.version),
    S_VERSION,
    e.type,
    S_TYPE,
    String(e.seq),
    S_SEQ,
    e.prev,
    S_PREV,
    e.id,
    S_ID,
    e.hash,
    S_HASH
  ]) {
    q -= part.length
    if (q < dataStart || !text.startsWith(part, q)) return false
  }
  // The data between them is one value: a member repeated after it (which JSON.parse would let
  // win) would leave the offsets describing another data than the line's.
  if (!canonical && valueEnd(text, dataStart) !== q) return false
  const suffixLength = text.length - q
  out[at + 2] = hasRefs ? KIND_CHECKED_REFS : KIND_CHECKED
  out[at + 3] = type
  out[at + 4] = actor
  out[at + 5] = e.version
  out[at + 6] = e.seq
  out[at + 7] = e.at.length
  out[at + 8] = e.command_id.length
  out[at + 9] = bytes - dataStart - suffixLength
  out[at + 10] = e.id.length
  return true
}

/** The data of a checked line, decoded (and upcast) when first read. */
const decodeData = (type: string, version: number, text: string): unknown => {
  const decoded = registry.decode(type, version, JSON.parse(text))
  // The worker decoded these very bytes already.
  if (E.isLeft(decoded)) throw new TypeError(`a checked line no longer decodes: ${decoded.left.message}`)
  return decoded.right
}

/** Where the members of a checked line lie in `buf` (its line starting at `start`, its ints at `m[at...]`). */
const offsetsOf = (start: number, m: Int32Array, at: number) => {
  const actor = ACTORS[m[at + 4] as number] as string
  const atStart = start + P_ACTOR.length + actor.length + P_AT.length
  const atEnd = atStart + (m[at + 7] as number)
  const cmdStart = atEnd + P_COMMAND.length
  const cmdEnd = cmdStart + (m[at + 8] as number)
  const dataStart = cmdEnd + P_DATA.length
  const dataEnd = dataStart + (m[at + 9] as number)
  const hashStart = dataEnd + S_HASH.length
  const idStart = hashStart + DIGEST_CHARS + S_ID.length
  const idEnd = idStart + (m[at + 10] as number)
  const prevStart = idEnd + S_PREV.length
  return { actor, atStart, atEnd, cmdStart, cmdEnd, dataStart, dataEnd, hashStart, idStart, idEnd, prevStart }
}

/** The data of a checked line as stored (not upcast): where its object references are looked for. */
export const storedDataOf = (buf: Buffer, start: number, m: Int32Array, at: number): unknown => {
  const o = offsetsOf(start, m, at)
  return JSON.parse(buf.toString('utf8', o.dataStart, o.dataEnd))
}

/**
 * The event of a checked line from its bytes (`buf` from `start`) and its ints at `m[at...]`. Its
 * data is parsed when first read: folds that never look at a note's text do not parse it.
 */
export const eventOfLine = (buf: Buffer, start: number, m: Int32Array, at: number): RecordedEvent => {
  const type = TYPES[m[at + 3] as number] as string
  const version = m[at + 5] as number
  const o = offsetsOf(start, m, at)
  const dataText = buf.toString('utf8', o.dataStart, o.dataEnd)
  let data: unknown
  let parsed = false
  return {
    seq: m[at + 6] as number,
    id: buf.toString('latin1', o.idStart, o.idEnd),
    type,
    version,
    at: buf.toString('latin1', o.atStart, o.atEnd),
    actor: o.actor,
    command_id: buf.toString('latin1', o.cmdStart, o.cmdEnd),
    get data() {
      if (!parsed) {
        data = decodeData(type, version, dataText)
        parsed = true
      }
      return data
    },
    prev: buf.toString('latin1', o.prevStart, o.prevStart + DIGEST_CHARS),
    hash: buf.toString('latin1', o.hashStart, o.hashStart + DIGEST_CHARS)
  } as RecordedEvent
}
