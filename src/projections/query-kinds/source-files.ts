/** source.files: see the module comment of define.ts. Pure. */
import { asArr, asRec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { markers } from '../report/capture-html.js'
import { alwaysRecheckable, defineQueryKind } from './define.js'
import {
  counted,
  memberNotes,
  missedText,
  notShown,
  one,
  origin,
  plural,
  scopeOf,
  str,
  textRequest,
  type Wording
} from './parts.js'

/** `1 path matches`, `3 paths match` (`1 paths match` in the legacy wording). */
const matchText = (n: unknown, w: Wording = 'exact'): string =>
  `${counted(w, n, 'path')} match${w === 'exact' && str(n) === '1' ? 'es' : ''}`

export const sourceFiles = defineQueryKind({
  kind: 'source.files',
  needs: 'source',
  signature: 'source.files {text, path_prefix?}',
  options: 'ignore_case?',
  requestText: textRequest('source.files'),
  view: (c, r, w) => {
    const files = asArr(r['files'])
    return {
      head: [
        `source.files ${JSON.stringify(r['text'])}${scopeOf(r)} @ ${origin(c)}: ${matchText(r['match_count'], w)}`
      ],
      items: files.map((f) =>
        one([`  ${str(asRec(f)['path'])}${asRec(f)['kind'] === 'blob' ? '' : ` (${str(asRec(f)['kind'])})`}`])
      ),
      tail: (shown) => [
        ...notShown('paths', shown, files.length),
        ...(r['truncated'] === true
          ? [`truncated: the first ${files.length} of ${str(r['match_count'])} paths are listed (file limit reached)`]
          : []),
        ...missedText(r, r['text'])
      ],
      unit: 'paths',
      summary: counted(w, r['match_count'], 'path')
    }
  },
  reportBody: (_c, r) => {
    const files = asArr(r['files'])
    return `<p>${esc(matchText(r['match_count']))}</p><ul class="mono">${files.map((f) => `<li>${esc(hstr(asRec(f)['path']))}</li>`).join('')}</ul>${r['truncated'] === true ? markers([`truncated: the first ${files.length} of ${hstr(r['match_count'])} paths are listed`]) : ''}${markers(missedText(r, r['text']))}`
  },
  tool: {
    description: (f) =>
      `Paths in ${f.at} that contain text (tree entries: blobs, symlinks, submodules), at most ${plural(f.limits.max_files, 'path')}; truncated says when more match. Shows what exists in the repository at that commit, not what a server loads.`,
    notes: (f) => ({ ...memberNotes(f), text: 'part of a path, literal and case-sensitive' })
  },
  notRecheckable: alwaysRecheckable
})
