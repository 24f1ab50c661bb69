/**
 * The inner loops of the trigram filters (index-format.ts, trigramFilters) as two small WebAssembly
 * functions, assembled here from their instructions: a snapshot index build derives two filters of
 * every byte of the snapshot. `mark` sets a byte of a byte map per trigram and filter (a store, where
 * setting a bit loads, shifts and stores), eight trigrams a step with their hashes computed four at a
 * time (WebAssembly's 128-bit SIMD, which V8 has on every platform Node 20 runs on); `pack` turns
 * each map into its bit set, sixteen bytes a step. Over the 113 MiB of the AzerothCore core's
 * blobs: ~150 ms of CPU, against ~340 ms for a loop setting bits in WebAssembly and ~1 s in
 * JavaScript. The bits are those of the JavaScript loop of version 1
 * (test/adapters/trigram-filters.test.ts compares them).
 *
 * Memory: the case-folding table, both byte maps, both filters, then the blob. It grows to the
 * largest blob filtered and lives as long as the kernel.
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

// The instructions used (opcodes of the WebAssembly binary format; 0xfd starts one of 128-bit SIMD).
const get = (i: number): number[] => [0x20, i]
const set = (i: number): number[] => [0x21, i]
const tee = (i: number): number[] => [0x22, i]
const int = (v: number): number[] => [0x41, ...sleb(v)]
const load8 = (offset = 0): number[] => [0x2d, 0, ...uleb(offset)]
const store8 = (offset: number): number[] => [0x3a, 0, ...uleb(offset)]
const STORE16 = [0x3b, 1, 0]
const V128_LOAD = [0xfd, 0x00, 4, 0]
const V128_STORE = [0xfd, 0x0b, 4, 0]
const BITMASK = [0xfd, 0x64]
const I32_LOAD = [0x28, 2, 0]
const I64_LOAD = [0x29, 3, 0]
const I64_STORE8 = [0x3c, 0, 0]
const I64_SHR_U = 0x88
const [ADD, MUL, AND, SHL, SHR_U, OR, LT_U, LE_U, EQZ] = [0x6a, 0x6c, 0x71, 0x74, 0x76, 0x72, 0x49, 0x4d, 0x45]
const [BLOCK, LOOP, IF, BR_IF, BR, RETURN, END] = [0x02, 0x03, 0x04, 0x0d, 0x0c, 0x0f, 0x0b]
const v128 = (lanes: readonly number[]): number[] => [0xfd, 0x0c, ...lanes.map((b) => b & 255)]
const splat8 = (v: number): number[] => v128(Array.from({ length: 16 }, () => v))
const splat32 = (v: number): number[] => v128([0, 1, 2, 3].flatMap(() => [v, v >>> 8, v >>> 16, v >>> 24]))
/** i8x16.shuffle of two vectors by 16 lane indices (16-31: the second one's). */
const shuffle = (lanes: readonly number[]): number[] => [0xfd, 0x0d, ...lanes]
const [SUB8, LT_U8, V_AND, V_OR] = [
  [0xfd, 0x71],
  [0xfd, 0x26],
  [0xfd, 0x4e],
  [0xfd, 0x50]
]
const MUL32 = [0xfd, 0xb5, 0x01]
const SHR_U32 = [0xfd, 0xad, 0x01]
const lane32 = (k: number): number[] => [0xfd, 0x1b, k]

/** The multiplier of the trigram hash (of the filters and of a needle's trigrams, index-format.ts). */
export const HASH = 0x9e3779b1

/** The largest filter: 2 ** MAX_LOG bits (filterLog in index-format.ts never gives more). */
const MAX_LOG = 22
/**
 * The memory: the case-folding table at 0, then the byte maps of both filters (a byte per bit,
 * 2 ** MAX_LOG bytes each, all zero between calls), then the two filters as packed, then the blob.
 */
const MAP_EXACT = 1 << 16
const MAP_FOLDED = MAP_EXACT + (1 << MAX_LOG)
const FILTERS = MAP_FOLDED + (1 << MAX_LOG)

