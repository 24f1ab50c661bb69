/**
 * Case preparation: the deterministic enrichment of a revision's entity references into facts
 * with provenance, before any model sees the case. It asks only ordinary project.query questions
 * (so every answer is a capture), follows only relationships the profile configures, pages where
 * a fact needs all rows, and reports everything it left out as `project_context_coverage`: what,
 * how many and why. It never calls a model and never diagnoses: a referenced item is a reference,
 * not an observed runtime object or a cause, and template texts say what the template says, not
 * what the server did.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../failures/failure.js'
import {
  DEFAULT_BOUNDS,
  isSymbolRelationship,
  pointer,
  type EnrichmentConfig,
  type EntityRef,
  type Relationship,
  type SymbolRelationship,
  type TableRelationship
} from './enrichment-config.js'
import { isIdentifier } from './text-scan.js'
import { partialMarkers } from './partial.js'
import type { Scalar } from './query.js'
import type { Capture } from '../events/capture.js'
import { entityFacts, factId, followFrom } from './enrich-facts.js'
import { allRows, ask, failed, isFailure, notePartial, type Asked, type NotAsked } from './enrich-ask.js'

import type { CoverageGap, Fact, Provenance } from './facts-document.js'
export type { CoverageGap, Fact, Provenance } from './facts-document.js'

/**
 * What enrichment asks its questions of: ProjectResearch when a revision is prepared, the
 * revision's recorded captures when verify derives its facts again. Pure over this port.
 */
export interface EnrichmentQueries {
  readonly query: (args: unknown) => () => Promise<E.Either<Failure, Capture>>
}

export interface EnrichmentResult {
  /** Unique captures in the order they were first made. */
  readonly captures: readonly Capture[]
  readonly facts: readonly Fact[]
  readonly complete: boolean
}

export type Work =
  | { readonly kind: 'entity'; readonly ref: EntityRef; readonly depth: number }
  | {
      readonly kind: 'follow'
      readonly rel: Relationship
      readonly value: Scalar
      readonly originId: unknown
      readonly depth: number
      readonly from: Provenance
    }

export interface RowSet {
  /** Every row gathered, with the page it came from. */
  readonly rows: ReadonlyArray<{
    readonly row: Record<string, unknown>
    readonly digest: string
    readonly index: number
  }>
  readonly pages: readonly Asked[]
  /** True when every matching row was fetched. */
  readonly complete: boolean
}

/** Runs the configured enrichment for `entities`. Left only when a provider is unavailable. */
export const enrich = async (
  research: EnrichmentQueries,
  config: EnrichmentConfig,
  entities: readonly EntityRef[]
): Promise<E.Either<Failure, EnrichmentResult>> => {
  const run = startRun(research, config)
  const queue: Work[] = entities.map((ref) => ({ kind: 'entity', ref, depth: 0 }))
  while (queue.length > 0 && run.unavailable === null) {
    const w = queue.shift() as Work
    if (!admit(run, w)) continue
    if (w.kind === 'entity') await lookUpEntity(run, w, queue)
    else await follow(run, w, queue)
  }
  if (run.unavailable !== null) return E.left(run.unavailable)
  const complete = run.gaps.length === 0
  run.facts.push({
    fact_id: factId(run),
    type: 'project_context_coverage',
    queries_run: run.captures.length,
    identical_queries_reused: run.reused,
    left_out: run.gaps,
    cycles_cut: run.cycles,
    complete,
    notice: complete
      ? 'The configured enrichment ran without leaving anything out. It is context, not a complete investigation.'
      : `The configured enrichment left out ${run.gaps.length} item(s), listed with what, how many and why; it is partial context, not a complete investigation.`
  })
  return E.right({ captures: run.captures, facts: run.facts, complete })
}

type EntityWork = Extract<Work, { readonly kind: 'entity' }>
type FollowWork = Extract<Work, { readonly kind: 'follow' }>

