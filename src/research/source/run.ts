/** The source half of ProjectResearch: dispatch by kind, each with the query's time budget. */
import type { SourceQuery } from '../../domain/query.js'
import type { Capture } from '../../events/capture.js'
import type { SourceResearch } from './common.js'
import { sourceFiles } from './files.js'
import { sourceRegistration, sourceSearch } from './search.js'
import { sourceRead } from './read.js'
import { sourceContext } from './context.js'

export const runSourceQuery = (r: SourceResearch, q: SourceQuery): Promise<Capture> => {
  const deadline = r.now() + r.limits.time_ms
  switch (q.kind) {
    case 'source.files':
      return sourceFiles(r, q)
    case 'source.search':
    case 'source.symbol':
    case 'source.schema':
      return sourceSearch(r, q, deadline)
    case 'source.registration':
      return sourceRegistration(r, q, deadline)
    case 'source.read':
      return sourceRead(r, q)
    case 'source.context':
      return sourceContext(r, q, deadline)
    default: {
      const _never: never = q
      throw new TypeError(`unhandled query ${JSON.stringify(_never)}`)
    }
  }
}