/** The lanes of 16 loaded bytes (and zeros) that make the 4 trigrams ending at bytes `first` to `first + 3`, as 24-bit numbers. */
const trigrams = (first: number): number[] => [0, 1, 2, 3].flatMap((j) => [first + j, first + j - 1, first + j - 2, 16])
/**
 * The map bytes of 4 trigrams of the 16 bytes in v128 local `from` (those ending at bytes `first`
 * to `first + 3` of it): their hashes computed 4 at a time (local 9 holds them), one store each.
 */
const mark4 = (from: number, first: number, map: number): number[] =>
  [
    [...get(from), ...splat8(0), ...shuffle(trigrams(first))],
    [...splat32(HASH), ...MUL32, ...get(2), ...SHR_U32, ...set(9)],
    [0, 1, 2, 3].flatMap((k) => [...get(9), ...lane32(k), ...int(-1), ...store8(map)])
  ].flat()
/**
 * mark(src, n, shift): for each byte trigram of the n bytes at src, the byte of the exact map at its
 * hash and the byte of the folded map at the hash of its folded bytes are set to 0xff: a store per
 * trigram and filter, where setting a bit would load, shift and store. Eight trigrams a step from
 * 16 bytes loaded at once (SIMD: the bytes folded and the hashes computed 4 at a time; it reads up
 * to 6 bytes past the blob), the last few one at a time.
 * Locals: 3 end, 4 t, 5 u (the last three bytes, as they are and folded), 6 byte; v128: 7 the
 * bytes, 8 them folded, 9 four hashes.
 */
const markCode = (): number[] =>
  [
    [...get(0), ...get(1), ADD, ...set(3)], // end = src + n
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(0), ...int(10), ADD, ...get(3), LE_U, EQZ, BR_IF, 1], // if !(src + 10 <= end): break
    [...get(0), ...V128_LOAD, ...tee(7)],
    // Folded: bytes 65-90 (A-Z) get 32 more, as the table says.
    [...get(7), ...splat8(65), ...SUB8, ...splat8(26), ...LT_U8, ...splat8(32), ...V_AND, ...V_OR, ...set(8)],
    [...mark4(7, 2, MAP_EXACT), ...mark4(7, 6, MAP_EXACT), ...mark4(8, 2, MAP_FOLDED), ...mark4(8, 6, MAP_FOLDED)],
    [...get(0), ...int(8), ADD, ...set(0), BR, 0],
    [END, END],
    [...get(0), ...int(2), ADD, ...get(3), LT_U, EQZ, IF, 0x40, RETURN, END], // if !(src + 2 < end): return
    [...get(0), ...load8(), ...int(8), SHL, ...get(0), ...load8(1), OR, ...set(4)], // t = mem[src] << 8 | mem[src + 1]
    [...get(0), ...load8(), ...load8(), ...int(8), SHL, ...get(0), ...load8(1), ...load8(), OR, ...set(5)], // u, folded
    [...get(0), ...int(2), ADD, ...set(0)], // src += 2
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(0), ...get(3), LT_U, EQZ, BR_IF, 1], // if !(src < end): break
    [...get(0), ...load8(), ...set(6)], // byte = mem[src]
    [...get(4), ...int(8), SHL, ...get(6), OR, ...int(0xffffff), AND, ...tee(4)],
    [...int(HASH | 0), MUL, ...get(2), SHR_U, ...int(-1), ...store8(MAP_EXACT)], // exact map [hash(t)] = 0xff
    [...get(5), ...int(8), SHL, ...get(6), ...load8(), OR, ...int(0xffffff), AND, ...tee(5)],
    [...int(HASH | 0), MUL, ...get(2), SHR_U, ...int(-1), ...store8(MAP_FOLDED)], // folded map [hash(u)] = 0xff
    [...get(0), ...int(1), ADD, ...set(0), BR, 0],
    [END, END, END]
  ].flat()
/**
 * pack(map, filter, bytes): the byte map at `map` as the bit set of `bytes` bytes at `filter` (bit
 * k is set when byte k of the map is: 16 map bytes a step, i8x16.bitmask), the map zeroed again.
 * Local: 3 k.
 */
