/**
 * FROZEN: the fact lines of prompt version investigation_project_v1, byte for byte as released
 * (they lived in investigation/loop.ts). Never edited: recorded v1 prompts are re-rendered from it.
 */
import type { Fact } from '../../domain/facts-document.js'

/** Compact lines of the facts document for the prompt. */
export const factLinesV1 = (facts: readonly Fact[]): string[] =>
  facts.map((f) => {
    switch (f.type) {
      case 'entity':
        return `  ${f.fact_id} ${f.entity_type} ${f.id} (${f.table}): ${JSON.stringify(f.values).slice(0, 200)}${
          Object.keys(f.texts).length > 0
            ? ` texts: ${Object.entries(f.texts)
                .map(([c, id]) => `${c}→${id}`)
                .join(', ')}`
            : ''
        }`
      case 'project_description':
        return `  ${f.fact_id} ${f.role} of ${f.entity_type} ${f.id} (${f.column}, template text): ${JSON.stringify(f.text.slice(0, 400))}`
      case 'relationship':
        return `  ${f.fact_id} ${f.relation}: ${f.from.table}.${f.from.column}=${JSON.stringify(f.from.value)}${f.from.id === undefined ? '' : ` (row ${JSON.stringify(f.from.id)})`} → ${f.to.table}.${f.to.column} (${f.to.rows} rows${f.to.complete ? '' : ', not all fetched'})`
      case 'source_symbol':
        return `  ${f.fact_id} ${f.relation}: symbol ${f.symbol} has ${f.hits} hits in the source${f.path_prefix === null ? '' : ` under ${f.path_prefix}`}${f.complete ? '' : ' (partial search)'}`
      case 'not_found':
        return `  ${f.fact_id} not found: ${f.table}.${f.column}=${JSON.stringify(f.value)} (about this table only)`
      case 'project_context_coverage':
        return `  ${f.fact_id} coverage: ${
          f.complete
            ? 'nothing left out'
            : `partial, left out: ${f.left_out
                .map(
                  (g) =>
                    `${g.what} (${g.reason}${g.count === undefined ? '' : `, ${g.count} more`}${g.detail === undefined ? '' : `: ${g.detail}`})`
                )
                .join('; ')
                .slice(0, 600)}`
        }`
      default:
        return ''
    }
  })
