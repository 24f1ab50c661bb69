/**
 * Event types whose data can hold no object reference: every version's codec names only members
 * of primitive values (strings, numbers, literals), none of them `digest`, and a decoded event has
 * no member its codec does not name. A fold that looks for references (the summary) skips their
 * data, so a reader that parses data only when it is read never parses a note's text. Pure.
 */
import * as t from 'io-ts'
import { registry } from './catalog.js'

const primitive = (c: t.Mixed): boolean => {
  if (
    c instanceof t.StringType ||
    c instanceof t.NumberType ||
    c instanceof t.BooleanType ||
    c instanceof t.LiteralType ||
    c instanceof t.KeyofType ||
    c instanceof t.NullType
  )
    return true
  if (c instanceof t.RefinementType || c instanceof t.ReadonlyType || c instanceof t.ExactType)
    return primitive(c.type as t.Mixed)
  if (c instanceof t.UnionType) return (c.types as t.Mixed[]).every(primitive)
  return false
}

/** An object codec whose members are all primitive and none is `digest`. */
const flat = (c: t.Mixed): boolean => {
  if (c instanceof t.RefinementType || c instanceof t.ReadonlyType || c instanceof t.ExactType)
    return flat(c.type as t.Mixed)
  if (c instanceof t.InterfaceType || c instanceof t.PartialType) {
    const props = c.props as Record<string, t.Mixed>
    return !Object.hasOwn(props, 'digest') && Object.values(props).every(primitive)
  }
  if (c instanceof t.IntersectionType) return (c.types as t.Mixed[]).every(flat)
  return false
}

const REF_FREE: ReadonlySet<string> = new Set(
  [...registry.definitions.values()].filter((d) => d.versions.every(flat)).map((d) => d.type)
)

/** Whether data of `type` can hold no object reference (collectRefs finds none in it). */
export const refFree = (type: string): boolean => REF_FREE.has(type)