const packCode = (): number[] =>
  [
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(3), ...get(2), LT_U, EQZ, BR_IF, 1], // if !(k < bytes): break
    [...get(1), ...get(3), ADD], // the address of filter bytes k and k + 1
    [...get(3), ...int(3), SHL, ...get(0), ADD, ...tee(4), ...V128_LOAD, ...BITMASK, ...STORE16],
    [...get(4), ...splat8(0), ...V128_STORE],
    [...get(3), ...int(2), ADD, ...set(3), BR, 0],
    [END, END, END]
  ].flat()
/**
 * gather(map, column, bit, rows): the byte map at `map` into one slot of a column of sliced rows:
 * byte r of the column gets `bit` where byte r of the map is set (16 rows a step); the map is zeroed
 * again. Locals: 4 k, 5 the column's address, 6 the map's; v128: 7 `bit` in every lane.
 */
const gatherCode = (): number[] =>
  [
    [...get(2), 0xfd, 0x0f, ...set(7)], // i8x16.splat
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(4), ...get(3), LT_U, EQZ, BR_IF, 1], // if !(k < rows): break
    [...get(1), ...get(4), ADD, ...tee(5), ...get(5), ...V128_LOAD],
    [...get(0), ...get(4), ADD, ...tee(6), ...V128_LOAD, ...get(7), ...V_AND, ...V_OR, ...V128_STORE],
    [...get(6), ...splat8(0), ...V128_STORE],
    [...get(4), ...int(16), ADD, ...set(4), BR, 0],
    [END, END, END]
  ].flat()
/**
 * transpose(table, count, rows, out): the rows of a class from its `count` columns (their addresses
 * at `table`, 4 bytes each): byte c of row r (at out + r * count + c) is byte r of column c; 8 rows
 * of a column a step. Locals: 4 r, 5 c, 6 where the next byte goes, 7 out + r * count; i64: 8 eight
 * bytes of a column.
 */
const transposeCode = (): number[] =>
  [
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(4), ...get(2), LT_U, EQZ, BR_IF, 1], // if !(r < rows): break
    [...get(3), ...get(4), ...get(1), MUL, ADD, ...set(7), ...int(0), ...set(5)],
    [BLOCK, 0x40, LOOP, 0x40],
    [...get(5), ...get(1), LT_U, EQZ, BR_IF, 1], // if !(c < count): break
    [...get(0), ...get(5), ...int(2), SHL, ADD, ...I32_LOAD, ...get(4), ADD, ...I64_LOAD, ...set(8)],
    [...get(7), ...get(5), ADD, ...set(6)],
    [0, 1, 2, 3, 4, 5, 6, 7].flatMap((j) => [
      ...get(6),
      ...get(8),
      ...[0x42, 8 * j], // i64.const
      I64_SHR_U,
      ...I64_STORE8,
      ...get(6),
      ...get(1),
      ADD,
      ...set(6)
    ]),
    [...get(5), ...int(1), ADD, ...set(5), BR, 0],
    [END, END],
    [...get(4), ...int(8), ADD, ...set(4), BR, 0],
    [END, END, END]
  ].flat()
const section = (id: number, bytes: readonly number[]): number[] => [id, ...uleb(bytes.length), ...bytes]
/** A function's code: its locals (groups of [count, type]: 0x7f i32, 0x7e i64, 0x7b v128) and instructions. */
const fn = (locals: readonly (readonly [number, number])[], body: readonly number[]): number[] => {
  const code = [locals.length, ...locals.flat(), ...body]
  return [...uleb(code.length), ...code]
}
/**
 * The module's bytes, assembled on first use: a process that never builds a filter (a later
 * search) does not run the assembly, which made every one-shot `vba research` ~9 ms slower when it
 * ran as the module loaded.
 */
