/**
 * How a line checked on a worker thread reaches the folding thread without its event being
 * cloned (structured cloning an event costs about what parsing it does): the line's bytes stay in
 * the piece, which is transferred back, and beside them go eleven ints per line and the envelope's
 * strings (at, id, command_id, hash, prev: ASCII by their patterns) written one after the other as
 * latin1 into one buffer per piece. A command id and a prev the line before in the piece already
 * holds (its command id, its hash) are not written again: the folding thread reuses its strings.
 * The data is parsed from the line again only when it is read: the folds that never look at a
 * note's text never parse it.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../../events/chain.js'
import { registry } from '../../events/catalog.js'

/**
 * Ints per line in a piece: start, end, kind, type, actor, version, seq, and the lengths of at,
 * id, command_id (0: the line before's) and prev (0: the line before's hash) in the strings.
 */
export const LINE_INTS = 11

/** A line the folding thread checks from its bytes. */
export const KIND_BYTES = 0
/** A line that passed its own checks, described by its ints and strings. */
export const KIND_CHECKED = 1
/** The same, and its data holds object references (walked again by whoever collects them). */
export const KIND_CHECKED_REFS = 2

const TYPES: readonly string[] = [...registry.definitions.keys()]
const TYPE_INDEX = new Map(TYPES.map((t, i) => [t, i]))
const ACTORS: readonly string[] = ['operator', 'controller', 'model', 'system']
const HASH_CHARS = 'sha256:'.length + 64

/** The envelope strings of a piece's lines, written by the worker as latin1. */
export interface PieceStrings {
  buf: Buffer
  used: number
}

/** Room for the strings of a piece (a buffer of its own: it is transferred). */
export const pieceStrings = (bytes: number): PieceStrings => ({ buf: Buffer.allocUnsafeSlow(bytes), used: 0 })

const put = (out: PieceStrings, s: string): number => {
  if (out.used + s.length > out.buf.length) {
    const bigger = Buffer.allocUnsafeSlow(Math.max(out.buf.length * 2, out.used + s.length))
    out.buf.copy(bigger, 0, 0, out.used)
    out.buf = bigger
  }
  out.used += out.buf.write(s, out.used, 'latin1')
  return s.length
}

/**
 * Describes the checked event `e` of a line into `m` at `at` (its start and end are there already)
 * and `out`; `before` is the event of the line before in the piece when that one was described too.
 * False when the event does not fit the ints (then the line travels as bytes).
 */
export const describeLine = (
  e: RecordedEvent,
  hasRefs: boolean,
  before: RecordedEvent | null,
  m: Int32Array,
  at: number,
  out: PieceStrings
): boolean => {
  const type = TYPE_INDEX.get(e.type)
  const actor = ACTORS.indexOf(e.actor)
  if (type === undefined || actor < 0 || e.seq > 0x7fffffff || e.version > 0x7fffffff) return false
  m[at + 2] = hasRefs ? KIND_CHECKED_REFS : KIND_CHECKED
  m[at + 3] = type
  m[at + 4] = actor
  m[at + 5] = e.version
  m[at + 6] = e.seq
  m[at + 7] = put(out, e.at)
  m[at + 8] = put(out, e.id)
  m[at + 9] = before !== null && before.command_id === e.command_id ? 0 : put(out, e.command_id)
  put(out, e.hash)
  m[at + 10] = before !== null && before.hash === e.prev ? 0 : put(out, e.prev)
  return true
}

/** The data of a checked line as stored (not upcast), parsed from its bytes: where its object references are looked for. */
export const storedDataOf = (buf: Buffer, start: number, end: number): unknown =>
  (JSON.parse(buf.toString('utf8', start, end - 1)) as { data: unknown }).data

/** Where the folding thread reads a piece's strings: the next one starts at `used`. */
export interface StringsCursor {
  readonly buf: Buffer
  used: number
}

const take = (c: StringsCursor, length: number): string => {
  const s = c.buf.toString('latin1', c.used, c.used + length)
  c.used += length
  return s
}

/**
 * The event of a checked line, its data parsed from the line's bytes when first read. `data` is an
 * own enumerable accessor, in the place a decoded event holds it (so spreading or serialising the
 * event reads it), defined with one shared getter: a getter in an object literal is a new closure
 * and a runtime call per event (~1 µs, more than the rest of the event).
 */
class LineEvent {
  declare readonly seq: number
  declare readonly id: string
  declare readonly type: string
  declare readonly version: number
  declare readonly at: string
  declare readonly actor: string
  declare readonly command_id: string
  declare readonly prev: string
  declare readonly hash: string
  readonly #buf: Buffer
  readonly #start: number
  readonly #end: number
  #data: unknown = undefined
  #parsed = false

  /** Members assigned in the order checkLine's events hold them (class fields would come first). */
  constructor(
    seq: number,
    id: string,
    type: string,
    version: number,
    at: string,
    actor: string,
    commandId: string,
    prev: string,
    hash: string,
    line: { readonly buf: Buffer; readonly start: number; readonly end: number }
  ) {
    this.#buf = line.buf
    this.#start = line.start
    this.#end = line.end
    this.seq = seq
    this.id = id
    this.type = type
    this.version = version
    this.at = at
    this.actor = actor
    this.command_id = commandId
    Object.defineProperty(this, 'data', LineEvent.DATA)
    this.prev = prev
    this.hash = hash
  }

  static readonly DATA: PropertyDescriptor = {
    enumerable: true,
    configurable: true,
    get(this: LineEvent): unknown {
      return this.#read()
    }
  }

  #read(): unknown {
    if (!this.#parsed) {
      const decoded = registry.decode(this.type, this.version, storedDataOf(this.#buf, this.#start, this.#end))
      // The worker decoded these very bytes already.
      if (E.isLeft(decoded)) throw new TypeError(`a checked line no longer decodes: ${decoded.left.message}`)
      this.#data = decoded.right
      this.#parsed = true
    }
    return this.#data
  }
}

/**
 * The event of a checked line (`buf` from `start` to `end`, its ints at `m[at...]`, its strings
 * next in `c`; `before` the event of the line before when it was checked too). Its data is
 * parsed from the line when first read.
 */
export const eventOfLine = (
  buf: Buffer,
  start: number,
  end: number,
  m: Int32Array,
  at: number,
  c: StringsCursor,
  before: RecordedEvent | null
): RecordedEvent => {
  const type = TYPES[m[at + 3] as number] as string
  const version = m[at + 5] as number
  const atText = take(c, m[at + 7] as number)
  const id = take(c, m[at + 8] as number)
  const cmdLength = m[at + 9] as number
  const prevLength = m[at + 10] as number
  if (before === null && (cmdLength === 0 || prevLength === 0))
    throw new TypeError('a checked line refers to a line before it that was not checked')
  const commandId = cmdLength === 0 ? (before as RecordedEvent).command_id : take(c, cmdLength)
  const hash = take(c, HASH_CHARS)
  const prev = prevLength === 0 ? (before as RecordedEvent).hash : take(c, prevLength)
  const actor = ACTORS[m[at + 4] as number] as string
  const line = { buf, start, end }
  return new LineEvent(
    m[at + 6] as number,
    id,
    type,
    version,
    atText,
    actor,
    commandId,
    prev,
    hash,
    line
  ) as unknown as RecordedEvent
}
