/**
 * The inner loop of the trigram filters (index-format.ts, trigramFilters) as a small WebAssembly
 * function, assembled here from its instructions: a snapshot index build derives two filters of
 * every byte of the snapshot, and V8 runs this loop about twice as fast in WebAssembly as in
 * JavaScript (no bounds checks or deoptimisation guards per byte). It computes the same bits as the
 * JavaScript it replaced (test/adapters/trigram-filters.test.ts compares it with that loop).
 *
 * Memory: bytes 0-255 hold the case-folding table; the caller places the two filters and the blob
 * after it. The memory grows to the largest blob filtered and lives as long as the kernel.
 */

/** Unsigned and signed LEB128, as WebAssembly encodes integers. */
const uleb = (v: number): number[] => {
  const out: number[] = []
  do {
    const b = v & 0x7f
    v >>>= 7
    out.push(v === 0 ? b : b | 0x80)
  } while (v !== 0)
  return out
}
const sleb = (v: number): number[] => {
  const out: number[] = []
  for (;;) {
    const b = v & 0x7f
    v >>= 7
    if ((v === 0 && (b & 0x40) === 0) || (v === -1 && (b & 0x40) !== 0)) return [...out, b]
    out.push(b | 0x80)
  }
}

// The instructions used (opcodes of the WebAssembly 1.0 binary format).
const get = (i: number): number[] => [0x20, i]
const set = (i: number): number[] => [0x21, i]
const tee = (i: number): number[] => [0x22, i]
const int = (v: number): number[] => [0x41, ...sleb(v)]
const load8 = (offset = 0): number[] => [0x2d, 0, ...uleb(offset)]
const STORE8 = [0x3a, 0, 0]
const [ADD, MUL, AND, OR, SHL, SHR_U, GE_U] = [0x6a, 0x6c, 0x71, 0x72, 0x74, 0x76, 0x4f]

/** The multiplier of the trigram hash (of the filters and of a needle's trigrams, index-format.ts). */
export const HASH = 0x9e3779b1

// f(src, n, exact, folded, shift): parameters 0-4; locals 5 i, 6 end, 7 t, 8 u, 9 byte, 10 hash, 11 address.
/** Sets bit `hash` (local 10) of the filter at the address in local `filter`: mem[a] |= 1 << (hash & 7). */
const setBit = (filter: number): number[] =>
  [
    [...get(filter), ...get(10), ...int(3), SHR_U, ADD, ...tee(11)],
    [...get(11), ...load8(), ...int(1), ...get(10), ...int(7), AND, SHL, OR, ...STORE8]
  ].flat()
/** The next trigram into `local` (its last two bytes, then `byte`'s value) and its hash into local 10. */
const hashInto = (local: number, byte: number[]): number[] =>
  [
    [...get(local), ...int(8), SHL, ...byte, OR, ...int(0xffffff), AND, ...tee(local)],
    [...int(HASH | 0), MUL, ...get(4), SHR_U, ...set(10)]
  ].flat()
const body = [
  [...get(0), ...load8(), ...set(9)], // byte = mem[src]
  [...get(9), ...int(8), SHL, ...get(0), ...load8(1), OR, ...set(7)], // t = byte << 8 | mem[src + 1]
  [...get(9), ...load8(), ...int(8), SHL, ...get(0), ...load8(1), ...load8(), OR, ...set(8)], // u, of the folded bytes
  [...get(0), ...int(2), ADD, ...set(5)], // i = src + 2
  [...get(0), ...get(1), ADD, ...set(6)], // end = src + n
  [0x02, 0x40, 0x03, 0x40], // block, loop
  [...get(5), ...get(6), GE_U, 0x0d, 1], // if i >= end: break
  [...get(5), ...load8(), ...set(9)], // byte = mem[i]
  [...hashInto(7, get(9)), ...setBit(2)], // the exact filter
  [...hashInto(8, [...get(9), ...load8()]), ...setBit(3)], // the folded one
  [...get(5), ...int(1), ADD, ...set(5), 0x0c, 0], // i++, continue
  [0x0b, 0x0b, 0x0b] // end of loop, block and function
].flat()
const section = (id: number, bytes: readonly number[]): number[] => [id, ...uleb(bytes.length), ...bytes]
const code = [1, 7, 0x7f, ...body]
const MODULE = Uint8Array.from([
  ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
  ...section(1, [1, 0x60, 5, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0]), // type: (i32 x 5) -> ()
  ...section(3, [1, 0]), // one function of that type
  ...section(5, [1, 0, 1]), // one memory, one page to start
  ...section(7, [2, 1, 0x66, 0, 0, 1, 0x6d, 2, 0]), // exports "f" (the function) and "m" (the memory)
  ...section(10, [1, ...uleb(code.length), ...code])
])

/** The part of the WebAssembly API used here (the project's TypeScript libraries do not declare it). */
const wasm = (
  globalThis as unknown as {
    readonly WebAssembly: {
      readonly Module: new (bytes: Uint8Array) => object
      readonly Instance: new (module: object) => { readonly exports: Record<string, unknown> }
    }
  }
).WebAssembly

/**
 * Both filters of `bytes`, `2 ** log` bits each (see trigramFilters): copies, or with `views` set,
 * views of the kernel's memory that the next call overwrites (a caller that writes them out at once
 * need not copy them).
 */
export type FilterKernel = (
  bytes: Uint8Array,
  log: number,
  views?: boolean
) => { readonly exact: Uint8Array<ArrayBuffer>; readonly folded: Uint8Array<ArrayBuffer> }

/** A kernel of its own memory (one per thread that filters). */
export const filterKernel = (): FilterKernel => {
  const { exports } = new wasm.Instance(new wasm.Module(MODULE))
  const memory = exports['m'] as { readonly buffer: ArrayBuffer; readonly grow: (pages: number) => number }
  const run = exports['f'] as (src: number, n: number, exact: number, folded: number, shift: number) => void
  let heap = new Uint8Array(memory.buffer)
  for (let b = 0; b < 256; b++) heap[b] = b >= 65 && b <= 90 ? b + 32 : b
  return (bytes, log, views = false) => {
    const size = 1 << (log - 3)
    const src = 256 + 2 * size
    if (src + bytes.length > heap.length) {
      memory.grow(Math.ceil((src + bytes.length - heap.length) / 65536))
      heap = new Uint8Array(memory.buffer)
    }
    heap.fill(0, 256, src)
    if (bytes.length >= 3) {
      heap.set(bytes, src)
      run(src, bytes.length, 256, 256 + size, 32 - log)
    }
    return views
      ? { exact: heap.subarray(256, 256 + size), folded: heap.subarray(256 + size, src) }
      : { exact: heap.slice(256, 256 + size), folded: heap.slice(256 + size, src) }
  }
}