/** One enrichment run: its bounds, what it asked and found, and what it left out. */
export interface Run {
  readonly research: EnrichmentQueries
  readonly config: EnrichmentConfig
  readonly bounds: typeof DEFAULT_BOUNDS
  readonly texts: NonNullable<EnrichmentConfig['texts']>
  readonly rels: NonNullable<EnrichmentConfig['relationships']>
  readonly captures: Capture[]
  readonly byRequest: Map<string, Asked | NotAsked>
  readonly facts: Fact[]
  readonly gaps: CoverageGap[]
  /** Entities and relationship values already followed: a cycle stops here (and is reported). */
  readonly followed: Set<string>
  readonly cycles: string[]
  reused: number
  relationships: number
  /** Set when a provider is unavailable: the run stops and fails. */
  unavailable: Failure | null
}

const startRun = (research: EnrichmentQueries, config: EnrichmentConfig): Run => ({
  research,
  config,
  bounds: {
    max_queries: config.max_queries ?? DEFAULT_BOUNDS.max_queries,
    max_depth: config.max_depth ?? DEFAULT_BOUNDS.max_depth,
    max_relationships: config.max_relationships ?? DEFAULT_BOUNDS.max_relationships,
    page_rows: config.page_rows ?? DEFAULT_BOUNDS.page_rows
  },
  texts: config.texts ?? [],
  rels: config.relationships ?? [],
  captures: [],
  byRequest: new Map(),
  facts: [],
  gaps: [],
  followed: new Set(),
  cycles: [],
  reused: 0,
  relationships: 0,
  unavailable: null
})

const describe = (w: Work): string =>
  w.kind === 'entity' ? `${w.ref.type} ${w.ref.id}` : `${w.rel.relation} = ${String(w.value)}`

/** False (and reported) when the work is deeper than max_depth or was followed before (a cycle). */
const admit = (run: Run, w: Work): boolean => {
  if (w.depth > run.bounds.max_depth) {
    run.gaps.push({ reason: 'max_depth', what: describe(w), detail: `deeper than max_depth ${run.bounds.max_depth}` })
    return false
  }
  const key =
    w.kind === 'entity' ? `entity|${w.ref.type}|${String(w.ref.id)}` : `rel|${w.rel.relation}|${String(w.value)}`
  if (run.followed.has(key)) {
    if (w.kind === 'follow')
      run.cycles.push(
        `${w.rel.relation} = ${String(w.value)} (from ${w.rel.from_table}.${w.rel.from_column}) was followed before`
      )
    return false
  }
  run.followed.add(key)
  return true
}

/** Records a question that got no capture as left out (unless a provider is unavailable: then the run stops). */
const leftOut = (run: Run, w: Work, got: NotAsked): void => {
  if (run.unavailable !== null) return
  run.gaps.push({ reason: got.code === 'MAX_QUERIES' ? 'max_queries' : 'refused', what: describe(w), ...failed(got) })
}

/** An input entity: its configured lookup's rows as facts (or a not_found fact), then its relationships. */
const lookUpEntity = async (run: Run, w: EntityWork, queue: Work[]): Promise<void> => {
  const lookup = run.config.entities[w.ref.type]
  if (lookup === undefined) {
    run.gaps.push({ reason: 'no_lookup_configured', what: describe(w) })
    return
  }
  const filters = [{ column: lookup.id_column, operator: 'eq', value: w.ref.id }]
  const got = await allRows(run, lookup.table, lookup.columns, filters, `${lookup.table} rows of ${describe(w)}`)
  if (isFailure(got)) return leftOut(run, w, got)
  const first = got.pages[0] as Asked
  if (got.rows.length === 0) {
    run.facts.push({
      fact_id: factId(run),
      type: 'not_found',
      table: lookup.table,
      column: lookup.id_column,
      value: w.ref.id,
      notice: `No row in ${lookup.table} for ${lookup.id_column} = ${w.ref.id}: a finding about this table only.`,
      provenance: { capture: first.digest, pointer: pointer('result', 'rows') }
    })
    return
  }
  for (const r of got.rows) entityFacts(run, w.ref.type, w.ref.id, lookup.table, r.row, r.digest, r.index, 'input')
  followFrom(run, lookup.table, got.rows, w.depth, queue)
}

