/** source.registration: see the module comment of define.ts. Pure. */
import { symbolRequest } from './parts.js'
import { searchKind, searchLimits } from './search-parts.js'

export const sourceRegistration = searchKind({
  kind: 'source.registration',
  signature: 'source.registration {symbol, path_prefix?}',
  options: 'ignore_case?',
  requestText: symbolRequest('source.registration'),
  description: (f) =>
    `Whole-word hits of a symbol in ${f.at}, plus the registration functions (prefixes ${f.analysis.registration_prefixes.join(', ')}) of the matching files: candidates for where a script is registered, not proof that it is loaded. ${searchLimits(f)}`
})
