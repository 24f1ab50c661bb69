/**
 * No unknown members: a record that decodes may still carry members its codec does not name
 * (`verified_by` on a conclusion, a field added to case.json), which io-ts's `t.type` ignores.
 * `unknownMember(codec, value)` walks the codec's structure beside the value and returns the path
 * of the first member it does not know, so readers refuse such records instead of carrying what
 * no rule checks. Records typed as open (`t.UnknownRecord`, `t.unknown`) stay open. Pure.
 */
import * as t from 'io-ts'

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** The props a codec names, or null when it names none (open records, primitives). */
const propsOfCodec = (codec: t.Mixed): Record<string, t.Mixed> | null => {
  if (codec instanceof t.InterfaceType || codec instanceof t.PartialType) return codec.props as Record<string, t.Mixed>
  if (codec instanceof t.ExactType || codec instanceof t.RefinementType || codec instanceof t.ReadonlyType)
    return propsOfCodec(codec.type as t.Mixed)
  if (codec instanceof t.IntersectionType) {
    const all: Record<string, t.Mixed> = {}
    for (const c of codec.types as t.Mixed[]) {
      const p = propsOfCodec(c)
      if (p === null) return null
      Object.assign(all, p)
    }
    return all
  }
  return null
}

// Codecs do not change: what is found of one is kept (every event's data is checked, on the
// replay hot path).
const propsCache = new WeakMap<t.Mixed, Record<string, t.Mixed> | null>()
const propsOf = (codec: t.Mixed): Record<string, t.Mixed> | null => {
  const known = propsCache.get(codec)
  if (known !== undefined) return known
  const found = propsOfCodec(codec)
  propsCache.set(codec, found)
  return found
}

/** Whether unknownMember has nothing to look for under `codec` (no wrapper, union, array, record or props). */
const leaves = new WeakMap<t.Mixed, boolean>()
const isLeaf = (codec: t.Mixed): boolean => {
  const known = leaves.get(codec)
  if (known !== undefined) return known
  const leaf =
    !(
      codec instanceof t.RefinementType ||
      codec instanceof t.ExactType ||
      codec instanceof t.ReadonlyType ||
      codec instanceof t.UnionType ||
      codec instanceof t.ArrayType ||
      codec instanceof t.ReadonlyArrayType ||
      codec instanceof t.DictionaryType
    ) && propsOf(codec) === null
  leaves.set(codec, leaf)
  return leaf
}

/** The path of the first member of `value` that `codec` does not name (`a.b[2].c`), or null. */
export const unknownMember = (codec: t.Mixed, value: unknown, at = ''): string | null => {
  const path = unknownPath(codec, value)
  if (path === null) return null
  let text = at
  for (let k = path.length - 1; k >= 0; k--) text += path[k]
  return text.replace(/^\./, '')
}

/**
 * {@link unknownMember}'s path as its parts (`[2]`, `.c`), the innermost first: made only for the
 * member it finds (every event and capture is checked, and they have none).
 */
const unknownPath = (codec: t.Mixed, value: unknown): string[] | null => {
  if (codec instanceof t.RefinementType || codec instanceof t.ExactType || codec instanceof t.ReadonlyType)
    return unknownPath(codec.type as t.Mixed, value)
  if (codec instanceof t.UnionType) {
    // The first member the value is: its structure decides.
    for (const c of codec.types as t.Mixed[]) if (c.is(value)) return unknownPath(c, value)
    return null
  }
  if (codec instanceof t.ArrayType || codec instanceof t.ReadonlyArrayType) {
    if (!Array.isArray(value)) return null
    const item = codec.type as t.Mixed
    if (isLeaf(item)) return null
    for (let i = 0; i < value.length; i++) {
      const r = unknownPath(item, value[i])
      if (r !== null) {
        r.push(`[${i}]`)
        return r
      }
    }
    return null
  }
  if (codec instanceof t.DictionaryType) {
    if (!isPlainObject(value)) return null
    const item = codec.codomain as t.Mixed
    for (const k of Object.keys(value)) {
      const r = unknownPath(item, value[k])
      if (r !== null) {
        r.push(`.${k}`)
        return r
      }
    }
    return null
  }
  const props = propsOf(codec)
  if (props === null || !isPlainObject(value)) return null
  for (const k of Object.keys(value)) {
    const c = props[k]
    if (c === undefined) return [`.${k}`]
    // A string, a number, a literal: nothing under it.
    if (isLeaf(c)) continue
    const r = unknownPath(c, value[k])
    if (r !== null) {
      r.push(`.${k}`)
      return r
    }
  }
  return null
}
