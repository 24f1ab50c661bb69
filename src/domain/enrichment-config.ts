/**
 * [enrichment] of the project profile: which entities resolve how, which text columns become
 * their own facts, and which relationships are followed. The generic code holds no game
 * knowledge; profiles (config/trinitycore.toml) do.
 *
 * Decoding is strict: an unknown key (a typo such as `from_colum`) is refused, not ignored, and so
 * is a relationship whose keys do not fit together (a source-symbol search with a table, a table
 * relationship without one) or that names a column no configured lookup selects.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { Operator, Scalar } from './query.js'
import { describeErrors } from '../events/decode.js'
import { checkSourcePath } from './source-paths.js'
import { checkPatterns, ExtractPattern } from './extract.js'

const Name = t.string
const Count = t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 1 && n <= 10_000, 'Count')

/** @category investigations */
export const EntityLookup = t.type({ table: Name, id_column: Name, columns: t.array(Name) }, 'EntityLookup')

/** @category investigations */
export const TextColumn = t.type({ table: Name, column: Name, role: t.string }, 'TextColumn')

export const FixedFilter = t.type({ column: Name, operator: Operator, value: Scalar }, 'FixedFilter')

const RelationshipOrigin = {
  relation: t.string,
  from_table: Name,
  from_column: Name
}
const RelationshipOptions = {
  /** The id column of the origin row: the relationship fact names the row it starts from. */
  from_id_column: Name,
  when_column: Name,
  when_value: Scalar,
  ignore_values: t.array(Scalar)
}

/** A relationship followed into another table: rows whose `column` equals the origin value. @category investigations */
export const TableRelationship = t.intersection(
  [
    t.type({ ...RelationshipOrigin, table: Name, column: Name }),
    t.partial({
      ...RelationshipOptions,
      columns: t.array(Name),
      entity_type: t.string,
      filters: t.array(FixedFilter),
      source_symbol: t.literal(false)
    })
  ],
  'TableRelationship'
)

/**
 * A relationship followed into the source: the origin value searched as a symbol (script names).
 * @category investigations
 */
export const SymbolRelationship = t.intersection(
  [
    t.type({ ...RelationshipOrigin, source_symbol: t.literal(true) }),
    t.partial({ ...RelationshipOptions, path_prefix: t.string })
  ],
  'SymbolRelationship'
)

export type TableRelationship = t.TypeOf<typeof TableRelationship>
export type SymbolRelationship = t.TypeOf<typeof SymbolRelationship>
/** @category investigations */
export type Relationship = TableRelationship | SymbolRelationship

const Bounds = t.partial({
  max_queries: Count,
  max_depth: t.refinement(t.number, (n) => Number.isSafeInteger(n) && n >= 0 && n <= 20, 'Depth'),
  max_relationships: Count,
  /** Rows one enrichment lookup asks for per page (capped by [limits] max_rows). */
  page_rows: Count,
  ignore_values: t.array(Scalar)
})

/** @category investigations */
export const EnrichmentConfig = t.intersection(
  [
    t.type({ entities: t.record(t.string, EntityLookup) }),
    t.partial({
      texts: t.array(TextColumn),
      relationships: t.array(t.union([TableRelationship, SymbolRelationship])),
      /** Patterns that find entities in the report (see domain/extract.ts). */
      extract: t.array(ExtractPattern)
    }),
    Bounds
  ],
  'EnrichmentConfig'
)

export type EntityLookup = t.TypeOf<typeof EntityLookup>
export type TextColumn = t.TypeOf<typeof TextColumn>
export type EnrichmentConfig = t.TypeOf<typeof EnrichmentConfig>

export const DEFAULT_BOUNDS = { max_queries: 24, max_depth: 3, max_relationships: 40, page_rows: 100 }

export const isSymbolRelationship = (r: Relationship): r is SymbolRelationship => r.source_symbol === true

const TOP_KEYS = [
  'entities',
  'texts',
  'relationships',
  'max_queries',
  'max_depth',
  'max_relationships',
  'page_rows',
  'ignore_values',
  'extract'
]
const EXTRACT_KEYS = ['type', 'pattern', 'kind', 'ignore_case']
const ENTITY_KEYS = ['table', 'id_column', 'columns']
const TEXT_KEYS = ['table', 'column', 'role']
const FILTER_KEYS = ['column', 'operator', 'value']
const ORIGIN_KEYS = [
  'relation',
  'from_table',
  'from_column',
  'from_id_column',
  'when_column',
  'when_value',
  'ignore_values',
  'source_symbol'
]
const TABLE_KEYS = [...ORIGIN_KEYS, 'table', 'column', 'columns', 'entity_type', 'filters']
const SYMBOL_KEYS = [...ORIGIN_KEYS, 'path_prefix']

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)

const unknownKeys = (u: unknown, allowed: readonly string[]): string[] =>
  isRecord(u) ? Object.keys(u).filter((k) => !allowed.includes(k)) : []

const refuse = (message: string): E.Either<Failure, never> =>
  E.left(failure('CONFIG_INVALID', `[enrichment] ${message}`))

/**
 * Decodes [enrichment] strictly: unknown keys anywhere, relationships whose keys do not fit
 * together, and columns no lookup selects are refused with the place they were found.
 */
