/**
 * Text out of a Buffer and bytes copied between buffers, for the per-line paths of a scan (every
 * line of a log: several strings and a copy each) without Node's checking wrappers: `toString`
 * finds the encoding's functions and `copy` checks its arguments in JavaScript before the native
 * call, and V8 compiles those wrappers again in every thread that runs them hot (the folding thread
 * and the line worker: ~50 ms of TurboFan's time in a replay of 100,000 events). The Buffer's own
 * `latin1Slice` and `utf8Slice` (Node's, not in its typings) and TypedArray#set do the work alone;
 * where a Node has no such method, `toString` does. The callers pass ranges inside the buffer. Pure.
 */

/** A Buffer's own decoders (what `toString` calls after choosing one). */
interface Slicing {
  latin1Slice(start: number, end: number): string
  utf8Slice(start: number, end: number): string
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

/** Copies the bytes `start` to `end` of `from` into `to` at `at` (TypedArray#set: no argument checks in JavaScript). */
export const copyBytes = (from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): void => {
  to.set(from.subarray(start, end), at)
}
