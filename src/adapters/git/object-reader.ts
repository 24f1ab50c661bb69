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
import { bufferPool, type BufferPool } from './buffer-pool.js'
import { inflateKnown, inflateSync, LOOSE_HEADER_INPUT, looseHeader, TOO_LARGE } from './inflate.js'
import { applyDelta } from './delta.js'
import { ObjectStoreError, endOf, fdOf, findInPack, loadPacks, readAt, type Pack } from './pack-file.js'

export { ObjectStoreError }

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

export interface GitObject {
  readonly type: ObjectType
  readonly content: Buffer
}

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' }
const OFS_DELTA = 6
const REF_DELTA = 7
const inflate = (b: Buffer, expected: number, alloc: (n: number) => Buffer): Buffer => {
  let out: Buffer
  try {
    out = inflateKnown(b, expected, alloc)
  } catch (e) {
    const code = (e as { code?: string }).code
    throw new ObjectStoreError(
      'OBJECT_CORRUPT',
      code === TOO_LARGE
        ? 'an object inflates past the size it claims'
        : `an object does not inflate (${code ?? 'zlib error'})`
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
   * checks it (`mismatch`) before any of it is used, e.g. on another thread. Its bytes are valid
   * until the next call of `read` or `readUnchecked` only (their buffer is then reused): a caller
   * copies what it keeps.
   */
  readonly readUnchecked: (oid: string) => GitObject | null
  /**
   * Tells the reader the objects about to be read (each once, in any order): from then on it keeps
   * a resolved pack object only while one of them, or a delta on the way to one, still needs it.
   */
  readonly plan: (oids: readonly string[]) => void
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
  const pool = bufferPool()
  const store: Store = {
    objects,
    packs: loadPacks(path.join(objects, 'pack')),
    cache: objectCache(options.cacheBytes ?? 64 << 20, pool),
    pool,
    uses: new Map()
  }
  // The object readUnchecked handed out last: its buffer is released on the next call.
  let lent: GitObject | null = null
  /** The object, held once for the caller. */
  const readHeld = (oid: string): GitObject | null => {
    if (lent !== null) pool.release(lent.content)
    lent = null
    if (!/^[0-9a-f]{40}$/.test(oid)) return null
    try {
      return readRaw(store, Buffer.from(oid, 'hex'))
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
      const o = readHeld(oid)
      // Handed out to be kept: its buffer is never reused.
      if (o !== null) pool.escape(o.content)
      const wrong = o === null ? null : mismatch(oid, o)
      if (wrong !== null) throw wrong
      return o
    },
    readUnchecked: (oid) => {
      lent = readHeld(oid)
      return lent
    },
    plan: (oids) => planUses(store, oids),
    close: () => {
      for (const p of store.packs) {
        if (p.fd !== null) fs.closeSync(p.fd)
        p.fd = null
      }
      store.cache.clear()
      pool.clear()
    }
  }
}

/** An open object store: its loose objects' directory, its packs, and the resolved pack objects kept. */
interface Store {
  readonly objects: string
  readonly packs: readonly Pack[]
  readonly cache: ObjectCache
  /** The buffers of objects, deltas and delta results (buffer-pool.ts). */
  readonly pool: BufferPool
  /**
   * For the pack objects of a plan (by "pack number:offset"): how many more times each is needed
   * (read itself, or as the base of a delta yet to be resolved). A planned object is kept while
   * it has uses left; an object of no plan is kept as any other (least recently used).
   */
  readonly uses: Map<string, number>
}
/** Resolved pack objects by "pack number:offset", least recently used first, within a budget of bytes. */
type ObjectCache = ByteCache<GitObject>

/** The cache holds each object it keeps once, counted at its buffer's capacity. */
const objectCache = (budget: number, pool: BufferPool): ObjectCache =>
  byteCache(
    budget,
    (o: GitObject) => pool.sizeOf(o.content),
    (o) => pool.release(o.content)
  )

/**
 * The object with raw id `oid` from the first pack that has it, else loose; null when the store has
 * not got it. The caller holds its buffer once (store.pool) and releases it when done.
 */
const readRaw = (store: Store, oid: Buffer): GitObject | null => {
  const at = locate(store, oid)
  return at === null ? readLoose(store.objects, oid.toString('hex')) : readPacked(store, at[0], at[1])
}

/** The longest delta chain read (git writes at most 4,095 links). */
const MAX_CHAIN = 10_000

/** A delta on the way from the object asked for to its chain's base: where it is, its uses, its zlib stream (a copy) and the size it claims. */
interface ChainLink {
  readonly key: string
  readonly planned: number | undefined
  /** A view of the read buffer until the next read, then a copy from the pool. */
  stream: Buffer
  copied: boolean
  readonly size: number
}

/**
 * The object at `offset` of pack `pi`, its delta chain resolved, held once for the caller. The
 * chain is walked down to its base first (a resolved object kept in the cache, a whole object, or
 * a loose base), keeping only each delta's compressed bytes, then resolved up from the base one
 * delta at a time: no recursion (a chain of git's 4,095 links overflowed the stack), a chain that
 * comes back to one of its own objects is refused, and at most one delta is inflated at a time (a
 * damaged or hostile pack's cycle of two deltas of a few MiB of zeros each held a delta per link
 * until the stack overflowed: gigabytes).
 */
const readPacked = (store: Store, pi: number, offset: number): GitObject => {
  const { pool, uses } = store
  const chain: ChainLink[] = []
  // The REF_DELTA bases walked to: an OFS_DELTA's base lies before it, so a chain that loops
  // follows a REF_DELTA to an object twice.
  let refs: Set<string> | undefined
  let base: GitObject | undefined
  while (base === undefined) {
    const key = `${pi}:${offset}`
    const planned = uses.get(key)
    if (planned !== undefined) {
      // One use of a planned object: the last one drops it.
      if (planned <= 1) uses.delete(key)
      else uses.set(key, planned - 1)
    }
    const hit = store.cache.get(key)
    if (hit !== undefined) {
      pool.hold(hit.content)
      if (planned !== undefined && planned <= 1) store.cache.forget(key)
      base = hit
      break
    }
    const p = store.packs[pi] as Pack
    const end = endOf(p, offset)
    if (offset < 12 || end <= offset || end > p.size)
      throw new ObjectStoreError('OBJECT_CORRUPT', 'an object offset lies outside its pack')
    // The read buffer is reused by this read: the delta read before is copied (a base the cache
    // holds, the usual one in a planned build, needs no read and no copy).
    const above = chain[chain.length - 1]
    if (above !== undefined && !above.copied) {
      const copy = pool.alloc(above.stream.length)
      copy.set(above.stream)
      above.stream = copy
      above.copied = true
    }
    const raw = readAt(fdOf(p), end - offset, offset)
    let i = 0
    let c = raw[i++] ?? 0
    const type = (c >> 4) & 7
    let size = c & 15
    // Powers of two by multiplication: `2 ** shift` is a call of V8's pow.
    let scale = 16
    while (c & 0x80) {
      c = raw[i++] ?? 0
      size += (c & 0x7f) * scale
      scale *= 128
    }
    if ((type === OFS_DELTA || type === REF_DELTA) && chain.length >= MAX_CHAIN)
      throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta chain does not end')
    if (type === OFS_DELTA) {
      c = raw[i++] ?? 0
      let back = c & 0x7f
      while (c & 0x80) {
        c = raw[i++] ?? 0
        back = (back + 1) * 128 + (c & 0x7f)
      }
      if (back === 0) throw loops()
      chain.push({ key, planned, stream: raw.subarray(i), copied: false, size })
      offset -= back
    } else if (type === REF_DELTA) {
      const baseId = Buffer.from(raw.subarray(i, i + 20))
      chain.push({ key, planned, stream: raw.subarray(i + 20), copied: false, size })
      const at = locate(store, baseId)
      if (at !== null) {
        const to = `${at[0]}:${at[1]}`
        refs ??= new Set()
        if (refs.has(to)) throw loops()
        refs.add(to)
        ;[pi, offset] = at
      } else {
        const loose = readLoose(store.objects, baseId.toString('hex'))
        if (loose === null)
          throw new ObjectStoreError('OBJECT_CORRUPT', `the delta base ${baseId.toString('hex')} is missing`)
        base = loose
      }
    } else {
      const t = TYPES[type]
      if (t === undefined) throw new ObjectStoreError('OBJECT_CORRUPT', `an object has the unknown type ${type}`)
      base = keep(store, key, planned, { type: t, content: inflate(raw.subarray(i), size, pool.alloc) })
    }
  }
  for (let k = chain.length - 1; k >= 0; k--) {
    const link = chain[k] as ChainLink
    const delta = inflate(link.stream, link.size, pool.alloc)
    if (link.copied) pool.release(link.stream)
    const result = { type: base.type, content: applyDelta(base.content, delta, pool.alloc) }
    pool.release(delta)
    pool.release(base.content)
    base = keep(store, link.key, link.planned, result)
  }
  return base
}

const loops = (): ObjectStoreError =>
  new ObjectStoreError('OBJECT_CORRUPT', 'a delta chain comes back to one of its objects')

/** `o`, resolved at `key`, kept in the cache unless its plan has no use of it left. */
const keep = (store: Store, key: string, planned: number | undefined, o: GitObject): GitObject => {
  if ((planned === undefined || planned > 1) && store.cache.remember(key, o)) store.pool.hold(o.content)
  return o
}

/** A loose object of `objects` as git stores it (zlib of "type size\0" + content); null when there is none. */
const readLoose = (objects: string, hex: string): GitObject | null => {
  let file: Buffer
  try {
    file = fs.readFileSync(path.join(objects, hex.slice(0, 2), hex.slice(2)))
  } catch {
    return null
  }
  // The header first (from the stream's first bytes), then the whole object, never past the size
  // the header gives it.
  const bad = (): ObjectStoreError => new ObjectStoreError('OBJECT_CORRUPT', `the loose object ${hex} has a bad header`)
  const header = looseHeader(file.subarray(0, LOOSE_HEADER_INPUT))
  if (header === null) throw bad()
  let all: Buffer
  try {
    // A small object's stream was inflated whole already.
    all = file.length <= LOOSE_HEADER_INPUT ? header.inflated : inflateSync(file, header.at + header.size)
  } catch (e) {
    throw new ObjectStoreError(
      'OBJECT_CORRUPT',
      (e as { code?: string }).code === TOO_LARGE
        ? `the loose object ${hex} inflates past the size its header gives`
        : `the loose object ${hex} does not inflate`
    )
  }
  const nul = all.indexOf(0)
  const m = /^(commit|tree|blob|tag) (\d+)$/.exec(all.toString('latin1', 0, Math.max(nul, 0)))
  if (nul < 0 || m === null || Number(m[2]) !== all.length - nul - 1) throw bad()
  return { type: m[1] as ObjectType, content: all.subarray(nul + 1) }
}

/** Where the pack object of raw id `oid` is: [pack number, offset], or null (loose, or not in the store). */
const locate = (store: Store, oid: Buffer): readonly [number, number] | null => {
  for (let pi = 0; pi < store.packs.length; pi++) {
    const p = store.packs[pi] as Pack
    const at = findInPack(p, oid)
    if (at >= 0) return [pi, p.offsets[at] ?? 0]
  }
  return null
}

/** The delta base of the pack object at `offset` of pack `pi` ([pack number, offset]), or null (a whole object, a loose base, or a header that does not parse: reading it reports that). */
const baseOf = (store: Store, pi: number, offset: number): readonly [number, number] | null => {
  const p = store.packs[pi] as Pack
  const end = endOf(p, offset)
  if (end <= offset || end > p.size) return null
  const raw = readAt(fdOf(p), Math.min(end - offset, 48), offset)
  let i = 0
  let c = raw[i++] ?? 0
  const type = (c >> 4) & 7
  while (c & 0x80 && i < raw.length) c = raw[i++] ?? 0
  if (type === OFS_DELTA) {
    c = raw[i++] ?? 0
    let back = c & 0x7f
    while (c & 0x80 && i < raw.length) {
      c = raw[i++] ?? 0
      back = (back + 1) * 128 + (c & 0x7f)
    }
    return back > 0 && back <= offset ? [pi, offset - back] : null
  }
  if (type === REF_DELTA && i + 20 <= raw.length) return locate(store, Buffer.from(raw.subarray(i, i + 20)))
  return null
}

/** Counts the uses of every pack object that reading `oids` resolves (store.uses). */
const planUses = (store: Store, oids: readonly string[]): void => {
  const seen = new Set<string>()
  const use = (key: string): void => {
    store.uses.set(key, (store.uses.get(key) ?? 0) + 1)
  }
  for (const oid of oids) {
    if (!/^[0-9a-f]{40}$/.test(oid)) continue
    let at = locate(store, Buffer.from(oid, 'hex'))
    if (at !== null) use(`${at[0]}:${at[1]}`)
    // Each object of a chain resolved for the first time is one use of its base.
    while (at !== null) {
      const key = `${at[0]}:${at[1]}`
      if (seen.has(key)) break
      seen.add(key)
      at = baseOf(store, at[0], at[1])
      if (at !== null) use(`${at[0]}:${at[1]}`)
    }
  }
}
