/**
 * Whether a capture's result left something out, read from the markers every result carries
 * (truncated, has_more, complete, limits_reached, byte_limit_reached, completeness). Enrichment
 * uses it to say what its coverage left out; the rules use it to refuse a coverage that claims
 * completeness over a partial answer. Pure: the result is plain JSON.
 */

/** The markers of `result` that say it is partial, in words (empty when nothing was left out). */
export const partialMarkers = (result: Readonly<Record<string, unknown>>): string[] => {
  const out: string[] = []
  if (result['truncated'] === true) out.push('truncated')
  if (result['has_more'] === true) out.push(`has_more (next_offset ${String(result['next_offset'])})`)
  if (result['byte_limit_reached'] === true) out.push('byte_limit_reached')
  if (result['complete'] === false) out.push('complete=false')
  if (result['completeness'] === 'partial_configured_source_context') out.push('partial_configured_source_context')
  const limits = result['limits_reached']
  if (Array.isArray(limits) && limits.length > 0) out.push(`limits_reached: ${limits.map(String).join(', ')}`)
  return out
}

/**
 * A database.rows request that continues `request` at `offset` (same table, columns, filters,
 * order, limit): the page that covers a `has_more` answer.
 */
export const continuationOf = (
  request: Readonly<Record<string, unknown>>,
  offset: number
): Record<string, unknown> => ({ ...request, offset })
