/**
 * project-query-v1: the only questions a model can ask. The io-ts codecs are the contract; a
 * request is decoded from `unknown`, and a member the contract does not name (a repository, a
 * ref, a host, a raw SQL string) is refused rather than ignored.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { describeErrors } from '../events/decode.js'
import { intAtLeast, schemaHints } from '../events/codecs.js'
import { boundsViolation } from '../events/bounds.js'

const boundedString = (name: string, min: number, max: number): t.Type<string, string, unknown> => {
  const codec = new t.Type<string, string, unknown>(
    name,
    (u): u is string => typeof u === 'string' && u.length >= min && u.length <= max,
    (u, c) =>
      typeof u === 'string' && u.length >= min && u.length <= max
        ? t.success(u)
        : t.failure(u, c, `expected a string of ${min}-${max} characters`),
    t.identity
  )
  // The JSON Schema of the contract (MCP tools offer it) is generated from the codecs.
  schemaHints.set(codec, { type: 'string', minLength: min, maxLength: max })
  return codec
}

const Text = boundedString('Text', 1, 200)
const PathText = boundedString('Path', 1, 1024)
const LineNumber = intAtLeast('LineNumber', 1)
const Name = boundedString('Name', 1, 128)

// --- source kinds ------------------------------------------------------------------------------

/** @category research */
export const SourceFiles = t.intersection(
  [t.type({ kind: t.literal('source.files'), text: Text }), t.partial({ path_prefix: PathText })],
  'SourceFiles'
)
/** @category research */
export const SourceSearch = t.intersection(
  [t.type({ kind: t.literal('source.search'), text: Text }), t.partial({ path_prefix: PathText })],
  'SourceSearch'
)
/** @category research */
export const SourceSymbol = t.intersection(
  [t.type({ kind: t.literal('source.symbol'), symbol: Text }), t.partial({ path_prefix: PathText })],
  'SourceSymbol'
)
/** @category research */
export const SourceRegistration = t.intersection(
  [t.type({ kind: t.literal('source.registration'), symbol: Text }), t.partial({ path_prefix: PathText })],
  'SourceRegistration'
)
/** @category research */
export const SourceSchema = t.type({ kind: t.literal('source.schema'), text: Text }, 'SourceSchema')
/** @category research */
export const SourceRead = t.type(
  { kind: t.literal('source.read'), path: PathText, start_line: LineNumber, end_line: LineNumber },
  'SourceRead'
)
/** @category research */
export const SourceContext = t.intersection(
  [t.type({ kind: t.literal('source.context'), text: Text }), t.partial({ path_prefix: PathText })],
  'SourceContext'
)

// --- database kinds ----------------------------------------------------------------------------

/** A bound value: never spliced into SQL. @category research */
export const Scalar = t.union([boundedString('StringValue', 0, 1000), t.number, t.boolean, t.null], 'Scalar')
export type Scalar = t.TypeOf<typeof Scalar>

/** @category research */
export const Operator = t.keyof(
  { eq: null, ne: null, lt: null, le: null, gt: null, ge: null, contains: null, in: null },
  'Operator'
)
export type Operator = t.TypeOf<typeof Operator>

/** @category research */
export const Filter = t.type(
  {
    column: Name,
    operator: Operator,
    value: t.union([Scalar, t.array(t.union([boundedString('StringValue', 0, 1000), t.number]))])
  },
  'Filter'
)
export type Filter = t.TypeOf<typeof Filter>

/** @category research */
export const OrderBy = t.type({ column: Name, direction: t.keyof({ asc: null, desc: null }) }, 'OrderBy')
export type OrderBy = t.TypeOf<typeof OrderBy>

/** @category research */
export const DatabaseTables = t.intersection(
  [t.type({ kind: t.literal('database.tables') }), t.partial({ text: Text, database: Name })],
  'DatabaseTables'
)
/** @category research */
export const DatabaseSchema = t.intersection(
  [t.type({ kind: t.literal('database.schema'), table: Name }), t.partial({ database: Name })],
  'DatabaseSchema'
)
/** @category research */
export const DatabaseRows = t.intersection(
  [
    t.type({
      kind: t.literal('database.rows'),
      table: Name,
      columns: t.array(Name),
      filters: t.array(Filter),
      offset: intAtLeast('Offset', 0),
      limit: intAtLeast('Limit', 1)
    }),
    t.partial({ order_by: t.array(OrderBy), database: Name })
  ],
  'DatabaseRows'
)
/** @category research */
export const DatabaseCount = t.intersection(
  [t.type({ kind: t.literal('database.count'), table: Name, filters: t.array(Filter) }), t.partial({ database: Name })],
  'DatabaseCount'
)

export type SourceFiles = t.TypeOf<typeof SourceFiles>
export type SourceSearch = t.TypeOf<typeof SourceSearch>
export type SourceSymbol = t.TypeOf<typeof SourceSymbol>
export type SourceRegistration = t.TypeOf<typeof SourceRegistration>
export type SourceSchema = t.TypeOf<typeof SourceSchema>
export type SourceRead = t.TypeOf<typeof SourceRead>
export type SourceContext = t.TypeOf<typeof SourceContext>
export type DatabaseTables = t.TypeOf<typeof DatabaseTables>
export type DatabaseSchema = t.TypeOf<typeof DatabaseSchema>
export type DatabaseRows = t.TypeOf<typeof DatabaseRows>
export type DatabaseCount = t.TypeOf<typeof DatabaseCount>

