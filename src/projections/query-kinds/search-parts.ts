/**
 * What the four search kinds (source.search, source.symbol, source.registration, source.schema)
 * share: their prompt view (hits grouped by file), their report body and the MCP words on their
 * limits. Pure.
 */
import type { Capture } from '../../events/capture.js'
import { asArr, asRec, type Rec } from '../json-read.js'
import { esc, str as hstr } from '../report/html.js'
import { hitsByFile, limitsOf, markers } from '../report/capture-html.js'
import {
  alwaysRecheckable,
  defineQueryKind,
  type CaptureView,
  type QueryKindDefinition,
  type ToolFacts
} from './define.js'
import {
  counted,
  grouped,
  limitsText,
  memberNotes,
  missedText,
  notShown,
  num,
  numbered,
  origin,
  plural,
  scopeOf,
  skippedText,
  str,
  type Wording
} from './parts.js'
import { registrationLines } from '../prompt-v1/capture-text.js'

/** Hits grouped by file, the registration candidates and the markers. */
export const searchView = (c: Capture, r: Rec, w: Wording): CaptureView => {
  const hits = asArr(r['hits'])
  const width = Math.max(1, ...hits.map((h) => String(num(asRec(h)['line'])).length))
  const markers = [
    // the frozen v1 capture text's words, which the current one keeps
    ...registrationLines(c, r),
    ...skippedText(r['skipped']),
    ...limitsText(r['limits_reached']),
    ...missedText(r, r['term'])
  ]
  return {
    head: [
      `${c.kind} ${JSON.stringify(r['term'])} (${str(r['mode'])})${scopeOf(r)} @ ${origin(c)}: ${counted(w, r['hit_count'], 'hit')} in ${str(r['files_with_hits'])} of ${counted(w, r['files_scanned'], 'file')} scanned, ${str(r['result'])}`
    ],
    items: grouped(
      c,
      hits.map((h) => ({ path: str(asRec(h)['path']), lines: [numbered(width, num(asRec(h)['line']), h)] })),
      null
    ),
    tail: (shown) => [...notShown('hits', shown, hits.length), ...markers],
    unit: 'hits',
    summary: `${plural(r['hit_count'], 'hit')} in ${plural(r['files_with_hits'], 'file')}${r['complete'] === true ? '' : ', partial'}`
  }
}

/** The report body of a search: the counts, hits by file, candidates and markers. */
export const searchBody = (c: Capture, r: Rec): string => {
  const regs = asArr(r['registrations'])
  return `<p>${esc(`${plural(r['hit_count'], 'hit')} in ${hstr(r['files_with_hits'])} of ${plural(r['files_scanned'], 'file')} scanned (${hstr(r['mode'])}), ${hstr(r['result'])}`)}</p>${hitsByFile(c, asArr(r['hits']))}${regs.length > 0 ? `<p>registration candidates (not proof): ${regs.map((x) => esc(`${hstr(asRec(x)['name'])} at ${hstr(asRec(x)['path'])}:${hstr(asRec(x)['line'])}`)).join('; ')}</p>` : ''}${markers([...limitsOf(r), ...missedText(r, r['term'])])}`
}

/** What a search tool says about skipped files, its limits and its result. */
export const searchLimits = (f: ToolFacts): string =>
  `Skipped files (binary, over ${f.limits.max_file_bytes} bytes, symlinks, submodules) are listed; at most ${plural(f.limits.max_matches, 'hit')} and ${plural(f.limits.max_files, 'file')}. The result says hits_complete, hits_partial, no_hits_complete (absence within this commit and scope only, not in the running server) or no_hits_partial (a limit stopped it).`

type SearchKind = 'source.search' | 'source.symbol' | 'source.registration' | 'source.schema'

/** A search kind's definition: its own words (signature, request text, tool description), the rest shared. */
export const searchKind = <K extends SearchKind>(
  d: Pick<QueryKindDefinition<K>, 'kind' | 'signature' | 'requestText' | 'options'> & {
    readonly description: (f: ToolFacts) => string
  }
): QueryKindDefinition<K> =>
  defineQueryKind({
    kind: d.kind,
    needs: 'source',
    signature: d.signature,
    ...(d.options === undefined ? {} : { options: d.options }),
    requestText: d.requestText,
    view: searchView,
    reportBody: searchBody,
    tool: { description: d.description, notes: memberNotes },
    notRecheckable: alwaysRecheckable
  })
