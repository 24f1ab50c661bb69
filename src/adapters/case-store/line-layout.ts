/**
 * How a line checked on a worker thread reaches the folding thread without its event being
 * cloned (structured cloning an event costs about what parsing it does): the line's bytes stay in
 * the piece, which is transferred back, and beside them go LINE_INTS ints per line: what the
 * envelope's integers are, and where its strings (at, id, command_id, hash, prev: ASCII by their
 * patterns) are in the piece. A time, a command id and a prev equal to the line before's (its
 * time, its command id, its hash) are marked so, and the folding thread reuses that line's strings. The folding thread
 * makes the strings from the bytes; the data is parsed from the line again only when it is read:
 * the folds that never look at a note's text never parse it.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { RecordedEvent } from '../../events/chain.js'
import { registry } from '../../events/catalog.js'
import { AT_CHARS, DIGEST_CHARS, SCAN_ACTORS } from '../../events/line-fast.js'
import { latin1Of, utf8Of } from '../../events/buffer-text.js'

/**
 * Ints per line in a piece: start, end (one past its LF), kind, type, actor, version, seq, and
 * the offsets in the piece of at (complemented, ~offset, when it is the line before's), id (and its
 * end), command_id (and its end; complemented when it is the line before's), hash, prev (-1: the
 * line before's hash), data (and its end).
 */
export const LINE_INTS = 16
export const L_START = 0
export const L_END = 1
export const L_KIND = 2
export const L_TYPE = 3
export const L_ACTOR = 4
export const L_VERSION = 5
export const L_SEQ = 6
export const L_AT = 7
export const L_ID = 8
export const L_ID_END = 9
export const L_CMD = 10
export const L_CMD_END = 11
export const L_HASH = 12
export const L_PREV = 13
export const L_DATA = 14
export const L_DATA_END = 15

/** A line the folding thread checks from its bytes. */
export const KIND_BYTES = 0
/** A line that passed its own checks, described by its ints. */
export const KIND_CHECKED = 1
/** The same, and its data holds object references (walked again by whoever collects them). */
export const KIND_CHECKED_REFS = 2

/** The event types in the order a line's ints number them. */
export const TYPES: readonly string[] = [...registry.definitions.keys()]
/**
 * What a piece's ints mean, as a worker says it when it starts: the ints per line and the event
 * types in the order they are numbered (a worker of another build would number them otherwise).
 */
export const LINE_LAYOUT = `${LINE_INTS}:${TYPES.join(',')}`

/** The number of each event type in a line's ints. */
export const TYPE_INDEX: ReadonlyMap<string, number> = new Map(TYPES.map((t, i) => [t, i]))

/**
 * The data of a checked line as stored (not upcast), parsed from its bytes (`start` to `end`, where
 * the line's ints say its data is): where its object references are looked for.
 */
export const storedDataOf = (buf: Buffer, start: number, end: number): unknown => JSON.parse(utf8Of(buf, start, end))

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
  /** Where the line's data is in `#buf`. */
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
    buf: Buffer,
    start: number,
    end: number
  ) {
    this.#buf = buf
    this.#start = start
    this.#end = end
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
      // The line's checks decoded these very bytes already.
      if (E.isLeft(decoded)) throw new TypeError(`a checked line no longer decodes: ${decoded.left.message}`)
      this.#data = decoded.right
      this.#parsed = true
    }
    return this.#data
  }
}

/**
 * The event of the checked line whose ints are at `m[at...]` in the piece `buf`; `before` is the
 * event of the line before when that one was checked too. Its data is parsed from the line when
 * first read.
 */
export const eventOfLine = (buf: Buffer, m: Int32Array, at: number, before: RecordedEvent | null): RecordedEvent => {
  const cmd = m[at + L_CMD] as number
  const prev = m[at + L_PREV] as number
  const atStart = m[at + L_AT] as number
  if (before === null && (cmd < 0 || prev < 0 || atStart < 0))
    throw new TypeError('a checked line refers to a line before it that was not checked')
  const hashStart = m[at + L_HASH] as number
  return new LineEvent(
    m[at + L_SEQ] as number,
    latin1Of(buf, m[at + L_ID] as number, m[at + L_ID_END] as number),
    TYPES[m[at + L_TYPE] as number] as string,
    m[at + L_VERSION] as number,
    atStart < 0 ? (before as RecordedEvent).at : latin1Of(buf, atStart, atStart + AT_CHARS),
    SCAN_ACTORS[m[at + L_ACTOR] as number] as string,
    cmd < 0 ? (before as RecordedEvent).command_id : latin1Of(buf, cmd, m[at + L_CMD_END] as number),
    prev < 0 ? (before as RecordedEvent).hash : latin1Of(buf, prev, prev + DIGEST_CHARS),
    latin1Of(buf, hashStart, hashStart + DIGEST_CHARS),
    buf,
    m[at + L_DATA] as number,
    m[at + L_DATA_END] as number
  ) as unknown as RecordedEvent
}
