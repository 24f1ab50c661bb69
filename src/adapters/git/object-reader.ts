/**
 * A small reader of a git object store (loose objects and version-2 pack indexes), beside
 * isomorphic-git: isomorphic-git loads a whole pack file into memory (and checks its SHA-1) before
 * it reads one object of it, which costs the size of the pack in memory and time in every new
 * process. This reader looks an object up in the pack's index, reads only that object's bytes with
 * a positioned read, inflates them with native zlib and applies deltas, keeping resolved delta bases
 * in a cache of bounded size. Every object it returns is checked against its id (SHA-1 of
 * "type size\0" + content), so a damaged pack can never hand out wrong bytes.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { byteCache, type ByteCache } from './byte-cache.js'
import { inflateKnown, inflateSync } from './inflate.js'

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

export interface GitObject {
  readonly type: ObjectType
  readonly content: Buffer
}

/** A damaged or unsupported object store; `code` names what was wrong. */
export class ObjectStoreError extends Error {
  constructor(
    readonly code: 'OBJECT_CORRUPT' | 'PACK_UNSUPPORTED' | 'READ_ERROR',
    message: string
  ) {
    super(message)
  }
}

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' }
const OFS_DELTA = 6
const REF_DELTA = 7

interface Pack {
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
const fdOf = (p: Pack): number => (p.fd ??= fs.openSync(p.file, 'r'))

// One read buffer for all packed objects (their compressed bytes are inflated before the next read).
let scratch = Buffer.allocUnsafe(1 << 16)
const readAt = (fd: number, length: number, position: number): Buffer => {
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
  const size = fs.statSync(packFile).size
  return {
    file: packFile,
    fd: null,
    size,
    count,
    fanout,
    ids: idx.subarray(idsAt, idsAt + count * 20),
    offsets,
    sorted: Float64Array.from(offsets).sort()
  }
}

/** Position of `oid` (20 raw bytes) in the pack's sorted id table, or -1. */
const findInPack = (p: Pack, oid: Buffer): number => {
  const first = oid[0] ?? 0
  let lo = first === 0 ? 0 : (p.fanout[first - 1] ?? 0)
  let hi = (p.fanout[first] ?? 0) - 1
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1
    const c = p.ids.compare(oid, 0, 20, mid * 20, mid * 20 + 20)
    if (c === 0) return mid
    if (c < 0) lo = mid + 1
    else hi = mid - 1
  }
  return -1
}

