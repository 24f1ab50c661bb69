/**
 * The two indexes a scan keeps one entry in per event and per command: the event ids (a writer
 * never acknowledges one twice) and the command index (where each command's events are). As a JS
 * Set of strings and a Map of span objects they were the largest per-event cost of the fold (a
 * probe into a large table of strings, and every id kept alive into the old generation) and, on a
 * log of 100,000 one-event commands, ~20 MiB of heap: more than a 48 MiB heap cap leaves beside
 * the projections. Here a key's characters go into one byte pool (identifiers are ASCII by their
 * pattern), found through an open-addressing table of 32-bit hashes; a hash that matches is
 * confirmed against the stored characters, so membership is exact. Everything is in typed arrays,
 * outside the JS heap: about 50 bytes an event id, 80 a command.
 */
import type { CommandSpan } from './scan.js'

/** As a 32-bit signed value, as every hash is stored (the empty key's hash is the basis itself). */
const FNV_BASIS = 0x811c9dc5 | 0
const FNV_PRIME = 0x01000193

/** FNV-1a over a key's UTF-16 code units (KeyTable.add computes the same as it copies). */
const hashOf = (key: string): number => {
  let h = FNV_BASIS
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), FNV_PRIME)
  return h
}

/** Spreads a hash's bits over the low ones (a slot is the low bits). */
const mix = (h: number): number => {
  let x = h ^ (h >>> 16)
  x = Math.imul(x, 0x85ebca6b)
  return x ^ (x >>> 13)
}

/** The most keys a table is sized for ahead (~300 MB of tables; more grow as they come). */
const MAX_EXPECTED = 1 << 22

/** The keys a table is sized for when `expected` are expected (at least 32; not a number: 32). */
const sizedFor = (expected: number): number => Math.max(32, Math.min(Math.floor(expected) || 0, MAX_EXPECTED))

/** Keys (strings of code units below 256) numbered in the order they were added. */
class KeyTable {
  /**
   * Slot `s` is 0 (empty) or a key's number + 1 in its low `#bits` bits (a table holds at most half
   * as many keys as it has slots, 2^#bits) and the top bits of the key's hash above them: a probe
   * past other keys reads no other array (~1 in 2^(32 - #bits) of them has the same top bits), and
   * a slot takes 4 bytes, so the table of 100,000 keys is 1 MiB (random probes into it are most of
   * an insert's cost while a log is read).
   */
  #slots: Int32Array
  /** log2 of the slots. */
  #bits: number
  /** Key `i`'s hash, to place it again when the slots grow. */
  #hashes: Int32Array
  /** Where key `i` starts in the pool; `#offsets[count]` is where the next one goes. */
  #offsets: Float64Array
  #pool: Uint8Array
  count = 0

  /** A table sized for `expected` keys of ~40 characters (it grows past them as needed). */
  constructor(expected: number) {
    const keys = sizedFor(expected)
    let slots = 64
    while (slots < 2 * keys) slots *= 2
    this.#slots = new Int32Array(slots)
    this.#bits = 31 - Math.clz32(slots)
    this.#hashes = new Int32Array(keys + 1)
    this.#offsets = new Float64Array(keys + 2)
    this.#pool = new Uint8Array(keys * 40)
  }

