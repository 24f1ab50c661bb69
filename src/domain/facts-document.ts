/**
 * The facts of a prepared revision (the enrichment's output, stored as an object). The codecs are
 * the schema (named *Codec where the type is public, so the API reference shows the type): readers decode a facts object from `unknown` (the prompt, the report, the client)
 * instead of trusting its shape.
 */
import * as t from 'io-ts'

/** Where a fact comes from: a capture (by digest) and a JSON pointer into it. */
export const ProvenanceCodec = t.type({ capture: t.string, pointer: t.string }, 'Provenance')
/**
 * Where a fact comes from: `capture` (a capture's digest) and `pointer` (a JSON pointer into it).
 * @category investigations
 */
export type Provenance = t.TypeOf<typeof ProvenanceCodec>

/** Why enrichment left something out. */
export const CoverageReason = t.keyof(
  {
    max_depth: null,
    max_queries: null,
    max_relationships: null,
    no_lookup_configured: null,
    not_an_identifier: null,
    refused: null,
    partial_answer: null,
    rows_not_fetched: null
  },
  'CoverageReason'
)

/** Something enrichment left out: what, how much (when known) and why. */
export const CoverageGapCodec = t.intersection(
  [
    t.type({ reason: CoverageReason, what: t.string }),
    t.partial({
      /** How many items (rows) were left out, when it is known. */
      count: t.number,
      /** The failure code of a refused query, or the markers of a partial answer. */
      code: t.string,
      detail: t.string,
      /** The request that failed (a refused query), exactly as it was asked. */
      request: t.UnknownRecord
    })
  ],
  'CoverageGap'
)
/**
 * Something enrichment left out: `what`, `reason`, and when known `count`, `code`, `detail` and the `request`.
 * @category investigations
 */
export type CoverageGap = t.TypeOf<typeof CoverageGapCodec>

const Id = t.union([t.number, t.string])

export const EntityFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('entity'),
    entity_type: t.string,
    id: Id,
    source: t.keyof({ input: null, relationship: null }),
    table: t.string,
    values: t.UnknownRecord,
    texts: t.record(t.string, t.string),
    provenance: ProvenanceCodec
  },
  'EntityFact'
)

export const DescriptionFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('project_description'),
    entity_type: t.string,
    id: Id,
    column: t.string,
    role: t.string,
    text: t.string,
    describes: t.literal('template_text'),
    notice: t.string,
    provenance: ProvenanceCodec
  },
  'DescriptionFact'
)

const Origin = t.intersection([
  t.type({ table: t.string, column: t.string, provenance: ProvenanceCodec }),
  t.partial({ id: t.unknown })
])

export const RelationshipFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('relationship'),
    relation: t.string,
    from: t.intersection([Origin, t.type({ value: t.unknown })]),
    to: t.type({
      table: t.string,
      column: t.string,
      rows: t.number,
      complete: t.boolean,
      entity_type: t.union([t.string, t.null]),
      provenance: ProvenanceCodec,
      pages: t.array(ProvenanceCodec)
    }),
    notice: t.string
  },
  'RelationshipFact'
)

export const SourceSymbolFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('source_symbol'),
    relation: t.string,
    symbol: t.string,
    path_prefix: t.union([t.string, t.null]),
    hits: t.number,
    complete: t.boolean,
    from: Origin,
    provenance: ProvenanceCodec
  },
  'SourceSymbolFact'
)

export const NotFoundFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('not_found'),
    table: t.string,
    column: t.string,
    value: t.unknown,
    notice: t.string,
    provenance: ProvenanceCodec
  },
  'NotFoundFact'
)

export const CoverageFact = t.type(
  {
    fact_id: t.string,
    type: t.literal('project_context_coverage'),
    queries_run: t.number,
    identical_queries_reused: t.number,
    left_out: t.array(CoverageGapCodec),
    cycles_cut: t.array(t.string),
    complete: t.boolean,
    notice: t.string
  },
  'CoverageFact'
)

export const FactCodec = t.union(
  [EntityFact, DescriptionFact, RelationshipFact, SourceSymbolFact, NotFoundFact, CoverageFact],
  'Fact'
)
/**
 * One fact of a prepared revision, by `type`: `entity` (a row of an entity's table: `values`, and
 * `texts` naming the fact ids of its template texts), `project_description` (a template text),
 * `relationship` (a configured reference: `from` a row's value `to` the rows of another table),
 * `source_symbol` (a script name searched in the source: `hits`), `not_found` (no row for a value),
 * `project_context_coverage` (what enrichment left out: `left_out`, each with its reason, code and
 * request). Every fact carries its provenance (a capture digest and a JSON pointer).
 * @category investigations
 */
export type Fact = t.TypeOf<typeof FactCodec>

/** The facts object of a revision (`format` vba-facts, version 1). */
export const FactsDocument = t.type(
  { format: t.literal('vba-facts'), version: t.literal(1), revision: t.number, facts: t.array(FactCodec) },
  'FactsDocument'
)
export type FactsDocument = t.TypeOf<typeof FactsDocument>
