/**
 * Parts the query kinds' definitions share: reading a capture's fields, numbering source lines,
 * grouping items under their file, the markers of limits and skips, a request's scope, and the
 * notes of the MCP tools' members. Pure.
 */
import type { Capture } from '../../events/capture.js'
import { asArr, asRec, type Rec } from '../json-read.js'
import type { CaptureItem, CaptureView, ToolFacts } from './define.js'

export const str = (u: unknown): string => (typeof u === 'string' ? u : String(u))
export const num = (u: unknown): number => (typeof u === 'number' ? u : Number(u))
export const short = (hex: unknown): string => str(hex).slice(0, 12)

/** Where the answer came from: the commit, or the database and its snapshot. */
export const origin = (c: Capture): string =>
  c.origin.type === 'git' ? `commit ${short(c.origin.commit)}` : `${c.origin.database} snapshot ${c.origin.snapshot_id}`

const blobOf = (c: Capture, path: string): string => {
  if (c.origin.type !== 'git') return ''
  const f = c.origin.files.find((x) => x.path === path)
  return f === undefined ? '' : ` (blob ${short(f.blob)})`
}

/** A source line, numbered, with its cut marker. */
export const numbered = (width: number, line: number, text: unknown, mark = ''): string => {
  const r = asRec(text)
  const t = typeof text === 'string' ? text : str(r['text'])
  const cut = r['text_truncated'] === true ? ` [line cut at ${t.length} of ${str(r['length'])} characters]` : ''
  return `${mark}${String(line).padStart(width)}| ${t}${cut}`
}

export const skippedText = (s: unknown): string[] => {
  const counts = Object.entries(asRec(asRec(s)['counts']))
  return counts.length === 0 ? [] : [`skipped: ${counts.map(([k, n]) => `${k} ${str(n)}`).join(', ')}`]
}

export const limitsText = (l: unknown): string[] => {
  const names = asArr(l).map(str)
  return names.length === 0 ? [] : [`limits reached: ${names.join(', ')} (the answer is partial)`]
}

/** A search's options in words (` in any case`, ` as a whole number`), from a request or a result. */
const optionsText = (x: Rec): string =>
  `${x['ignore_case'] === true ? ' in any case' : ''}${x['whole_number'] === true ? ' as a whole number' : ''}`

/** A result's scope (` under <path_prefix>`) and its options. */
export const scopeOf = (r: Rec): string =>
  `${typeof asRec(r['scope'])['path_prefix'] === 'string' ? ` under ${str(asRec(r['scope'])['path_prefix'])}` : ''}${optionsText(r)}`

/** A request's scope (` under <path_prefix>`) and its options. */
export const requestScope = (request: Rec): string =>
  `${typeof request['path_prefix'] === 'string' ? ` under ${request['path_prefix']}` : ''}${optionsText(request)}`

/** The request text of a kind asked by its text: the kind, the text JSON-quoted, the scope and options. */
export const textRequest =
  (kind: string) =>
  (request: Rec): string =>
    `${kind} ${JSON.stringify(request['text'])}${requestScope(request)}`

/** The request text of a kind asked by a symbol: the kind, the symbol as it is, the scope and options. */
export const symbolRequest =
  (kind: string) =>
  (request: Rec): string =>
    `${kind} ${str(request['symbol'])}${requestScope(request)}`

/**
 * What a query with few hits missed (its `missed` member, missed.ts in research): lines holding the
 * term in another case or inside longer words, and their first files; never hits. Empty without it.
 */
export const missedText = (r: Rec, term: unknown): string[] => {
  const m = asRec(r['missed'])
  if (Object.keys(m).length === 0) return []
  const t = JSON.stringify(term)
  const scope = asRec(m['empty_scope'])
  if (Object.keys(scope).length > 0) {
    const nearest = asArr(scope['nearest']).map(str)
    return [
      `missed: path_prefix ${JSON.stringify(str(scope['path_prefix']))} holds no file at this commit, so nothing was searched (the result says nothing about ${t}); ${nearest.length === 0 ? 'no folder of the commit holds it' : `folders that hold it: ${nearest.join(', ')}`}`
    ]
  }
  const partial = m['complete'] === true ? '' : m['timed_out'] === true ? ' (partial: out of time)' : ' (partial)'
  const files = asArr(m['files'] ?? m['paths']).map(str)
  const more = num(m['file_count'] ?? m['other_case_paths']) - files.length
  const where = `${files.join(', ')}${more > 0 ? ` and ${more} more` : ''}`
  if (m['other_case_paths'] !== undefined)
    return num(m['other_case_paths']) === 0
      ? [`missed: no path holds ${t} in another case either${partial}`]
      : [
          `missed (not listed): ${plural(m['other_case_paths'], 'path')} hold ${t} in another case: ${where}; ignore_case: true lists them${partial}`
        ]
  const other = num(m['other_case_lines'])
  const inside = num(m['inside_word_lines'])
  if (other + inside === 0)
    return [`missed: no line holds ${t} in another case or inside a longer word either${partial}`]
  const parts = [
    ...(other > 0 ? [`${plural(other, 'line')} in another case`] : []),
    ...(inside > 0 ? [`${plural(inside, 'line')} inside longer words or numbers`] : [])
  ]
  return [
    `missed (not hits): ${t} in ${parts.join(', ')}, in ${plural(m['file_count'], 'file')}: ${where}${other > 0 ? '; ignore_case: true finds them' : ''}${partial}`
  ]
}