  /** The number of key `key` (whose hash is `h`), or -1. */
  find(key: string, h: number): number {
    const slots = this.#slots
    const bits = this.#bits
    const mask = slots.length - 1
    const top = h >>> bits
    for (let s = mix(h) & mask; ; s = (s + 1) & mask) {
      const v = slots[s] as number
      if (v === 0) return -1
      const e = (v & mask) - 1
      if (v >>> bits === top && this.#hashes[e] === h && this.#is(e, key)) return e
    }
  }

  /**
   * Adds `key` unless it is there, in one pass over its characters (hashed as they are copied to
   * the pool's end): its new number; `-2 - n` when it is key `n` already; -1 when it has a code
   * unit of 256 or more (nothing is added).
   */
  add(key: string): number {
    const e = this.count
    const at = this.#offsets[e] as number
    const n = key.length
    if (at + n > this.#pool.length) this.#pool = grown(this.#pool, at + n)
    const pool = this.#pool
    let h = FNV_BASIS
    for (let i = 0; i < n; i++) {
      const c = key.charCodeAt(i)
      if (c > 0xff) return -1
      pool[at + i] = c
      h = Math.imul(h ^ c, FNV_PRIME)
    }
    const slots = this.#slots
    const bits = this.#bits
    const mask = slots.length - 1
    const top = h >>> bits
    let s = mix(h) & mask
    for (; ; s = (s + 1) & mask) {
      const v = slots[s] as number
      if (v === 0) break
      const x = (v & mask) - 1
      if (v >>> bits === top && this.#hashes[x] === h && this.#same(x, at, n)) return -2 - x
    }
    if (e + 1 >= this.#hashes.length) {
      this.#hashes = grown(this.#hashes, e + 2)
      this.#offsets = grown(this.#offsets, e + 3)
    }
    this.#hashes[e] = h
    this.#offsets[e + 1] = at + n
    this.count = e + 1
    if (2 * this.count > slots.length) this.#rehash(slots.length * 2)
    else slots[s] = (top << bits) | (e + 1)
    return e
  }

  /** Key number `e`. */
  keyAt(e: number): string {
    return Buffer.from(this.#pool.buffer, this.#pool.byteOffset).toString(
      'latin1',
      this.#offsets[e] as number,
      this.#offsets[e + 1] as number
    )
  }

  #is(e: number, key: string): boolean {
    const start = this.#offsets[e] as number
    if ((this.#offsets[e + 1] as number) - start !== key.length) return false
    const pool = this.#pool
    for (let i = 0; i < key.length; i++) if (pool[start + i] !== key.charCodeAt(i)) return false
    return true
  }

  /** Whether key `e` is the `n` characters at `at` in the pool (past its end: a key being added). */
  #same(e: number, at: number, n: number): boolean {
    const start = this.#offsets[e] as number
    if ((this.#offsets[e + 1] as number) - start !== n) return false
    const pool = this.#pool
    for (let i = 0; i < n; i++) if (pool[start + i] !== pool[at + i]) return false
    return true
  }

  #rehash(length: number): void {
    const slots = new Int32Array(length)
    const bits = 31 - Math.clz32(length)
    const mask = length - 1
    const hashes = this.#hashes
    for (let e = 0; e < this.count; e++) {
      const h = hashes[e] as number
      let s = mix(h) & mask
      while (slots[s] !== 0) s = (s + 1) & mask
      slots[s] = ((h >>> bits) << bits) | (e + 1)
    }
    this.#slots = slots
    this.#bits = bits
  }
}

/** A typed array of at least `length` elements holding `a`'s (doubling). */
const grown = <A extends Int32Array | Float64Array | Uint8Array>(a: A, length: number): A => {
  const b = new (a.constructor as new (n: number) => A)(Math.max(length, a.length * 2))
  b.set(a)
  return b
}

/**
 * A set of event ids, kept compactly: every id's characters in one byte pool, found through a
 * table of 32-bit hashes and confirmed against the characters (so membership is exact), all in
 * typed arrays outside the JS heap. Ids are identifiers (ASCII by their pattern): adding a string
 * with a code unit of 256 or more throws a TypeError.
 * @category cases
 */
export class IdSet {
  readonly #keys: KeyTable

  /** A set sized for `expected` ids (a scan knows about how many events its log holds: no table grows while it runs). */
  constructor(expected = 0) {
    this.#keys = new KeyTable(expected)
  }

  get size(): number {
    return this.#keys.count
  }

  has(id: string): boolean {
    return this.#keys.find(id, hashOf(id)) >= 0
  }

  /** Adds `id`; false when it was there already. */
  insert(id: string): boolean {
    const e = this.#keys.add(id)
    if (e === -1) throw new TypeError(`not an identifier: ${JSON.stringify(id)}`)
    return e >= 0
  }

  add(id: string): this {
    this.insert(id)
    return this
  }

  /** The ids, in the order they were added. */
  *[Symbol.iterator](): IterableIterator<string> {
    for (let e = 0; e < this.#keys.count; e++) yield this.#keys.keyAt(e)
  }
}

/** Members of a span, per command. */
const SPAN = 4

/**
 * The command index: each command id with the span of its events, kept like {@link IdSet}'s ids
 * (command ids are identifiers too) with the spans in a typed array. `get` returns a copy: a span
 * changes through `set` or {@link CommandIndex.extend}.
 * @category cases
 */
export class CommandIndex {
  readonly #keys: KeyTable
  #spans: Float64Array

  /** An index sized for `expected` commands. */
  constructor(expected = 0) {
    this.#keys = new KeyTable(expected)
    this.#spans = new Float64Array(sizedFor(expected) * SPAN)
  }

  get size(): number {
    return this.#keys.count
  }

  /** The number of `commandId`'s entry, or -1. */
  indexOf(commandId: string): number {
    return this.#keys.find(commandId, hashOf(commandId))
  }

  has(commandId: string): boolean {
    return this.indexOf(commandId) >= 0
  }

  get(commandId: string): CommandSpan | undefined {
    const e = this.indexOf(commandId)
    if (e < 0) return undefined
    const s = this.#spans
    const at = e * SPAN
    return {
      firstSeq: s[at] as number,
      lastSeq: s[at + 1] as number,
      start: s[at + 2] as number,
      end: s[at + 3] as number
    }
  }

  /** Begins the span of a command not in the index; its entry's number, or -1 when it is there already. */
  begin(commandId: string, seq: number, start: number, end: number): number {
    const e = this.#keys.add(commandId)
    if (e === -1) throw new TypeError(`not an identifier: ${JSON.stringify(commandId)}`)
    if (e < 0) return -1
    if ((e + 1) * SPAN > this.#spans.length) this.#spans = grown(this.#spans, (e + 1) * SPAN)
    this.#write(e, seq, seq, start, end)
    return e
  }

  /** Extends entry `e`'s span to the event `seq` whose line ends at `end`. */
  extend(e: number, seq: number, end: number): void {
    this.#spans[e * SPAN + 1] = seq
    this.#spans[e * SPAN + 3] = end
  }

  set(commandId: string, span: CommandSpan): this {
    const e = this.indexOf(commandId)
    if (e < 0) {
      const added = this.begin(commandId, span.firstSeq, span.start, span.end)
      this.extend(added, span.lastSeq, span.end)
    } else this.#write(e, span.firstSeq, span.lastSeq, span.start, span.end)
    return this
  }

  /** The command ids, in the order they were added. */
  *keys(): IterableIterator<string> {
    for (let e = 0; e < this.#keys.count; e++) yield this.#keys.keyAt(e)
  }

  #write(e: number, firstSeq: number, lastSeq: number, start: number, end: number): void {
    const s = this.#spans
    const at = e * SPAN
    s[at] = firstSeq
    s[at + 1] = lastSeq
    s[at + 2] = start
    s[at + 3] = end
  }
}
