/**
 * Digests of a piece's lines computed by the thread that hands the piece over (the folding thread
 * of a scan, while it has nothing to fold), so the line worker that checks the piece compares each
 * line's hash with a given digest instead of hashing the line itself (line-fast.ts checkScanned).
 * A given digest is used only for the very cut of the very bytes it was computed over. Pure.
 */
import { lineDigestHexCut } from './chain.js'
import { writeLatin1 } from './buffer-text.js'

/** Hex digits of a digest. */
export const HEX_DIGITS = 64

const DIGEST_CHARS = 'sha256:'.length + HEX_DIGITS
/** The hash member as lineDigest cuts it out: `,"hash":"`, a digest and its closing quote. */
const HASH_MEMBER = Uint8Array.from(',"hash":"', (c) => c.charCodeAt(0))
const HASH_MEMBER_CHARS = HASH_MEMBER.length + DIGEST_CHARS + 1
/**
 * The digests of a piece's lines, computed by another thread before the piece was handed over
 * ({@link digestLines}): per line, the offset in the piece where its hash member was cut out (-1:
 * none was found), and the 64 hex digits of the SHA-256 of the rest (HEX_DIGITS bytes a line).
 * A line is checked against its given digest only when its own hash member is at that offset.
 */
export interface GivenDigests {
  readonly cuts: Int32Array
  readonly hex: Uint8Array
}

/** Bytes a piece of `lines` lines needs for its {@link GivenDigests} (cuts first, then the hex digits). */
export const digestsBytes = (lines: number): number => lines * (4 + HEX_DIGITS)

/** The GivenDigests of `lines` lines in `buffer` (laid out by {@link digestLines}). */
export const givenDigests = (buffer: ArrayBuffer, lines: number): GivenDigests => ({
  cuts: new Int32Array(buffer, 0, lines),
  hex: new Uint8Array(buffer, 4 * lines, lines * HEX_DIGITS)
})

/**
 * The digest of every line of `piece` (whole lines, each ending with an LF, `lines` of them) without
 * its hash member, the member's last occurrence in the line as lineDigest cuts it, into a buffer
 * of its own (to be handed over with the piece).
 */
export const digestLines = (piece: Buffer, lines: number): ArrayBuffer => {
  const buffer = new ArrayBuffer(digestsBytes(lines))
  const { cuts, hex } = givenDigests(buffer, lines)
  const out = Buffer.from(hex.buffer, hex.byteOffset, hex.length)
  let s = 0
  for (let i = 0; i < lines; i++) {
    const nl = piece.indexOf(10, s)
    const cut = nl - s > HASH_MEMBER_CHARS ? piece.lastIndexOf(HASH_MEMBER, nl - HASH_MEMBER_CHARS) : -1
    if (cut >= s) {
      cuts[i] = cut
      writeLatin1(out, lineDigestHexCut(piece, s, cut, nl), i * HEX_DIGITS)
    } else cuts[i] = -1
    s = nl + 1
  }
  return buffer
}

/** Whether `a` at `p` and `b` at `q` hold the same `n` bytes. */
export const sameAcross = (a: Uint8Array, p: number, b: Uint8Array, q: number, n: number): boolean => {
  for (let i = 0; i < n; i++) if (a[p + i] !== b[q + i]) return false
  return true
}
