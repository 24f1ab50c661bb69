/**
 * [enrichment] of the project profile: which entities resolve how, which text columns become
 * their own facts, and which relationships are followed. The generic code holds no game
 * knowledge; profiles (config/trinitycore.toml) do.
 */
import * as t from 'io-ts'
import { Operator, Scalar } from './query.js'

const Name = t.string

export const EntityLookup = t.type({ table: Name, id_column: Name, columns: t.array(Name) }, 'EntityLookup')

export const TextColumn = t.type({ table: Name, column: Name, role: t.string }, 'TextColumn')

export const FixedFilter = t.type({ column: Name, operator: Operator, value: Scalar }, 'FixedFilter')

/** A relationship followed from a value in a returned row: to a table, or to a source symbol search. */
export const Relationship = t.intersection([
  t.type({ relation: t.string, from_table: Name, from_column: Name }),
  t.partial({
    from_id_column: Name,
    table: Name,
    column: Name,
    columns: t.array(Name),
    entity_type: t.string,
    when_column: Name,
    when_value: Scalar,
    filters: t.array(FixedFilter),
    /** Instead of a table: search the value in the source as a symbol (script names). */
    source_symbol: t.boolean,
    ignore_values: t.array(Scalar)
  })
], 'Relationship')

export const EnrichmentConfig = t.intersection([
  t.type({ entities: t.record(t.string, EntityLookup) }),
  t.partial({
    texts: t.array(TextColumn),
    relationships: t.array(Relationship),
    max_queries: t.number,
    max_depth: t.number,
    max_relationships: t.number,
    ignore_values: t.array(Scalar)
  })
], 'EnrichmentConfig')

export type EntityLookup = t.TypeOf<typeof EntityLookup>
export type TextColumn = t.TypeOf<typeof TextColumn>
export type Relationship = t.TypeOf<typeof Relationship>
export type EnrichmentConfig = t.TypeOf<typeof EnrichmentConfig>

export const DEFAULT_BOUNDS = { max_queries: 24, max_depth: 3, max_relationships: 40 }

/** By default null, empty strings and numeric zero are not followed. */
export const DEFAULT_IGNORED: readonly Scalar[] = [null, '', 0, '0']

/** True when `value` is one of `ignored`; numbers match their exact string form (BIGINT, DECIMAL). */
export const isIgnored = (value: unknown, ignored: readonly Scalar[]): boolean =>
  ignored.some((i) => (i === null ? value === null : value !== null && typeof value !== 'object' && (i === value || (typeof i === 'number' && String(i) === String(value)) || (typeof value === 'number' && String(value) === i))))

/** RFC 6901 JSON pointer from path segments. */
export const pointer = (...segments: Array<string | number>): string =>
  segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('')

/** Resolves an RFC 6901 pointer in a JSON value (undefined when it does not resolve). */
export const resolvePointer = (doc: unknown, ptr: string): unknown => {
  if (ptr === '') return doc
  let cur: unknown = doc
  for (const raw of ptr.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(cur)) cur = cur[Number(key)]
    else if (cur !== null && typeof cur === 'object') cur = (cur as Record<string, unknown>)[key]
    else return undefined
  }
  return cur
}

/** An entity reference as the inputs give it: `{type: "quest", id: 11117}`. */
export const EntityRef = t.type({ type: t.string, id: t.union([t.number, t.string]) }, 'EntityRef')
export type EntityRef = t.TypeOf<typeof EntityRef>

/** The raw inputs of a revision (REPORT.json of `vba case prepare`). */
export const RevisionInputs = t.intersection([
  t.type({ report: t.string, entities: t.array(EntityRef) }),
  t.partial({ title: t.string, attachments: t.array(t.type({ name: t.string, path: t.string })) })
], 'RevisionInputs')
export type RevisionInputs = t.TypeOf<typeof RevisionInputs>