export const decodeEnrichment = (raw: unknown): E.Either<Failure, EnrichmentConfig> => {
  const top = unknownKeys(raw, TOP_KEYS)
  if (top.length > 0)
    return refuse(`unknown key ${top.map((k) => JSON.stringify(k)).join(', ')} (known: ${TOP_KEYS.join(', ')})`)
  if (isRecord(raw)) {
    for (const [name, entity] of Object.entries(isRecord(raw['entities']) ? raw['entities'] : {})) {
      const bad = unknownKeys(entity, ENTITY_KEYS)
      if (bad.length > 0) return refuse(`entities.${name}: unknown key ${bad.join(', ')}`)
    }
    for (const [i, text] of (Array.isArray(raw['texts']) ? raw['texts'] : []).entries()) {
      const bad = unknownKeys(text, TEXT_KEYS)
      if (bad.length > 0) return refuse(`texts[${i}]: unknown key ${bad.join(', ')}`)
    }
    for (const [i, x] of (Array.isArray(raw['extract']) ? raw['extract'] : []).entries()) {
      const bad = unknownKeys(x, EXTRACT_KEYS)
      if (bad.length > 0) return refuse(`extract[${i}]: unknown key ${bad.join(', ')}`)
    }
    for (const [i, rel] of (Array.isArray(raw['relationships']) ? raw['relationships'] : []).entries()) {
      const where = `relationships[${i}]${isRecord(rel) && typeof rel['relation'] === 'string' ? ` (${rel['relation']})` : ''}`
      const symbol = isRecord(rel) && rel['source_symbol'] === true
      const bad = unknownKeys(rel, symbol ? SYMBOL_KEYS : TABLE_KEYS)
      if (bad.length > 0)
        return refuse(
          `${where}: unknown key ${bad.join(', ')}${symbol ? ' (a source_symbol relationship searches the source; it names no table)' : ''}`
        )
      const codec = symbol ? SymbolRelationship : TableRelationship
      const d = codec.decode(rel)
      if (E.isLeft(d))
        return refuse(
          `${where}: ${describeErrors(d.left)}${symbol ? '' : ' (a relationship names table and column, or sets source_symbol = true)'}`
        )
      for (const [j, f] of (isRecord(rel) && Array.isArray(rel['filters']) ? rel['filters'] : []).entries()) {
        const badFilter = unknownKeys(f, FILTER_KEYS)
        if (badFilter.length > 0) return refuse(`${where}.filters[${j}]: unknown key ${badFilter.join(', ')}`)
      }
    }
  }
  const d = EnrichmentConfig.decode(raw)
  if (E.isLeft(d)) return refuse(describeErrors(d.left))
  const config = d.right
  const patterns = checkPatterns(config.extract ?? [])
  if (E.isLeft(patterns)) return patterns
  // Every column a relationship reads from a row must be selected by a lookup of that table.
  const selected = new Map<string, Set<string>>()
  const add = (table: string, columns: readonly string[]): void => {
    const set = selected.get(table) ?? new Set<string>()
    for (const c of columns) set.add(c)
    selected.set(table, set)
  }
  for (const e of Object.values(config.entities)) add(e.table, e.columns)
  for (const r of config.relationships ?? []) if (!isSymbolRelationship(r)) add(r.table, r.columns ?? [r.column])
  for (const [i, r] of (config.relationships ?? []).entries()) {
    const cols = selected.get(r.from_table)
    if (cols === undefined)
      return refuse(
        `relationships[${i}] (${r.relation}): from_table ${r.from_table} is read by no entity lookup or relationship`
      )
    for (const key of ['from_column', 'from_id_column', 'when_column'] as const) {
      const c = r[key]
      if (c !== undefined && !cols.has(c))
        return refuse(
          `relationships[${i}] (${r.relation}): ${key} ${c} is not among the columns selected from ${r.from_table} (${[...cols].join(', ')})`
        )
    }
    if ((r.when_column === undefined) !== (r.when_value === undefined))
      return refuse(`relationships[${i}] (${r.relation}): when_column and when_value go together`)
    if (isSymbolRelationship(r) && r.path_prefix !== undefined) {
      const p = checkSourcePath('path_prefix', r.path_prefix)
      if (E.isLeft(p)) return refuse(`relationships[${i}] (${r.relation}): ${p.left.message}`)
    }
  }
  return E.right(config)
}

/** By default null, empty strings and numeric zero are not followed. */
export const DEFAULT_IGNORED: readonly Scalar[] = [null, '', 0, '0']

/** True when `value` is one of `ignored`; numbers match their exact string form (BIGINT, DECIMAL). */
export const isIgnored = (value: unknown, ignored: readonly Scalar[]): boolean =>
  ignored.some((i) =>
    i === null
      ? value === null
      : value !== null &&
        typeof value !== 'object' &&
        (i === value ||
          (typeof i === 'number' && String(i) === String(value)) ||
          (typeof value === 'number' && String(value) === i))
  )

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
    else if (cur !== null && typeof cur === 'object')
      cur = Object.hasOwn(cur, key) ? (cur as Record<string, unknown>)[key] : undefined
    else return undefined
  }
  return cur
}

/** An entity reference as the inputs give it: `{type: "quest", id: 11117}`. @category investigations */
export const EntityRef = t.type({ type: t.string, id: t.union([t.number, t.string]) }, 'EntityRef')
export type EntityRef = t.TypeOf<typeof EntityRef>
