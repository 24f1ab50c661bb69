/** Git's delta format: a pack object stored as the instructions that rebuild it from its base (object-reader.ts). */
import { constants } from 'node:buffer'
import { ObjectStoreError } from './pack-file.js'

/** The object `delta` rebuilds from `base`, in a buffer from `alloc`; OBJECT_CORRUPT when the delta does not fit the base or itself. */
export const applyDelta = (base: Buffer, delta: Buffer, alloc: (n: number) => Buffer): Buffer => {
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
  if (targetSize > constants.MAX_LENGTH)
    throw new ObjectStoreError('OBJECT_CORRUPT', `a delta claims ${targetSize} bytes, more than a buffer holds`)
  const out = alloc(targetSize)
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
