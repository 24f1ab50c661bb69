/** source.search: see the module comment of define.ts. Pure. */
import { requestScope } from './parts.js'
import { searchKind, searchLimits } from './search-parts.js'

export const sourceSearch = searchKind({
  kind: 'source.search',
  signature: 'source.search {text, path_prefix?}',
  options: 'ignore_case?, whole_number?',
  requestText: (request) => `source.search ${JSON.stringify(request['text'])}${requestScope(request)}`,
  description: (f) =>
    `Literal, case-sensitive search of the text files of ${f.at}: hits as {path, line, text}. ${searchLimits(f)}`
})
