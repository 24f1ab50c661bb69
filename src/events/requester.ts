/** Who asked, as a program names itself (an MCP client). */
import * as t from 'io-ts'
import { patternString } from './codecs.js'

/**
 * Who asked for an operator's query (or decided an agent's turn), in the words of the program that asked: an MCP client by the
 * name and version it gave when it connected (its own claim, recorded as such; at most 128
 * characters each, no control characters).
 * @category research
 */
export const Requester = t.type(
  {
    protocol: t.literal('mcp'),
    name: patternString('RequesterName', /^[^\u0000-\u001f\u007f]{1,128}$/),
    version: patternString('RequesterVersion', /^[^\u0000-\u001f\u007f]{0,128}$/)
  },
  'Requester'
)
export type Requester = t.TypeOf<typeof Requester>
