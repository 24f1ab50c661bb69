/**
 * Requests as text: a request in one line, as its query kind writes it (src/projections/query-kinds),
 * and database values and filters exactly (values-text.ts). Shared by the prompt's capture text and
 * the case report. Pure.
 */
import type { Rec } from './json-read.js'
import { QUERY_KIND_DEFINITIONS } from './query-kinds/catalog.js'

export { cell, where } from './values-text.js'

/** A request in one line (the evidence index shows it without the payload). */
export const requestText = (kind: string, request: Rec): string => {
  const definition = Object.hasOwn(QUERY_KIND_DEFINITIONS, kind)
    ? QUERY_KIND_DEFINITIONS[kind as keyof typeof QUERY_KIND_DEFINITIONS]
    : undefined
  return definition === undefined ? `${kind} ${JSON.stringify(request)}` : definition.requestText(request)
}
