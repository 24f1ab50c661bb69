/** source.symbol: see the module comment of define.ts. Pure. */
import { symbolRequest } from './parts.js'
import { searchKind, searchLimits } from './search-parts.js'

export const sourceSymbol = searchKind({
  kind: 'source.symbol',
  signature: 'source.symbol {symbol, path_prefix?}',
  options: 'ignore_case?',
  requestText: symbolRequest('source.symbol'),
  description: (f) => `Whole-word hits of an identifier in ${f.at}. ${searchLimits(f)}`
})