const assemble = (): Uint8Array =>
  Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0],
    ...section(1, [2, 0x60, 3, 0x7f, 0x7f, 0x7f, 0, 0x60, 4, 0x7f, 0x7f, 0x7f, 0x7f, 0]), // (i32 x 3) -> (), (i32 x 4) -> ()
    ...section(3, [4, 0, 0, 1, 1]), // mark and pack of the first type, gather and transpose of the second
    ...section(5, [1, 0, ...uleb(FILTERS >>> 16)]), // one memory, the table and the maps to start
    // exports "f", "p", "g", "t" (the functions) and "m" (the memory)
    ...section(7, [
      5,
      ...[1, 0x66, 0, 0],
      ...[1, 0x70, 0, 1],
      ...[1, 0x67, 0, 2],
      ...[1, 0x74, 0, 3],
      ...[1, 0x6d, 2, 0]
    ]),
    ...section(10, [
      4,
      ...fn(
        [
          [4, 0x7f],
          [3, 0x7b]
        ],
        markCode()
      ),
      ...fn([[2, 0x7f]], packCode()),
      ...fn(
        [
          [3, 0x7f],
          [1, 0x7b]
        ],
        gatherCode()
      ),
      ...fn(
        [
          [4, 0x7f],
          [1, 0x7e]
        ],
        transposeCode()
      )
    ])
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

/** One instance of the module: its memory as bytes, and its functions (see above). */
export interface KernelInstance {
  /** The memory; a new view after every `reserve` that grew it. */
  readonly heap: () => Uint8Array<ArrayBuffer>
  /** Grows the memory to at least `bytes` bytes (by a quarter more at least). */
  readonly reserve: (bytes: number) => void
  readonly mark: (src: number, n: number, shift: number) => void
  readonly pack: (map: number, filter: number, bytes: number) => void
  readonly gather: (map: number, column: number, bit: number, rows: number) => void
  readonly transpose: (table: number, count: number, rows: number, out: number) => void
}

/** Where the byte maps of a filter of 2 ** log bits are ([exact, folded]); they hold zeros between calls. */
export const MAPS = [MAP_EXACT, MAP_FOLDED] as const
/** The first byte of the memory that the kernel does not use itself (packed filters go there). */
export const FREE = FILTERS
export { MAX_LOG }

/** The module compiled, once a thread first asks for an instance. */
let compiled: object | null = null

export const kernelInstance = (): KernelInstance => {
  compiled ??= new wasm.Module(assemble())
  const { exports } = new wasm.Instance(compiled)
  const memory = exports['m'] as { readonly buffer: ArrayBuffer; readonly grow: (pages: number) => number }
  let heap = new Uint8Array(memory.buffer)
  for (let b = 0; b < 256; b++) heap[b] = b >= 65 && b <= 90 ? b + 32 : b
  return {
    heap: () => heap,
    reserve: (bytes) => {
      if (bytes <= heap.length) return
      memory.grow(Math.ceil(Math.max(bytes - heap.length, heap.length / 4) / 65536))
      heap = new Uint8Array(memory.buffer)
    },
    mark: exports['f'] as KernelInstance['mark'],
    pack: exports['p'] as KernelInstance['pack'],
    gather: exports['g'] as KernelInstance['gather'],
    transpose: exports['t'] as KernelInstance['transpose']
  }
}

/** A kernel of its own memory (one per thread that filters). */
export const filterKernel = (): FilterKernel => {
  const k = kernelInstance()
  return (bytes, log, views = false) => {
    if (!(log >= 4 && log <= MAX_LOG)) throw new RangeError(`a filter of 2 ** ${log} bits`)
    const size = 1 << (log - 3)
    const src = FILTERS + 2 * size
    // mark reads up to 6 bytes past the blob.
    k.reserve(src + bytes.length + 16)
    const heap = k.heap()
    if (bytes.length >= 3) {
      heap.set(bytes, src)
      k.mark(src, bytes.length, 32 - log)
    }
    k.pack(MAP_EXACT, FILTERS, size)
    k.pack(MAP_FOLDED, FILTERS + size, size)
    return views
      ? { exact: heap.subarray(FILTERS, FILTERS + size), folded: heap.subarray(FILTERS + size, src) }
      : { exact: heap.slice(FILTERS, FILTERS + size), folded: heap.slice(FILTERS + size, src) }
  }
}
