/**
 * Pack files written byte by byte (version 2, with their version-2 index), for objects and delta
 * chains git itself would not write: an entry is its header and its zlib stream, placed in the
 * order given, and the index names each by the id given (its real one or any other).
 */
import { createHash } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { crc32, deflateSync } from 'node:zlib'

export const OBJ_BLOB = 3
export const OBJ_OFS_DELTA = 6
export const OBJ_REF_DELTA = 7

const u32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}
const sha1 = (b: Buffer): Buffer => createHash('sha1').update(b).digest()

/** A blob's git id. */
export const blobId = (content: Buffer): string =>
  createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex')

/** A pack entry's header: its type and the size it claims. */
export const entryHeader = (type: number, size: number): Buffer => {
  const out = [(type << 4) | (size & 15)]
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    out[out.length - 1] = (out[out.length - 1] ?? 0) | 0x80
    out.push(rest % 128)
  }
  return Buffer.from(out)
}

/** An OFS_DELTA's distance back to its base, in git's encoding. */
export const ofsDistance = (back: number): Buffer => {
  const out = [back & 127]
  for (let rest = Math.floor(back / 128); rest > 0; rest = Math.floor(rest / 128)) {
    rest -= 1
    out.unshift(0x80 | (rest & 127))
  }
  return Buffer.from(out)
}

/** A delta's size varint. */
const varint = (n: number): Buffer => {
  const out: number[] = []
  do {
    out.push((n & 127) | (n >= 128 ? 128 : 0))
    n = Math.floor(n / 128)
  } while (n > 0)
  return Buffer.from(out)
}

/** The delta that rebuilds `base` + `added` from `base` (one copy of the whole base, one insert). */
export const appendDelta = (base: Buffer, added: Buffer): Buffer =>
  Buffer.concat([
    varint(base.length),
    varint(base.length + added.length),
    Buffer.from([0x80 | 0x10 | 0x20 | 0x40, base.length & 255, (base.length >> 8) & 255, (base.length >> 16) & 255]),
    Buffer.from([added.length]),
    added
  ])

export interface PackEntry {
  /** The id the index gives the entry. */
  readonly id: string
  /** Given the entry's offset in the pack: its header and zlib stream. */
  readonly bytes: (offset: number) => Buffer
}

/** A whole object's entry: a blob. */
export const blobEntry = (content: Buffer): PackEntry => ({
  id: blobId(content),
  bytes: () => Buffer.concat([entryHeader(OBJ_BLOB, content.length), deflateSync(content)])
})

/** Writes the entries, in order, as objects/pack/pack-bytes.{pack,idx} of `gitdir`; their offsets. */
export const writePack = (gitdir: string, entries: readonly PackEntry[]): number[] => {
  const offsets: number[] = []
  const bodies: Buffer[] = []
  let at = 12
  for (const e of entries) {
    const b = e.bytes(at)
    offsets.push(at)
    bodies.push(b)
    at += b.length
  }
  const body = Buffer.concat([Buffer.from('PACK'), u32(2), u32(entries.length), ...bodies])
  const order = entries.map((_, i) => i).sort((a, b) => ((entries[a]?.id ?? '') < (entries[b]?.id ?? '') ? -1 : 1))
  const counts = new Uint32Array(256)
  for (const e of entries) {
    const first = Number.parseInt(e.id.slice(0, 2), 16)
    counts[first] = (counts[first] ?? 0) + 1
  }
  // The fanout: how many ids begin with each byte or a smaller one.
  for (let b = 1; b < 256; b++) counts[b] = (counts[b] ?? 0) + (counts[b - 1] ?? 0)
  const idx = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]),
    u32(2),
    ...Array.from(counts, u32),
    ...order.map((i) => Buffer.from(entries[i]?.id ?? '', 'hex')),
    ...order.map((i) => u32(crc32(bodies[i] ?? Buffer.alloc(0)))),
    ...order.map((i) => u32(offsets[i] ?? 0)),
    sha1(body)
  ])
  const dir = path.join(gitdir, 'objects', 'pack')
  mkdirSync(dir, { recursive: true })
  writeFileSync(path.join(dir, 'pack-bytes.pack'), Buffer.concat([body, sha1(body)]))
  writeFileSync(path.join(dir, 'pack-bytes.idx'), Buffer.concat([idx, sha1(idx)]))
  return offsets
}
