/**
 * Case preparation: the deterministic enrichment of a revision's entity references into facts
 * with provenance, before any model sees the case. It asks only ordinary project.query questions
 * (so every answer is a capture), follows only relationships the profile configures, and reports
 * everything it left out as `project_context_coverage`. It never calls a model and never diagnoses:
 * a referenced item is a reference, not an observed runtime object or a cause, and template texts
 * say what the template says, not what the server did.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../domain/failure.js'
import { isUnavailable } from '../domain/research-failures.js'
import { DEFAULT_BOUNDS, DEFAULT_IGNORED, isIgnored, pointer, type EnrichmentConfig, type EntityRef, type Relationship } from '../domain/enrichment-config.js'
import { isIdentifier } from '../domain/text-scan.js'
import type { Scalar } from '../domain/query.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { Capture } from '../events/capture.js'
import { captureBytes } from './capture.js'
import type { ProjectResearch } from './project-research.js'

/** Where a fact comes from: a capture (by digest) and a JSON pointer into it. */
export interface Provenance {
  readonly capture: string
  readonly pointer: string
}

export type Fact =
  | { readonly fact_id: string; readonly type: 'entity'; readonly entity_type: string; readonly id: number | string; readonly source: 'input' | 'relationship'; readonly table: string; readonly values: Readonly<Record<string, unknown>>; readonly texts: Readonly<Record<string, string>>; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'project_description'; readonly entity_type: string; readonly id: number | string; readonly column: string; readonly role: string; readonly text: string; readonly describes: 'template_text'; readonly notice: string; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'relationship'; readonly relation: string; readonly from: { readonly table: string; readonly column: string; readonly value: unknown; readonly provenance: Provenance }; readonly to: { readonly table: string; readonly column: string; readonly rows: number; readonly entity_type: string | null; readonly provenance: Provenance }; readonly notice: string }
  | { readonly fact_id: string; readonly type: 'source_symbol'; readonly relation: string; readonly symbol: string; readonly hits: number; readonly complete: boolean; readonly from: { readonly table: string; readonly column: string; readonly provenance: Provenance }; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'not_found'; readonly table: string; readonly column: string; readonly value: unknown; readonly notice: string; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'project_context_coverage'; readonly queries_run: number; readonly identical_queries_reused: number; readonly left_out: readonly CoverageGap[]; readonly cycles_cut: readonly string[]; readonly complete: boolean; readonly notice: string }

export interface CoverageGap {
  readonly reason: 'max_depth' | 'max_queries' | 'max_relationships' | 'no_lookup_configured' | 'not_an_identifier' | 'refused'
  readonly what: string
  readonly code?: string
}

export interface EnrichmentResult {
  /** Unique captures in the order they were first made. */
  readonly captures: readonly Capture[]
  readonly facts: readonly Fact[]
  readonly complete: boolean
}

type Work =
  | { readonly kind: 'entity'; readonly ref: EntityRef; readonly depth: number }
  | { readonly kind: 'follow'; readonly rel: Relationship; readonly value: Scalar; readonly depth: number; readonly from: Provenance }

