/**
 * A capture rendered for people: the report body its query kind defines
 * (src/projections/query-kinds), and the program that asked for it.
 */
import type { Capture } from '../../events/capture.js'
import type { Requester } from '../../events/catalog.js'
import { QUERY_KIND_DEFINITIONS } from '../query-kinds/catalog.js'
import { esc } from './html.js'

export { valueCell } from './capture-html.js'

/** The body of a capture in the report. */
export const captureBody = (c: Capture): string => QUERY_KIND_DEFINITIONS[c.kind].reportBody(c, c.result)

/** An MCP client as it named itself when it connected (its own claim). */
export const requesterText = (r: Requester): string =>
  `${esc(r.protocol.toUpperCase())} client <span class="mono requester">${esc(r.name)}${r.version === '' ? '' : ` ${esc(r.version)}`}</span>`
