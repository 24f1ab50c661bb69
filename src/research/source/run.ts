/** The source half of ProjectResearch: the executor of each kind, each with the query's time budget. */
import type { QueryOf, SourceQuery } from '../../domain/query.js'
import type { Capture } from '../../events/capture.js'
import type { SourceResearch } from './common.js'
import { sourceFiles } from './files.js'
import { sourceRegistration, sourceSearch } from './search.js'
import { sourceRead } from './read.js'
import { sourceContext } from './context.js'

type SourceKind = SourceQuery['kind']

/** The executor of each source kind (mapped: a source kind without one does not compile). */
const EXECUTORS: {
  readonly [K in SourceKind]: (r: SourceResearch, q: QueryOf<K>, deadline: number) => Promise<Capture>
} = {
  'source.files': sourceFiles,
  'source.search': sourceSearch,
  'source.symbol': sourceSearch,
  'source.schema': sourceSearch,
  'source.registration': sourceRegistration,
  'source.read': sourceRead,
  'source.context': sourceContext
}

export const runSourceQuery = (r: SourceResearch, q: SourceQuery): Promise<Capture> => {
  // the executor of q's own kind (the table's mapped type ties them; TypeScript cannot follow it through a union)
  const run = EXECUTORS[q.kind] as (r: SourceResearch, q: SourceQuery, deadline: number) => Promise<Capture>
  return run(r, q, r.now() + r.limits.time_ms)
}
