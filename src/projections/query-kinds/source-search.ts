/** source.search: see the module comment of define.ts. Pure. */
import { textRequest } from './parts.js'
import { searchKind, searchLimits } from './search-parts.js'

export const sourceSearch = searchKind({
  kind: 'source.search',
  signature: 'source.search {text, path_prefix?}',
  options: 'ignore_case?, whole_number?',
  requestText: textRequest('source.search'),
  description: (f) =>
    `Literal, case-sensitive search of the text files of ${f.at}: hits as {path, line, text}. ${searchLimits(f)}`
})
