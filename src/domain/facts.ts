/** The facts of a prepared revision (the enrichment's output, stored as an object). Types only. */

/** Where a fact comes from: a capture (by digest) and a JSON pointer into it. */
export interface Provenance {
  readonly capture: string
  readonly pointer: string
}

export type Fact =
  | { readonly fact_id: string; readonly type: 'entity'; readonly entity_type: string; readonly id: number | string; readonly source: 'input' | 'relationship'; readonly table: string; readonly values: Readonly<Record<string, unknown>>; readonly texts: Readonly<Record<string, string>>; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'project_description'; readonly entity_type: string; readonly id: number | string; readonly column: string; readonly role: string; readonly text: string; readonly describes: 'template_text'; readonly notice: string; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'relationship'; readonly relation: string; readonly from: { readonly table: string; readonly column: string; readonly value: unknown; readonly id?: unknown; readonly provenance: Provenance }; readonly to: { readonly table: string; readonly column: string; readonly rows: number; readonly complete: boolean; readonly entity_type: string | null; readonly provenance: Provenance; readonly pages: readonly Provenance[] }; readonly notice: string }
  | { readonly fact_id: string; readonly type: 'source_symbol'; readonly relation: string; readonly symbol: string; readonly path_prefix: string | null; readonly hits: number; readonly complete: boolean; readonly from: { readonly table: string; readonly column: string; readonly id?: unknown; readonly provenance: Provenance }; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'not_found'; readonly table: string; readonly column: string; readonly value: unknown; readonly notice: string; readonly provenance: Provenance }
  | { readonly fact_id: string; readonly type: 'project_context_coverage'; readonly queries_run: number; readonly identical_queries_reused: number; readonly left_out: readonly CoverageGap[]; readonly cycles_cut: readonly string[]; readonly complete: boolean; readonly notice: string }

/** Something enrichment left out: what, how much (when known) and why. */
export interface CoverageGap {
  readonly reason: 'max_depth' | 'max_queries' | 'max_relationships' | 'no_lookup_configured' | 'not_an_identifier' | 'refused' | 'partial_answer' | 'rows_not_fetched'
  readonly what: string
  /** How many items (rows) were left out, when it is known. */
  readonly count?: number
  /** The failure code of a refused query, or the markers of a partial answer. */
  readonly code?: string
  readonly detail?: string
}