/** The offset after `offset` in the pack (where this object's bytes end). */
const endOf = (p: Pack, offset: number): number => {
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

const applyDelta = (base: Buffer, delta: Buffer): Buffer => {
  let i = 0
  const varint = (): number => {
    let v = 0
    let shift = 0
    let c: number
    do {
      c = delta[i++] ?? 0
      v += (c & 0x7f) * 2 ** shift
      shift += 7
    } while (c & 0x80 && i < delta.length)
    return v
  }
  const sourceSize = varint()
  const targetSize = varint()
  if (sourceSize !== base.length) throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta does not fit its base')
  const out = Buffer.allocUnsafe(targetSize)
  let o = 0
  while (i < delta.length) {
    const cmd = delta[i++] ?? 0
    if (cmd & 0x80) {
      let off = 0
      let size = 0
      if (cmd & 0x01) off |= delta[i++] ?? 0
      if (cmd & 0x02) off |= (delta[i++] ?? 0) << 8
      if (cmd & 0x04) off |= (delta[i++] ?? 0) << 16
      if (cmd & 0x08) off += (delta[i++] ?? 0) * 2 ** 24
      if (cmd & 0x10) size |= delta[i++] ?? 0
      if (cmd & 0x20) size |= (delta[i++] ?? 0) << 8
      if (cmd & 0x40) size |= (delta[i++] ?? 0) << 16
      if (size === 0) size = 0x10000
      if (off + size > base.length || o + size > targetSize)
        throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta copies outside its base')
      if (size < 32) for (let k = 0; k < size; k++) out[o + k] = base[off + k] ?? 0
      else out.set(base.subarray(off, off + size), o)
      o += size
    } else if (cmd !== 0) {
      if (i + cmd > delta.length || o + cmd > targetSize)
        throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta inserts past its end')
      for (let k = 0; k < cmd; k++) out[o + k] = delta[i + k] ?? 0
      i += cmd
      o += cmd
    } else throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta holds a reserved instruction')
  }
  if (o !== targetSize) throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta ends short of its target size')
  return out
}

const inflate = (b: Buffer, expected: number): Buffer => {
  let out: Buffer
  try {
    out = inflateKnown(b, expected)
  } catch (e) {
    throw new ObjectStoreError(
      'OBJECT_CORRUPT',
      `an object does not inflate (${(e as { code?: string }).code ?? 'zlib error'})`
    )
  }
  if (out.length !== expected) throw new ObjectStoreError('OBJECT_CORRUPT', 'an object inflates to the wrong size')
  return out
}

export const objectId = (type: ObjectType, content: Uint8Array): string =>
  createHash('sha1').update(`${type} ${content.byteLength}\0`).update(content).digest('hex')

export interface ObjectReaderOptions {
  /** Bytes of resolved delta bases kept for reuse (default 64 MiB). */
  readonly cacheBytes?: number
}

export interface ObjectReader {
  /** The object, checked against its id; null when the store does not have it. */
  readonly read: (oid: string) => GitObject | null
  /**
   * The object NOT yet checked against its id (null when the store does not have it): the caller
   * checks it (`mismatch`) before any of it is used or kept, e.g. on another thread.
   */
  readonly readUnchecked: (oid: string) => GitObject | null
  readonly close: () => void
}

/** The error of an object whose bytes are not those of its id `oid`, or null when they are. */
export const mismatch = (oid: string, o: GitObject): ObjectStoreError | null =>
  objectId(o.type, o.content) === oid
    ? null
    : new ObjectStoreError('OBJECT_CORRUPT', `object ${oid} does not match its id`)

/** Opens the object store of `gitdir`; pack indexes are read now, packs only object by object. */
export const openObjectReader = (gitdir: string, options: ObjectReaderOptions = {}): ObjectReader => {
  const objects = path.join(gitdir, 'objects')
  const store: Store = {
    objects,
    packs: loadPacks(path.join(objects, 'pack')),
    cache: objectCache(options.cacheBytes ?? 64 << 20)
  }
  const readUnchecked = (oid: string): GitObject | null => {
    if (!/^[0-9a-f]{40}$/.test(oid)) return null
    try {
      return readRaw(store, Buffer.from(oid, 'hex'), 0)
    } catch (e) {
      if (e instanceof ObjectStoreError) throw e
      throw new ObjectStoreError(
        'READ_ERROR',
        `object ${oid} cannot be read (${(e as { code?: string }).code ?? 'read error'})`
      )
    }
  }
  return {
    read: (oid) => {
      const o = readUnchecked(oid)
      const wrong = o === null ? null : mismatch(oid, o)
      if (wrong !== null) throw wrong
      return o
    },
    readUnchecked,
    close: () => {
      for (const p of store.packs) {
        if (p.fd !== null) fs.closeSync(p.fd)
        p.fd = null
      }
      store.cache.clear()
    }
  }
}

/** An open object store: its loose objects' directory, its packs, and the resolved pack objects kept. */
interface Store {
  readonly objects: string
  readonly packs: readonly Pack[]
  readonly cache: ObjectCache
}

/** The pack indexes of `packDir` (sorted by name), each with its pack file; none when there is no such directory. */
const loadPacks = (packDir: string): Pack[] => {
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

/** Resolved pack objects by "pack number:offset", least recently used first, within a budget of bytes. */
type ObjectCache = ByteCache<GitObject>

const objectCache = (budget: number): ObjectCache => byteCache(budget, (o: GitObject) => o.content.length)

/** The object with raw id `oid` from the first pack that has it, else loose; null when the store has not got it. */
const readRaw = (store: Store, oid: Buffer, depth: number): GitObject | null => {
  for (let pi = 0; pi < store.packs.length; pi++) {
    const p = store.packs[pi] as Pack
    const at = findInPack(p, oid)
    if (at >= 0) return readPacked(store, pi, p.offsets[at] ?? 0, depth)
  }
  return readLoose(store.objects, oid.toString('hex'))
}

/** The object at `offset` of pack `pi`, its delta chain resolved (`depth` links so far). */
const readPacked = (store: Store, pi: number, offset: number, depth: number): GitObject => {
  const key = `${pi}:${offset}`
  const hit = store.cache.get(key)
  if (hit !== undefined) return hit
  if (depth > 10_000) throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta chain does not end')
  const p = store.packs[pi] as Pack
  const end = endOf(p, offset)
  if (end <= offset || end > p.size)
    throw new ObjectStoreError('OBJECT_CORRUPT', 'an object offset lies outside its pack')
  const raw = readAt(fdOf(p), end - offset, offset)
  let i = 0
  let c = raw[i++] ?? 0
  const type = (c >> 4) & 7
  let size = c & 15
  let shift = 4
  while (c & 0x80) {
    c = raw[i++] ?? 0
    size += (c & 0x7f) * 2 ** shift
    shift += 7
  }
  let result: GitObject
  if (type === OFS_DELTA) {
    c = raw[i++] ?? 0
    let back = c & 0x7f
    while (c & 0x80) {
      c = raw[i++] ?? 0
      back = (back + 1) * 128 + (c & 0x7f)
    }
    // Inflated before the base is read: the base's read reuses the read buffer.
    const delta = inflate(raw.subarray(i), size)
    const base = readPacked(store, pi, offset - back, depth + 1)
    result = { type: base.type, content: applyDelta(base.content, delta) }
  } else if (type === REF_DELTA) {
    const baseId = Buffer.from(raw.subarray(i, i + 20))
    i += 20
    const delta = inflate(raw.subarray(i), size)
    const base = readRaw(store, baseId, depth + 1)
    if (base === null)
      throw new ObjectStoreError('OBJECT_CORRUPT', `the delta base ${baseId.toString('hex')} is missing`)
    result = { type: base.type, content: applyDelta(base.content, delta) }
  } else {
    const t = TYPES[type]
    if (t === undefined) throw new ObjectStoreError('OBJECT_CORRUPT', `an object has the unknown type ${type}`)
    result = { type: t, content: inflate(raw.subarray(i), size) }
  }
  store.cache.remember(key, result)
  return result
}

/** A loose object of `objects` as git stores it (zlib of "type size\0" + content); null when there is none. */
const readLoose = (objects: string, hex: string): GitObject | null => {
  let file: Buffer
  try {
    file = fs.readFileSync(path.join(objects, hex.slice(0, 2), hex.slice(2)))
  } catch {
    return null
  }
  let all: Buffer
  try {
    all = inflateSync(file)
  } catch {
    throw new ObjectStoreError('OBJECT_CORRUPT', `the loose object ${hex} does not inflate`)
  }
  const nul = all.indexOf(0)
  const m = /^(commit|tree|blob|tag) (\d+)$/.exec(all.toString('latin1', 0, Math.max(nul, 0)))
  if (nul < 0 || m === null || Number(m[2]) !== all.length - nul - 1)
    throw new ObjectStoreError('OBJECT_CORRUPT', `the loose object ${hex} has a bad header`)
  return { type: m[1] as ObjectType, content: all.subarray(nul + 1) }
}