/** Runs the configured enrichment for `entities`. Left only when a provider is unavailable. */
export const enrich = async (research: ProjectResearch, config: EnrichmentConfig, entities: readonly EntityRef[]): Promise<E.Either<Failure, EnrichmentResult>> => {
  const bounds = { ...DEFAULT_BOUNDS, ...pickNumbers(config) }
  const captures: Capture[] = []
  const byRequest = new Map<string, { capture: Capture; digest: string } | Failure>()
  const facts: Fact[] = []
  const gaps: CoverageGap[] = []
  let reused = 0
  let relationships = 0
  /** Entities and relationship values already followed: a cycle stops here (and is reported). */
  const followed = new Set<string>()
  const cycles: string[] = []
  const factId = (): string => `F${facts.length + 1}`
  const texts = config.texts ?? []
  const rels = config.relationships ?? []

  /** Asks once per identical request; later asks reuse the same capture. */
  const ask = async (request: Record<string, unknown>): Promise<{ capture: Capture; digest: string } | Failure> => {
    const key = canonicalJson(request)
    const k = E.isRight(key) ? key.right : JSON.stringify(request)
    const known = byRequest.get(k)
    if (known !== undefined) {
      reused++
      return known
    }
    if (captures.length >= bounds.max_queries) {
      const f: Failure = { _tag: 'Failure', code: 'MAX_QUERIES', message: 'max_queries reached', data: {} }
      return f
    }
    const r = await research.query(request)()
    const out = E.isLeft(r) ? r.left : { capture: r.right, digest: sha256Digest(captureBytes(r.right)) }
    if (E.isRight(r)) captures.push(r.right)
    byRequest.set(k, out)
    return out
  }
  const isFailure = (x: { capture: Capture; digest: string } | Failure): x is Failure => (x as Failure)._tag === 'Failure'

  /** Follow-ups of the relationships that start at `table`, from each row of a capture. */
  const followFrom = (table: string, rows: ReadonlyArray<Record<string, unknown>>, digest: string, depth: number, queue: Work[]): void => {
    rows.forEach((row, i) => {
      for (const rel of rels.filter((r) => r.from_table === table)) {
        if (rel.when_column !== undefined && row[rel.when_column] !== rel.when_value) continue
        const value = row[rel.from_column]
        if (value === undefined || (typeof value === 'object' && value !== null)) continue
        if (isIgnored(value, rel.ignore_values ?? config.ignore_values ?? DEFAULT_IGNORED)) continue
        queue.push({ kind: 'follow', rel, value: value as Scalar, depth: depth + 1, from: { capture: digest, pointer: pointer('result', 'rows', i, rel.from_column) } })
      }
    })
  }

  const queue: Work[] = entities.map((ref) => ({ kind: 'entity', ref, depth: 0 }))
  while (queue.length > 0) {
    const w = queue.shift() as Work
    if (w.depth > bounds.max_depth) {
      gaps.push({ reason: 'max_depth', what: w.kind === 'entity' ? `${w.ref.type} ${w.ref.id}` : `${w.rel.relation} = ${String(w.value)}` })
      continue
    }
    const key = w.kind === 'entity' ? `entity|${w.ref.type}|${String(w.ref.id)}` : `rel|${w.rel.relation}|${String(w.value)}`
    if (followed.has(key)) {
      if (w.kind === 'follow') cycles.push(`${w.rel.relation} = ${String(w.value)} (from ${w.rel.from_table}.${w.rel.from_column}) was followed before`)
      continue
    }
    followed.add(key)
    if (w.kind === 'entity') {
      const lookup = config.entities[w.ref.type]
      if (lookup === undefined) {
        gaps.push({ reason: 'no_lookup_configured', what: `${w.ref.type} ${w.ref.id}` })
        continue
      }
      const got = await ask({ kind: 'database.rows', table: lookup.table, columns: lookup.columns, filters: [{ column: lookup.id_column, operator: 'eq', value: w.ref.id }], offset: 0, limit: 5 })
      if (isFailure(got)) {
        if (isUnavailable(got)) return E.left(got)
        gaps.push({ reason: got.code === 'MAX_QUERIES' ? 'max_queries' : 'refused', what: `${w.ref.type} ${w.ref.id}`, code: got.code })
        continue
      }
      const rows = (got.capture.result['rows'] ?? []) as Array<Record<string, unknown>>
      if (rows.length === 0) {
        facts.push({ fact_id: factId(), type: 'not_found', table: lookup.table, column: lookup.id_column, value: w.ref.id, notice: `No row in ${lookup.table} for ${lookup.id_column} = ${w.ref.id}: a finding about this table only.`, provenance: { capture: got.digest, pointer: pointer('result', 'rows') } })
        continue
      }
      rows.forEach((row, i) => entityFacts(w.ref.type, w.ref.id, lookup.table, row, got.digest, i, 'input'))
      followFrom(lookup.table, rows, got.digest, w.depth, queue)
      continue
    }
    // A relationship from a returned value.
    if (relationships >= bounds.max_relationships) {
      gaps.push({ reason: 'max_relationships', what: `${w.rel.relation} = ${String(w.value)}` })
      continue
    }
    relationships++
    if (w.rel.source_symbol === true) {
      if (typeof w.value !== 'string' || !isIdentifier(w.value)) {
        gaps.push({ reason: 'not_an_identifier', what: `${w.rel.relation} = ${String(w.value)}` })
        continue
      }
      const got = await ask({ kind: 'source.symbol', symbol: w.value })
      if (isFailure(got)) {
        if (isUnavailable(got)) return E.left(got)
        gaps.push({ reason: got.code === 'MAX_QUERIES' ? 'max_queries' : 'refused', what: `${w.rel.relation} = ${w.value}`, code: got.code })
        continue
      }
      facts.push({ fact_id: factId(), type: 'source_symbol', relation: w.rel.relation, symbol: w.value, hits: Number(got.capture.result['hit_count'] ?? 0), complete: got.capture.result['complete'] === true, from: { table: w.rel.from_table, column: w.rel.from_column, provenance: w.from }, provenance: { capture: got.digest, pointer: pointer('result', 'hits') } })
      continue
    }
    if (w.rel.table === undefined || w.rel.column === undefined) continue
    const columns = w.rel.columns ?? [w.rel.column]
    const got = await ask({ kind: 'database.rows', table: w.rel.table, columns, filters: [{ column: w.rel.column, operator: 'eq', value: w.value }, ...(w.rel.filters ?? [])], offset: 0, limit: 20 })
    if (isFailure(got)) {
      if (isUnavailable(got)) return E.left(got)
      gaps.push({ reason: got.code === 'MAX_QUERIES' ? 'max_queries' : 'refused', what: `${w.rel.relation} = ${String(w.value)}`, code: got.code })
      continue
    }
    const rows = (got.capture.result['rows'] ?? []) as Array<Record<string, unknown>>
    facts.push({
      fact_id: factId(),
      type: 'relationship',
      relation: w.rel.relation,
      from: { table: w.rel.from_table, column: w.rel.from_column, value: w.value, provenance: w.from },
      to: { table: w.rel.table, column: w.rel.column, rows: rows.length, entity_type: w.rel.entity_type ?? null, provenance: { capture: got.digest, pointer: pointer('result', 'rows') } },
      notice: 'A configured reference between template rows; not an observed runtime object and not a cause.'
    })
    if (rows.length === 0) {
      facts.push({ fact_id: factId(), type: 'not_found', table: w.rel.table, column: w.rel.column, value: w.value, notice: `No row in ${w.rel.table} for ${w.rel.column} = ${String(w.value)}: a finding about this table only.`, provenance: { capture: got.digest, pointer: pointer('result', 'rows') } })
      continue
    }
    if (w.rel.entity_type !== undefined) rows.forEach((row, i) => entityFacts(w.rel.entity_type ?? '', w.value as number | string, w.rel.table ?? '', row, got.digest, i, 'relationship'))
    followFrom(w.rel.table, rows, got.digest, w.depth, queue)
  }
  const complete = gaps.length === 0
  facts.push({
    fact_id: factId(),
    type: 'project_context_coverage',
    queries_run: captures.length,
    identical_queries_reused: reused,
    left_out: gaps,
    cycles_cut: cycles,
    complete,
    notice: complete
      ? 'The configured enrichment ran without leaving anything out. It is context, not a complete investigation.'
      : 'The configured enrichment left out what is listed; it is partial context, not a complete investigation.'
  })
  return E.right({ captures, facts, complete })

  function entityFacts(entityType: string, id: number | string, table: string, row: Record<string, unknown>, digest: string, index: number, source: 'input' | 'relationship'): void {
    const textRefs: Record<string, string> = {}
    const values: Record<string, unknown> = {}
    const entityId = factId()
    // Reserve the entity's fact id first, then add its texts right after it.
    const textFacts: Fact[] = []
    for (const [column, value] of Object.entries(row)) {
      const text = texts.find((t) => t.table === table && t.column === column)
      if (text !== undefined && typeof value === 'string' && value !== '') {
        const id2 = `F${facts.length + 2 + textFacts.length}`
        textFacts.push({ fact_id: id2, type: 'project_description', entity_type: entityType, id, column, role: text.role, text: value, describes: 'template_text', notice: 'What the template says, not what the server did.', provenance: { capture: digest, pointer: pointer('result', 'rows', index, column) } })
        textRefs[column] = id2
      } else values[column] = value
    }
    facts.push({ fact_id: entityId, type: 'entity', entity_type: entityType, id, source, table, values, texts: textRefs, provenance: { capture: digest, pointer: pointer('result', 'rows', index) } })
    facts.push(...textFacts)
  }
}

const pickNumbers = (c: EnrichmentConfig): Partial<typeof DEFAULT_BOUNDS> => ({
  ...(c.max_queries === undefined ? {} : { max_queries: c.max_queries }),
  ...(c.max_depth === undefined ? {} : { max_depth: c.max_depth }),
  ...(c.max_relationships === undefined ? {} : { max_relationships: c.max_relationships })
})