/** Where a followed value came from: the row's table, column, id (when configured) and provenance. */
type Origin = {
  readonly table: string
  readonly column: string
  readonly id?: unknown
  readonly provenance: Provenance
}

/** A relationship from a returned value, within max_relationships. */
const follow = async (run: Run, w: FollowWork, queue: Work[]): Promise<void> => {
  if (run.relationships >= run.bounds.max_relationships) {
    run.gaps.push({
      reason: 'max_relationships',
      what: describe(w),
      detail: `more than max_relationships ${run.bounds.max_relationships}`
    })
    return
  }
  run.relationships++
  const rel = w.rel
  const origin: Origin = {
    table: rel.from_table,
    column: rel.from_column,
    ...(w.originId === undefined ? {} : { id: w.originId }),
    provenance: w.from
  }
  if (isSymbolRelationship(rel)) await followSymbol(run, w, rel, origin)
  else await followTable(run, w, rel, origin, queue)
}

/** A value that names a source symbol: one source.symbol search, as a source_symbol fact. */
const followSymbol = async (run: Run, w: FollowWork, rel: SymbolRelationship, origin: Origin): Promise<void> => {
  if (typeof w.value !== 'string' || !isIdentifier(w.value)) {
    run.gaps.push({ reason: 'not_an_identifier', what: describe(w) })
    return
  }
  const got = await ask(run, {
    kind: 'source.symbol',
    symbol: w.value,
    ...(rel.path_prefix === undefined ? {} : { path_prefix: rel.path_prefix })
  })
  if (isFailure(got)) return leftOut(run, w, got)
  notePartial(
    run,
    got,
    `source search for ${w.value}${rel.path_prefix === undefined ? '' : ` under ${rel.path_prefix}`}`,
    false
  )
  run.facts.push({
    fact_id: factId(run),
    type: 'source_symbol',
    relation: rel.relation,
    symbol: w.value,
    path_prefix: rel.path_prefix ?? null,
    hits: Number(got.capture.result['hit_count'] ?? 0),
    complete: partialMarkers(got.capture.result).length === 0,
    from: origin,
    provenance: { capture: got.digest, pointer: pointer('result', 'hits') }
  })
}

/** A value that references rows of another table: a relationship fact, entity facts when typed, then onwards. */
const followTable = async (
  run: Run,
  w: FollowWork,
  trel: TableRelationship,
  origin: Origin,
  queue: Work[]
): Promise<void> => {
  const filters = [{ column: trel.column, operator: 'eq', value: w.value }, ...(trel.filters ?? [])]
  const got = await allRows(
    run,
    trel.table,
    trel.columns ?? [trel.column],
    filters,
    `${trel.table} rows of ${describe(w)}`
  )
  if (isFailure(got)) return leftOut(run, w, got)
  const pages = got.pages.map((p) => ({ capture: p.digest, pointer: pointer('result', 'rows') }))
  run.facts.push({
    fact_id: factId(run),
    type: 'relationship',
    relation: trel.relation,
    from: { ...origin, value: w.value },
    to: {
      table: trel.table,
      column: trel.column,
      rows: got.rows.length,
      complete: got.complete,
      entity_type: trel.entity_type ?? null,
      provenance: pages[0] as Provenance,
      pages
    },
    notice: 'A configured reference between template rows; not an observed runtime object and not a cause.'
  })
  if (got.rows.length === 0) {
    run.facts.push({
      fact_id: factId(run),
      type: 'not_found',
      table: trel.table,
      column: trel.column,
      value: w.value,
      notice: `No row in ${trel.table} for ${trel.column} = ${String(w.value)}: a finding about this table only.`,
      provenance: pages[0] as Provenance
    })
    return
  }
  if (trel.entity_type !== undefined)
    for (const r of got.rows)
      entityFacts(
        run,
        trel.entity_type,
        w.value as number | string,
        trel.table,
        r.row,
        r.digest,
        r.index,
        'relationship'
      )
  followFrom(run, trel.table, got.rows, w.depth, queue)
}