/** @category research */
export type SourceQuery =
  | SourceFiles
  | SourceSearch
  | SourceSymbol
  | SourceRegistration
  | SourceSchema
  | SourceRead
  | SourceContext
/** @category research */
export type DatabaseQuery = DatabaseTables | DatabaseSchema | DatabaseRows | DatabaseCount
/** @category research */
export type ProjectQuery = SourceQuery | DatabaseQuery

const CODECS: Readonly<Record<ProjectQuery['kind'], t.Mixed>> = {
  'source.files': SourceFiles,
  'source.search': SourceSearch,
  'source.symbol': SourceSymbol,
  'source.registration': SourceRegistration,
  'source.schema': SourceSchema,
  'source.read': SourceRead,
  'source.context': SourceContext,
  'database.tables': DatabaseTables,
  'database.schema': DatabaseSchema,
  'database.rows': DatabaseRows,
  'database.count': DatabaseCount
}

export const QUERY_KINDS = Object.keys(CODECS) as ReadonlyArray<ProjectQuery['kind']>

/** The codec of each query kind (the contract; JSON Schemas are generated from them). */
export const QUERY_CODECS: Readonly<Record<ProjectQuery['kind'], t.Mixed>> = CODECS

/** Member names a codec allows, at the top level. */
const allowedKeys = (codec: t.Mixed): Set<string> => {
  const c = codec as unknown as { _tag: string; props?: Record<string, unknown>; types?: t.Mixed[] }
  if (c._tag === 'InterfaceType' || c._tag === 'PartialType') return new Set(Object.keys(c.props ?? {}))
  if (c._tag === 'IntersectionType') return new Set((c.types ?? []).flatMap((x) => [...allowedKeys(x)]))
  return new Set()
}

const FILTER_KEYS = new Set(['column', 'operator', 'value'])
const ORDER_KEYS = new Set(['column', 'direction'])

export type QueryFailure = Failure<'QUERY_INVALID' | 'QUERY_UNKNOWN_KIND'>

const invalid = (message: string, data: Record<string, unknown> = {}): E.Either<QueryFailure, never> =>
  E.left(failure('QUERY_INVALID', message, data))

/**
 * Decodes project.query arguments. Unknown kinds, unknown members (at the top level, in filters
 * and in order_by), wrong types and out-of-range numbers are refused with a coded error.
 */
export const decodeQuery = (u: unknown): E.Either<QueryFailure, ProjectQuery> => {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return invalid('a query is a JSON object')
  const bounds = boundsViolation(u)
  if (bounds !== null) return invalid(`a query is ${bounds.message}`, { limit: bounds.limit, depth: bounds.depth })
  const kind = (u as { kind?: unknown }).kind
  if (typeof kind !== 'string' || !(kind in CODECS)) {
    return E.left(
      failure('QUERY_UNKNOWN_KIND', `unknown query kind; expected one of ${QUERY_KINDS.join(', ')}`, {
        kind: typeof kind === 'string' ? kind.slice(0, 40) : typeof kind
      })
    )
  }
  const codec = CODECS[kind as ProjectQuery['kind']]
  const allowed = allowedKeys(codec)
  const extra = Object.keys(u).filter((k) => !allowed.has(k))
  if (extra.length > 0)
    return invalid(
      `${kind} does not take: ${extra
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(', ')}`,
      { members: extra.slice(0, 5).map((k) => k.slice(0, 40)) }
    )
  const record = u as Record<string, unknown>
  for (const [list, keys] of [
    ['filters', FILTER_KEYS],
    ['order_by', ORDER_KEYS]
  ] as const) {
    const items = record[list]
    if (Array.isArray(items)) {
      for (const item of items) {
        if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
          const bad = Object.keys(item).filter((k) => !keys.has(k))
          if (bad.length > 0)
            return invalid(
              `${list} entries do not take: ${bad
                .slice(0, 5)
                .map((k) => JSON.stringify(k.slice(0, 40)))
                .join(', ')}`
            )
        }
      }
    }
  }
  const decoded = codec.decode(u)
  if (E.isLeft(decoded)) return invalid(`${kind}: ${describeErrors(decoded.left)}`)
  // Text that is not valid Unicode can be neither compared, canonicalised nor recorded.
  if (holdsLoneSurrogate(decoded.right))
    return invalid(`${kind}: a value holds lone UTF-16 surrogates (not valid Unicode text)`)
  return E.right(decoded.right as ProjectQuery)
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** True when any string (value or key) inside `u` holds a lone UTF-16 surrogate. */
export const holdsLoneSurrogate = (u: unknown): boolean => {
  if (typeof u === 'string') return LONE_SURROGATE.test(u)
  if (Array.isArray(u)) return u.some(holdsLoneSurrogate)
  if (typeof u === 'object' && u !== null)
    return Object.entries(u).some(([k, v]) => LONE_SURROGATE.test(k) || holdsLoneSurrogate(v))
  return false
}

/** Narrows a query to the database half. */
export const isDatabaseQuery = (q: ProjectQuery): q is DatabaseQuery => q.kind.startsWith('database.')