/** A database request's `database.` prefix, or empty. */
export const databasePrefix = (request: Rec): string =>
  typeof request['database'] === 'string' ? `${request['database']}.` : ''

/** The plural of a noun: `hits`, `searches`, `queries`. */
const pluralNoun = (word: string): string =>
  /[^aeiou]y$/.test(word) ? `${word.slice(0, -1)}ies` : `${word}${/(?:s|sh|ch|x)$/.test(word) ? 'es' : 's'}`

/** `1 hit`, `2 hits`, `4 searches`, `3 queries`: a count with its noun. */
export const plural = (n: unknown, word: string): string => `${str(n)} ${num(n) === 1 ? word : pluralNoun(word)}`

/**
 * How a capture view words its counts: `exact` agrees a count with its noun (`1 path matches`,
 * `1 hit`), as every text outside a recorded prompt does and the v2 prompts of starts that record
 * `exact_wording`; `legacy` words them as the v2 prompts of earlier starts were recorded
 * (`1 paths match`, `1 hits`), so those render byte for byte again.
 */
export type Wording = 'exact' | 'legacy'

/** A count with its noun in the view's wording: {@link plural}, or (`legacy`) the plural noun whatever the count. */
export const counted = (w: Wording, n: unknown, word: string): string =>
  w === 'exact' ? plural(n, word) : `${str(n)} ${pluralNoun(word)}`

export const one = (lines: readonly string[]): CaptureItem => ({ lines })

/** Items grouped under a header line per file: the header travels with the first item of its file. */
export const grouped = (
  c: Capture,
  entries: ReadonlyArray<{ path: string; lines: readonly string[] }>,
  separator: string | null
): CaptureItem[] => {
  let current: string | null = null
  return entries.map((e) => {
    const first = e.path !== current
    current = e.path
    return one(
      first ? [`${e.path}${blobOf(c, e.path)}:`, ...e.lines] : separator === null ? e.lines : [separator, ...e.lines]
    )
  })
}

export const notShown = (unit: string, shown: number, total: number): string[] =>
  shown >= total
    ? []
    : [`[prompt limit: ${unit} ${shown + 1}-${total} of this answer are not shown; the case holds them]`]

/** A view without items: a head line and fixed markers. */
export const flat = (head: string, tail: readonly string[], summary: string): CaptureView => ({
  head: [head],
  items: [],
  tail: () => tail,
  unit: 'items',
  summary
})

/** The ordering of a page (`column direction, …`). */
export const orderText = (order: unknown): string =>
  asArr(order)
    .map((o) => `${str(asRec(o)['column'])} ${str(asRec(o)['direction'])}`)
    .join(', ')

/** The notes on the members of a query's request, as its MCP tool shows them. */
export const memberNotes = (f: ToolFacts): Record<string, string> => {
  const l = f.limits
  return {
    text: 'the literal text to find, case-sensitive unless ignore_case (no regular expressions)',
    ignore_case: 'true: ASCII letters match in either case (the default is the exact case)',
    whole_number:
      'true: the text matches only where no digit (nor a decimal point and a digit) adjoins it, so 52307 does not match inside 6.2052307 or 152307',
    path_prefix: 'only files under this directory, relative to the repository root (e.g. src/server/scripts/)',
    symbol: 'an identifier, matched as a whole word',
    path: 'a file path relative to the repository root (source_files finds paths)',
    start_line: 'the first line to read (1-based)',
    end_line: `the last line to read (inclusive); at most ${l.max_lines} lines come back per call, the answer says where to continue`,
    table: `the name of an allowed table alone, without its database (name that as database; database_schema gives its columns): ${f.allowlist}`,
    database: `one of the configured databases: ${f.databases.join(', ')}`,
    columns: `the columns to return, at most ${l.max_columns}`,
    filters: `conditions joined with AND, at most ${l.max_filters}: {column, operator, value}; operators eq, ne (a null value means IS NULL / IS NOT NULL), lt, le, gt, ge, contains (% and _ are literal), in (a list of at most ${l.max_in_values} values)`,
    offset: 'rows to skip: 0 for the first page, then the next_offset of the previous answer',
    limit: `rows wanted; at most ${l.max_rows} come back per page`,
    order_by: 'sort order; the primary key is added after it, so pages never overlap or skip rows'
  }
}
