/**
 * The pack files of an object store (object-reader.ts): their version-2 indexes, an object's
 * position and extent in its pack, and positioned reads of its bytes.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'

/** A damaged or unsupported object store; `code` names what was wrong. */
export class ObjectStoreError extends Error {
  constructor(
    readonly code: 'OBJECT_CORRUPT' | 'PACK_UNSUPPORTED' | 'READ_ERROR',
    message: string
  ) {
    super(message)
  }
}

export interface Pack {
  readonly file: string
  fd: number | null
  readonly size: number
  readonly count: number
  readonly fanout: Uint32Array
  readonly ids: Buffer
  readonly offsets: Float64Array
  /** Offsets sorted ascending: the next larger offset ends an object's bytes. */
  readonly sorted: Float64Array
}

/** The pack's file descriptor, opened on first use. */
export const fdOf = (p: Pack): number => (p.fd ??= fs.openSync(p.file, 'r'))

// One read buffer for all packed objects (their compressed bytes are inflated before the next read).
let scratch = Buffer.allocUnsafe(1 << 16)
export const readAt = (fd: number, length: number, position: number): Buffer => {
  if (scratch.length < length) scratch = Buffer.allocUnsafe(Math.max(length, scratch.length * 2))
  const b = scratch.subarray(0, length)
  let done = 0
  while (done < length) {
    const n = fs.readSync(fd, b, done, length - done, position + done)
    if (n === 0) throw new ObjectStoreError('OBJECT_CORRUPT', 'a pack file ends early')
    done += n
  }
  return b
}

const loadPackIndex = (idxFile: string, packFile: string): Pack => {
  const idx = fs.readFileSync(idxFile)
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63)
    throw new ObjectStoreError('PACK_UNSUPPORTED', `${path.basename(idxFile)} is not a version-2 pack index`)
  if (idx.readUInt32BE(4) !== 2)
    throw new ObjectStoreError(
      'PACK_UNSUPPORTED',
      `${path.basename(idxFile)} has pack index version ${idx.readUInt32BE(4)}`
    )
  const fanout = new Uint32Array(256)
  for (let i = 0; i < 256; i++) fanout[i] = idx.readUInt32BE(8 + i * 4)
  const count = fanout[255] ?? 0
  const idsAt = 8 + 1024
  const offAt = idsAt + count * 20 + count * 4
  const bigAt = offAt + count * 4
  if (idx.length < bigAt + 40) throw new ObjectStoreError('OBJECT_CORRUPT', `${path.basename(idxFile)} is truncated`)
  const { offsets, sorted } = offsetsOf(idx, idxFile, count, offAt, bigAt)
  const size = fs.statSync(packFile).size
  return {
    file: packFile,
    fd: null,
    size,
    count,
    fanout,
    ids: idx.subarray(idsAt, idsAt + count * 20),
    offsets,
    sorted
  }
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1

/**
 * The pack's offsets (in the order of the index's ids) and the same sorted ascending. Where no
 * object lies past 2 GiB (no large offsets) and the machine is little-endian, the 32-bit table is
 * byte-swapped and sorted natively (202,460 offsets: ~3 ms); else read one by one.
 */
const offsetsOf = (
  idx: Buffer,
  idxFile: string,
  count: number,
  offAt: number,
  bigAt: number
): { readonly offsets: Float64Array; readonly sorted: Float64Array } => {
  if (LITTLE_ENDIAN) {
    const table = new Uint32Array(count)
    const bytes = Buffer.from(table.buffer)
    idx.copy(bytes, 0, offAt, offAt + 4 * count)
    bytes.swap32()
    const sorted = table.slice().sort()
    if (count === 0 || (sorted[count - 1] ?? 0) < 0x80000000)
      return { offsets: new Float64Array(table), sorted: new Float64Array(sorted) }
  }
  const offsets = new Float64Array(count)
  for (let i = 0; i < count; i++) {
    const o = idx.readUInt32BE(offAt + i * 4)
    if (o & 0x80000000) {
      const j = bigAt + (o & 0x7fffffff) * 8
      if (j + 8 > idx.length - 40)
        throw new ObjectStoreError('OBJECT_CORRUPT', `${path.basename(idxFile)} has a bad large offset`)
      offsets[i] = idx.readUInt32BE(j) * 2 ** 32 + idx.readUInt32BE(j + 4)
    } else offsets[i] = o
  }
  return { offsets, sorted: Float64Array.from(offsets).sort() }
}

/** Position of `oid` (20 raw bytes) in the pack's sorted id table, or -1. */
export const findInPack = (p: Pack, oid: Uint8Array): number => {
  const first = oid[0] ?? 0
  let lo = first === 0 ? 0 : (p.fanout[first - 1] ?? 0)
  let hi = (p.fanout[first] ?? 0) - 1
  const ids = p.ids
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    // Byte by byte in JavaScript: ids differ within their first bytes, and Buffer.compare is a native call a step.
    let c = 0
    for (let k = 0, at = mid * 20; k < 20 && c === 0; k++) c = (oid[k] ?? 0) - (ids[at + k] ?? 0)
    if (c === 0) return mid
    if (c > 0) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** The offset after `offset` in the pack (where this object's bytes end). */
export const endOf = (p: Pack, offset: number): number => {
  let lo = 0
  let hi = p.sorted.length - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const v = p.sorted[mid] ?? 0
    if (v <= offset) lo = mid + 1
    else hi = mid - 1
  }
  return lo < p.sorted.length ? (p.sorted[lo] ?? p.size - 20) : p.size - 20
}

/** The pack indexes of `packDir` (sorted by name), each with its pack file; none when there is no such directory. */
export const loadPacks = (packDir: string): Pack[] => {
  const packs: Pack[] = []
  let names: string[] = []
  try {
    names = fs.readdirSync(packDir)
  } catch {
    // no packs
  }
  for (const n of names.sort()) {
    if (!n.endsWith('.idx')) continue
    const packFile = path.join(packDir, `${n.slice(0, -4)}.pack`)
    if (!fs.existsSync(packFile)) continue
    packs.push(loadPackIndex(path.join(packDir, n), packFile))
  }
  return packs
}
