/**
 * Inflating git objects (object-reader.ts): a loose object through zlib's inflateSync, a packed one,
 * whose size the pack states, through one native zlib handle reused for every object; neither
 * ever inflates past the size its header claims.
 */
import { constants } from 'node:buffer'

// zlib (and the streams it brings) loads on the first object inflated: a process that reads the
// snapshot index only (a later research process) never inflates anything.
let zlib: typeof import('node:zlib') | undefined
const zlibOf = (): typeof import('node:zlib') => (zlib ??= process.getBuiltinModule('node:zlib'))
/**
 * Inflates `b`, which claims to inflate to `claimed` bytes, into chunks of 16 KiB, never past that
 * size: a stream that holds more (a damaged or hostile object store: a few hundred KiB of zlib
 * inflate to gigabytes) stops with TOO_LARGE as soon as it passes it.
 */
export const inflateSync = (b: Buffer, claimed: number): Buffer =>
  zlibOf().inflateSync(b, { maxOutputLength: Math.min(Math.max(1, claimed), constants.MAX_LENGTH) })
/** zlib's error code when a stream inflates past its maxOutputLength. */
export const TOO_LARGE = 'ERR_BUFFER_TOO_LARGE'
/** Objects up to this size inflate into one buffer (a larger claim of a damaged pack allocates no more). */
const ONE_CHUNK = 64 << 20

/**
 * Compressed bytes inflated to find a loose object's header ("blob 123\0"): its first block's
 * header (a dynamic Huffman block's code tables take up to about 300 bytes) and a few literals.
 */
export const LOOSE_HEADER_INPUT = 1024

/**
 * The size a loose object's header gives, where its content starts, and what the first bytes of its
 * zlib stream inflate to (as far as they go: all of it when `start` is the whole stream); null when
 * they hold no header.
 */
export const looseHeader = (
  start: Buffer
): { readonly size: number; readonly at: number; readonly inflated: Buffer } | null => {
  const z = zlibOf()
  let inflated: Buffer
  try {
    // 1 KiB of zlib inflates to at most about 1 MiB.
    inflated = z.inflateSync(start, { finishFlush: z.constants.Z_SYNC_FLUSH })
  } catch {
    return null
  }
  const nul = inflated.indexOf(0)
  const m = /^(?:commit|tree|blob|tag) (\d{1,15})$/.exec(inflated.toString('latin1', 0, Math.max(nul, 0)))
  return nul < 0 || m === null ? null : { size: Number(m[1]), at: nul + 1, inflated }
}

/**
 * The native zlib handle of one `zlib.InflateRaw`, as Node's own inflateSync drives it (lib/zlib.js:
 * `writeSync` into an output buffer, the output and input left in `_writeState`, `onerror`
 * called during the write): one handle reset after every object, instead of the stream object
 * (a Transform, its state and buffers) that inflateSync builds for every call. Raw: the zlib
 * header is checked here and the Adler-32 of the content is not computed (3% of the reading of a
 * build); every object is checked against its id, which the Adler-32 adds nothing to.
 */
interface ZlibHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number
  ): void
  reset(): void
  close(): void
  onerror: (message: string, errno: number, code?: string) => void
}
/** The reused handle and its write state (bytes of output space left, of input left). */
interface Inflater {
  readonly handle: ZlibHandle
  readonly state: Uint32Array
  /** The stream that owns the handle, kept as long as the handle is used. */
  readonly stream: object
}
/** The handle in use; null when this Node's zlib streams look otherwise (inflateSync is used). */
let inflater: Inflater | null | undefined
/** The zlib code of the error the last write reported (Z_DATA_ERROR, Z_BUF_ERROR...), or null. */
let inflateError: string | null = null

const newInflater = (): Inflater | null => {
  const z = zlibOf()
  const stream = new z.InflateRaw() as unknown as { _handle?: Partial<ZlibHandle>; _writeState?: unknown }
  const handle = stream._handle
  const state = stream._writeState
  if (
    typeof handle?.writeSync !== 'function' ||
    typeof handle.reset !== 'function' ||
    typeof handle.close !== 'function' ||
    !(state instanceof Uint32Array) ||
    state.length < 2
  )
    return null
  handle.onerror = (message, errno) => {
    inflateError = (z as unknown as { codes: Record<number, string | undefined> }).codes[errno] ?? message
  }
  return { handle: handle as ZlibHandle, state, stream }
}

/** Whether `b` starts with the header of a zlib stream of deflate data and no preset dictionary (RFC 1950), as zlib checks it. */
const zlibHeader = (b: Uint8Array): boolean => {
  const cmf = b[0] ?? 0
  const flg = b[1] ?? 0
  return b.length >= 2 && (cmf & 0x0f) === 8 && cmf >>> 4 <= 7 && (cmf * 256 + flg) % 31 === 0 && (flg & 0x20) === 0
}

/**
 * Inflates the zlib stream `b` of an object of `expected` bytes into a buffer of its own: into one
 * buffer of that size and one byte more from `alloc` (so a stream that inflates to more is seen at once) through
 * the reused handle; a size over ONE_CHUNK, or a Node whose handle looks otherwise, through
 * inflateSync. Throws an error with zlib's code when the stream is damaged or ends early.
 */
export const inflateKnown = (b: Buffer, expected: number, alloc: (n: number) => Buffer): Buffer => {
  if (inflater === undefined) inflater = newInflater()
  const current = inflater
  if (current === null || expected >= ONE_CHUNK) return inflateSync(b, expected)
  const { handle, state } = current
  if (!zlibHeader(b)) throw Object.assign(new Error('Z_DATA_ERROR'), { code: 'Z_DATA_ERROR' })
  const out = alloc(expected + 1)
  inflateError = null
  handle.writeSync(zlibOf().constants.Z_FINISH, b, 2, b.length - 2, out, 0, out.length)
  const error = inflateError as string | null
  if (error !== null) {
    // A handle that saw an error is not reused.
    handle.close()
    inflater = undefined
    throw Object.assign(new Error(error), { code: error })
  }
  const produced = out.length - (state[0] ?? 0)
  handle.reset()
  // The byte past the claim is there: the stream holds more (it was stopped there).
  if (produced > expected) throw Object.assign(new Error(TOO_LARGE), { code: TOO_LARGE })
  return out.subarray(0, produced)
}
