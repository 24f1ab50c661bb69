/** Git's delta format: a pack object stored as the instructions that rebuild it from its base (object-reader.ts). */
import { constants } from 'node:buffer'
import { ObjectStoreError } from './pack-file.js'

/** The largest buffer (a module-level constant: no property load in applyDelta). */
const MAX_LENGTH = constants.MAX_LENGTH

/** The object `delta` rebuilds from `base`, in a buffer from `alloc`; OBJECT_CORRUPT when the delta does not fit the base or itself. */
export const applyDelta = (base: Buffer, delta: Buffer, alloc: (n: number) => Buffer): Buffer => {
  // Lengths and the position in locals: a closure over `i` (the varint reader it was) put it in a
  // context object, and every instruction loaded `delta.length` again.
  const end = delta.length
  const baseLength = base.length
  // Copies are set from plain Uint8Array views: a Buffer's subarray looks up its constructor and
  // Symbol.species through V8's generic property loads.
  const { buffer, byteOffset } = base
  let i = 0
  // The sizes in two variables: destructuring an array goes through the iterator protocol, whose
  // property loads made V8 throw the optimized code away when they had no type feedback yet.
  let sourceSize = -1
  let targetSize = 0
  for (let k = 0; k < 2; k++) {
    let v = 0
    // Powers of two by multiplication: `2 ** shift` is a call of V8's pow.
    let scale = 1
    let c: number
    do {
      c = delta[i++] ?? 0
      v += (c & 0x7f) * scale
      scale *= 128
    } while (c & 0x80 && i < end)
    if (k === 0) sourceSize = v
    else targetSize = v
  }
  if (sourceSize !== baseLength) throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta does not fit its base')
  if (targetSize > MAX_LENGTH)
    throw new ObjectStoreError('OBJECT_CORRUPT', `a delta claims ${targetSize} bytes, more than a buffer holds`)
  const out = alloc(targetSize)
  let o = 0
  while (i < end) {
    const cmd = delta[i++] ?? 0
    if (cmd & 0x80) {
      let off = 0
      let size = 0
      if (cmd & 0x01) off |= delta[i++] ?? 0
      if (cmd & 0x02) off |= (delta[i++] ?? 0) << 8
      if (cmd & 0x04) off |= (delta[i++] ?? 0) << 16
      if (cmd & 0x08) off += (delta[i++] ?? 0) * 0x1000000
      if (cmd & 0x10) size |= delta[i++] ?? 0
      if (cmd & 0x20) size |= (delta[i++] ?? 0) << 8
      if (cmd & 0x40) size |= (delta[i++] ?? 0) << 16
      if (size === 0) size = 0x10000
      if (off + size > baseLength || o + size > targetSize)
        throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta copies outside its base')
      if (size < 16) for (let k = 0; k < size; k++) out[o + k] = base[off + k] ?? 0
      else out.set(new Uint8Array(buffer, byteOffset + off, size), o)
      o += size
    } else if (cmd !== 0) {
      if (i + cmd > end || o + cmd > targetSize)
        throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta inserts past its end')
      for (let k = 0; k < cmd; k++) out[o + k] = delta[i + k] ?? 0
      i += cmd
      o += cmd
    } else throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta holds a reserved instruction')
  }
  if (o !== targetSize) throw new ObjectStoreError('OBJECT_CORRUPT', 'a delta ends short of its target size')
  return out
}
