/**
 * project-query-v1's requests: the codec of every query kind, and the one list of kinds
 * (`QUERY_REQUESTS`) the query kind names, `ProjectQuery`, the capture codec and the event data
 * that name a kind are derived from. A kind's other parts (its text, prompt items, report body,
 * MCP tool) are its definition in src/projections/query-kinds/, its executor is in src/research/.
 * Decoding (unknown members refused) is `decodeQuery` in src/domain/query.ts.
 */
import * as t from 'io-ts'
import { intAtLeast, schemaHints } from './codecs.js'

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

/** Optional members of every source search: `ignore_case` matches ASCII letters of either case. */
const searchOptions = { path_prefix: PathText, ignore_case: t.boolean }

/** @category research */
export const SourceFiles = t.intersection(
  [t.type({ kind: t.literal('source.files'), text: Text }), t.partial(searchOptions)],
  'SourceFiles'
)
/** @category research */
export const SourceSearch = t.intersection(
  [
    t.type({ kind: t.literal('source.search'), text: Text }),
    /** `whole_number`: the text matches only where no digit (nor a decimal point and digit) adjoins it. */
    t.partial({ ...searchOptions, whole_number: t.boolean })
  ],
  'SourceSearch'
)
/** @category research */
export const SourceSymbol = t.intersection(
  [t.type({ kind: t.literal('source.symbol'), symbol: Text }), t.partial(searchOptions)],
  'SourceSymbol'
)
/** @category research */
export const SourceRegistration = t.intersection(
  [t.type({ kind: t.literal('source.registration'), symbol: Text }), t.partial(searchOptions)],
  'SourceRegistration'
)
/** @category research */
export const SourceSchema = t.intersection(
  [t.type({ kind: t.literal('source.schema'), text: Text }), t.partial({ ignore_case: t.boolean })],
  'SourceSchema'
)
/** @category research */
export const SourceRead = t.type(
  { kind: t.literal('source.read'), path: PathText, start_line: LineNumber, end_line: LineNumber },
  'SourceRead'
)
/** @category research */
export const SourceContext = t.intersection(
  [t.type({ kind: t.literal('source.context'), text: Text }), t.partial(searchOptions)],
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

// --- the one list of kinds ---------------------------------------------------------------------

/** The request codec of every query kind, in the contract's order (a new kind is one line here). */
export const QUERY_REQUESTS = {
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
} as const

/** @category research */
export const QueryKind = t.keyof(
  Object.fromEntries(Object.keys(QUERY_REQUESTS).map((k) => [k, null])) as {
    readonly [K in keyof typeof QUERY_REQUESTS]: null
  },
  'QueryKind'
)
export type QueryKind = t.TypeOf<typeof QueryKind>

/** The request of one kind. @category research */
export type QueryOf<K extends QueryKind> = t.TypeOf<(typeof QUERY_REQUESTS)[K]>

export type SourceFiles = QueryOf<'source.files'>
export type SourceSearch = QueryOf<'source.search'>
export type SourceSymbol = QueryOf<'source.symbol'>
export type SourceRegistration = QueryOf<'source.registration'>
export type SourceSchema = QueryOf<'source.schema'>
export type SourceRead = QueryOf<'source.read'>
export type SourceContext = QueryOf<'source.context'>
export type DatabaseTables = QueryOf<'database.tables'>
export type DatabaseSchema = QueryOf<'database.schema'>
export type DatabaseRows = QueryOf<'database.rows'>
export type DatabaseCount = QueryOf<'database.count'>

/** @category research */
export type ProjectQuery = { readonly [K in QueryKind]: QueryOf<K> }[QueryKind]
/** @category research */
export type SourceQuery = Extract<ProjectQuery, { readonly kind: `source.${string}` }>
/** @category research */
export type DatabaseQuery = Extract<ProjectQuery, { readonly kind: `database.${string}` }>
