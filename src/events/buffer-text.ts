/**
 * Text out of a Buffer, text into one and bytes copied between buffers, without Node's checking
 * wrappers, for the per-line paths of a scan (every line of a log: several strings and a copy each)
 * and a verify's prompt digests. `toString`, `write` and `copy` check their arguments in JavaScript
 * before the native call, and V8 compiles those wrappers again in every thread that runs them hot
 * (the folding thread and the line worker: ~50 ms of TurboFan's time in a replay of 100,000
 * events). The Buffer's own `latin1Slice`, `utf8Slice`, `latin1Write` and `utf8Write` (Node's, not
 * in its typings) and TypedArray#set do the work alone; where a Node has no such method, `toString`
 * and `write` do. The callers pass ranges inside the buffer. Pure.
 */

/** A Buffer's own decoders and encoder (what `toString` and `write` call after choosing one). */
interface Slicing {
  latin1Slice(start: number, end: number): string
  utf8Slice(start: number, end: number): string
  latin1Write(s: string, offset: number, length: number): number
  utf8Write(s: string, offset: number, length: number): number
}

const own = Buffer.prototype as unknown as Partial<Slicing>

/** The bytes `start` to `end` of `b` as Latin-1 (one character a byte). */
export const latin1Of: (b: Buffer, start: number, end: number) => string =
  typeof own.latin1Slice === 'function'
    ? (b, start, end) => (b as unknown as Slicing).latin1Slice(start, end)
    : (b, start, end) => b.toString('latin1', start, end)

/** The bytes `start` to `end` of `b` decoded as UTF-8 (invalid sequences as U+FFFD, as `toString`). */
export const utf8Of: (b: Buffer, start: number, end: number) => string =
  typeof own.utf8Slice === 'function'
    ? (b, start, end) => (b as unknown as Slicing).utf8Slice(start, end)
    : (b, start, end) => b.toString('utf8', start, end)

/** Writes `s` (characters below 256) into `b` at `at` as one byte a character (there is room for it). */
export const writeLatin1: (b: Buffer, s: string, at: number) => void =
  typeof own.latin1Write === 'function'
    ? (b, s, at) => {
        ;(b as unknown as Slicing).latin1Write(s, at, s.length)
      }
    : (b, s, at) => {
        b.write(s, at, s.length, 'latin1')
      }

/**
 * Writes `s` as UTF-8 into `b` at `at` (room for it is there) and returns the bytes written: what
 * `write` does after checking its arguments in JavaScript, which took three times the encoding over
 * a verify's ~22,000 prompt pieces.
 */
export const writeUtf8: (b: Buffer, s: string, at: number) => number =
  typeof own.utf8Write === 'function'
    ? (b, s, at) => (b as unknown as Slicing).utf8Write(s, at, b.length - at)
    : (b, s, at) => b.write(s, at, 'utf8')

/**
 * Copies the bytes `start` to `end` of `from` into `to` at `at`: TypedArray#set from a plain view
 * (a Buffer's own `subarray` is Node's JavaScript again, and makes a Buffer).
 */
export const copyBytes = (from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): void => {
  to.set(new Uint8Array(from.buffer, from.byteOffset + start, end - start), at)
}
