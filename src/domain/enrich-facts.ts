/**
 * The facts an enrichment run derives from the rows it gathered: an entity fact per row, a
 * description fact per configured text column right after it, and the follow-ups of the
 * relationships that start at a row's table.
 */
import { DEFAULT_IGNORED, isIgnored, pointer } from './enrichment-config.js'
import type { Scalar } from './query.js'
import type { Fact } from './facts-document.js'
import type { RowSet, Run, Work } from './enrich.js'

/** The next fact id of a run. */
export const factId = (run: Run): string => `F${run.facts.length + 1}`

/** Follow-ups of the relationships that start at `table`, from each row gathered. */
export const followFrom = (run: Run, table: string, rows: RowSet['rows'], depth: number, queue: Work[]): void => {
  for (const { row, digest, index } of rows) {
    for (const rel of run.rels.filter((r) => r.from_table === table)) {
      if (rel.when_column !== undefined && row[rel.when_column] !== rel.when_value) continue
      const value = row[rel.from_column]
      if (value === undefined || (typeof value === 'object' && value !== null)) continue
      if (isIgnored(value, rel.ignore_values ?? run.config.ignore_values ?? DEFAULT_IGNORED)) continue
      const originId = rel.from_id_column === undefined ? undefined : row[rel.from_id_column]
      queue.push({
        kind: 'follow',
        rel,
        value: value as Scalar,
        originId,
        depth: depth + 1,
        from: { capture: digest, pointer: pointer('result', 'rows', index, rel.from_column) }
      })
    }
  }
}

/** An entity fact for one row, with a description fact right after it for each configured text column. */
export const entityFacts = (
  run: Run,
  entityType: string,
  id: number | string,
  table: string,
  row: Record<string, unknown>,
  digest: string,
  index: number,
  source: 'input' | 'relationship'
): void => {
  const textRefs: Record<string, string> = {}
  const values: Record<string, unknown> = {}
  const entityId = factId(run)
  // Reserve the entity's fact id first, then add its texts right after it.
  const textFacts: Fact[] = []
  for (const [column, value] of Object.entries(row)) {
    const text = run.texts.find((t) => t.table === table && t.column === column)
    if (text !== undefined && typeof value === 'string' && value !== '') {
      const id2 = `F${run.facts.length + 2 + textFacts.length}`
      textFacts.push({
        fact_id: id2,
        type: 'project_description',
        entity_type: entityType,
        id,
        column,
        role: text.role,
        text: value,
        describes: 'template_text',
        notice: 'What the template says, not what the server did.',
        provenance: { capture: digest, pointer: pointer('result', 'rows', index, column) }
      })
      textRefs[column] = id2
    } else values[column] = value
  }
  run.facts.push({
    fact_id: entityId,
    type: 'entity',
    entity_type: entityType,
    id,
    source,
    table,
    values,
    texts: textRefs,
    provenance: { capture: digest, pointer: pointer('result', 'rows', index) }
  })
  run.facts.push(...textFacts)
}
