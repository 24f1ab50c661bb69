/**
 * source.context: a bounded lexical chain around one term. (1) Search the term: an identifier as a
 * whole word, anything else as a fixed string; with no path_prefix, the code paths of the profile
 * (`code_path_prefixes`) are searched first, so data dumps cannot use up the matches. (2) Follow,
 * within max_searches: identifiers assigned from the term in a simple assignment
 * (`NPC_WILD_WOLPERTINGER = 23487`), searched in the assigning file first; then the functions with
 * the configured registration prefixes defined in the files of direct hits (where else they
 * appear: central loader files, whose other names are never followed). (3) Rank every hit and
 * candidate and give context windows in that order within max_files, max_blocks and
 * max_total_lines (domain/context-ranking.ts): direct hits first, then the alias in its own file,
 * registration functions, loader lines (one line each), and last the same name in other files (one
 * line each: another symbol, with its own value). Every hit and candidate is recorded, with why it
 * got no context.
 *
 * The result is context for a reader: it claims no call graph, no execution and no cause, and
 * equal numbers (or equal names) in different files are separate places that nothing here links.
 */
import { failure } from '../../failures/failure.js'
import type { SourceContext } from '../../domain/query.js'
import { checkSourcePath } from '../../domain/source-paths.js'
import { allocateContext, type ContextPlace, type ContextRole } from '../../domain/context-ranking.js'
import { assignedNames, assignedValue, cutLine, isIdentifier, registrationNames } from '../../domain/text-scan.js'
import type { Capture } from '../../events/capture.js'
import { FailureError } from '../../failures/error.js'
import { buildCapture } from '../capture.js'
import {
  bytesOf,
  gitOrigin,
  recordedAnalysis,
  reportSkipped,
  scan,
  sourceSettings,
  splitLines,
  type Hit,
  type SourceScanResult,
  type ScannedFile,
  type SourceResearch
} from './common.js'
import { must } from '../../failures/error.js'
import { optional } from '../../optional.js'
import { missedMatches, missedSettings } from './missed.js'

interface SearchRecord {
  readonly index: number
  readonly term: string
  readonly mode: 'word' | 'literal'
  readonly reason: 'term' | 'assignment' | 'registration'
  readonly from: { readonly path: string; readonly line: number } | null
  readonly result: SourceScanResult
  /** The files a follow-up is at home in: the assigning files of an alias, the direct-hit files of a registration. */
  readonly home: ReadonlySet<string>
}

interface Candidate {
  readonly kind: 'assignment' | 'registration' | 'same_name'
  readonly name: string
  readonly path: string
  readonly line: number
  /** What a same-named symbol in another file is assigned (its own value). */
  readonly value?: string
}

/** The role of a follow-up's hit: at home (the assigning file, a direct-hit file) or elsewhere. */
const roleOf = (s: SearchRecord, path: string): ContextRole => {
  if (s.reason === 'term') return 'term'
  if (s.reason === 'assignment') return s.home.has(path) ? 'alias' : 'same_name'
  return s.home.has(path) ? 'registration' : 'loader'
}

/** Answers source.context (see the module comment) with one capture. */
export const sourceContext = async (r: SourceResearch, q: SourceContext, deadline: number): Promise<Capture> => {
  const a = r.analysis
  if (!a.enabled)
    throw new FailureError(
      failure('SOURCE_CONTEXT_DISABLED', 'source.context is not enabled in [source_analysis] of the profile')
    )
  const prefix = q.path_prefix === undefined ? undefined : must(checkSourcePath('path_prefix', q.path_prefix))
  const ignoreCase = q.ignore_case === true
  const searches = contextSearches(r, prefix, deadline)
  const wholeNumber = a.whole_numbers && /^\d+$/.test(q.text)
  const first = await searches.run(q.text, 'term', null, new Set(), ignoreCase, wholeNumber)
  if (first === null)
    throw new FailureError(failure('CONFIG_INVALID', '[source_analysis].max_searches must be at least 1'))
  const candidates = await followUp(r, searches, q.text, first)
  // the term's missed matches, in the scope of its search and within a search's share of the bytes
  const missed = await missedMatches(r, {
    term: q.text,
    hits: first.result.hits,
    ignoreCase,
    whole: first.mode === 'word' || wholeNumber,
    ...optional('prefix', prefix),
    maxBytes: searches.share,
    deadline
  })
  const shown = contextWindows(r, searches, candidates)
  const { limitsReached, records } = searches
  const context = (path: string, line: number): { context_returned: boolean; no_context?: string } => {
    const why = shown.allocation.noContext({ path, line })
    return why === undefined ? { context_returned: true } : { context_returned: false, no_context: why }
  }
  const hitRecord = (s: SearchRecord, h: Hit): Record<string, unknown> => ({
    search: s.index,
    path: h.path,
    line: h.line,
    role: roleOf(s, h.path),
    ...context(h.path, h.line)
  })
  const complete = limitsReached.size === 0 && records.every((s) => s.result.complete)
  return must(
    buildCapture(
      'source.context',
      q,
      gitOrigin(r, shown.origins),
      sourceSettings(r, {
        source_analysis: recordedAnalysis(a),
        // beside source_analysis, which must equal the investigation's recorded source.context settings
        ...(a.whole_numbers ? { whole_numbers: true } : {}),
        ...missedSettings(r)
      }),
      {
        term: q.text,
        mode: first.mode,
        scope: {
          path_prefix: prefix ?? null,
          extensions: [...r.extensions].sort(),
          code_first: prefix === undefined && a.code_path_prefixes.length > 0 ? [...a.code_path_prefixes] : []
        },
        searches: records.map((s) => ({
          index: s.index,
          term: s.term,
          mode: s.mode,
          reason: s.reason,
          from: s.from,
          hit_count: s.result.hits.length,
          files_scanned: s.result.filesScanned,
          complete: s.result.complete,
          limits_reached: s.result.limitsReached,
          skipped: reportSkipped(s.result.skipped)
        })),
        hits: records.flatMap((s) => s.result.hits.map((h) => hitRecord(s, h))),
        candidates: candidates.map((c) => ({ ...c, ...context(c.path, c.line) })),
        files: shown.files.map((f) => f.path),
        blocks: shown.blocks,
        limits_reached: [...limitsReached].sort(),
        completeness: complete ? 'complete_configured_source_context' : 'partial_configured_source_context',
        ...(ignoreCase ? { ignore_case: true } : {}),
        ...(wholeNumber ? { whole_number: true } : {}),
        ...missed,
        notice:
          'Lexical context only: hits and candidates are places to read, not a verified call graph, an execution or a cause. Equal numbers or names in different files may name different things.'
      },
      r.limits.max_result_bytes
    )
  )
}

/** The searches of one query, and the limits any step of it reached. */
interface Searches {
  readonly records: SearchRecord[]
  readonly limitsReached: Set<string>
  /** 0 for code files (every file under a path_prefix), 1 for the rest: data dumps rank after code. */
  readonly codeRank: (path: string) => number
  /** Search bytes each search may scan. */
  readonly share: number
  /** Searches `term` (in any case with `ignoreCase`), the files of `home` first; null when max_searches is used up. */
  readonly run: (
    term: string,
    reason: SearchRecord['reason'],
    from: SearchRecord['from'],
    home: ReadonlySet<string>,
    ignoreCase?: boolean,
    wholeNumber?: boolean
  ) => Promise<SearchRecord | null>
}

const contextSearches = (r: SourceResearch, prefix: string | undefined, deadline: number): Searches => {
  const a = r.analysis
  // With no path_prefix, code comes first: data dumps rank after it (in the scans and the context).
  const codeRank = (path: string): number =>
    prefix !== undefined || a.code_path_prefixes.length === 0 || a.code_path_prefixes.some((c) => path.startsWith(c))
      ? 0
      : 1
  const limitsReached = new Set<string>()
  // Internal searches share the query's search bytes: each gets an equal, bounded part.
  const share = Math.floor(r.limits.max_search_bytes / Math.max(1, a.max_searches))
  const records: SearchRecord[] = []
  const run: Searches['run'] = async (term, reason, from, home, ignoreCase = false, wholeNumber = false) => {
    if (records.length >= a.max_searches) {
      limitsReached.add('searches')
      return null
    }
    const mode = isIdentifier(term) ? 'word' : 'literal'
    const rank = (path: string): number => (home.has(path) ? -1 : codeRank(path))
    const result = await scan(r, {
      ...optional('prefix', prefix),
      needle: term,
      wholeWord: mode === 'word',
      ignoreCase,
      wholeNumber,
      maxMatches: a.max_matches,
      maxFiles: r.limits.max_files,
      maxBytes: share,
      deadline,
      keepBytes: true,
      rank
    })
    for (const l of result.limitsReached) limitsReached.add(l)
    if (result.skipped.some((s) => s.reason === 'too_large' || s.reason === 'missing_object'))
      limitsReached.add('skipped_files')
    const record = { index: records.length, term, mode, reason, from, result, home } as const
    records.push(record)
    return record
  }
  return { records, limitsReached, codeRank, share, run }
}

/**
 * The candidates the term leads to, each searched within max_searches: aliases assigned from it
 * (the same name in other files becomes a candidate of its own), then the registration functions
 * of the files the term itself matched (never of files reached later).
 */
const followUp = async (
  r: SourceResearch,
  searches: Searches,
  term: string,
  first: SearchRecord
): Promise<Candidate[]> => {
  const candidates: Candidate[] = []
  const direct = [...new Set(first.result.hits.map((h) => h.path))]
  const assigning = new Map<string, Set<string>>()
  for (const hit of first.result.hits) {
    for (const name of assignedNames(hit.text, term)) {
      candidates.push({ kind: 'assignment', name, path: hit.path, line: hit.line })
      assigning.set(name, (assigning.get(name) ?? new Set()).add(hit.path))
    }
  }
  // Aliases first, each searched in the file that assigns it before any other file.
  const followed = new Set<string>([term])
  for (const c of candidates.filter((x) => x.kind === 'assignment')) {
    if (followed.has(c.name)) continue
    followed.add(c.name)
    const s = await searches.run(
      c.name,
      'assignment',
      { path: c.path, line: c.line },
      assigning.get(c.name) ?? new Set()
    )
    if (s === null) break
    for (const h of s.result.hits.filter((x) => !s.home.has(x.path))) {
      const value = assignedValue(h.text, c.name)
      if (value !== null) candidates.push({ kind: 'same_name', name: c.name, path: h.path, line: h.line, value })
    }
  }
  const directFiles = new Set(direct)
  for (const p of direct) {
    const f = first.result.files.get(p)
    if (f === undefined) continue
    splitLines(bytesOf(f)).forEach((text, i) => {
      for (const name of registrationNames(text, r.analysis.registration_prefixes))
        candidates.push({ kind: 'registration', name, path: p, line: i + 1 })
    })
  }
  for (const c of candidates.filter((x) => x.kind === 'registration')) {
    if (followed.has(c.name)) continue
    followed.add(c.name)
    if ((await searches.run(c.name, 'registration', { path: c.path, line: c.line }, directFiles)) === null) break
  }
  return candidates
}

/** Every hit and registration candidate ranked, and the windows allocated within the limits. */
const contextWindows = (r: SourceResearch, searches: Searches, candidates: readonly Candidate[]) => {
  const fileData = new Map<string, ScannedFile & { lines: string[] }>()
  for (const s of searches.records)
    for (const [p, f] of s.result.files) if (!fileData.has(p)) fileData.set(p, { ...f, lines: splitLines(bytesOf(f)) })
  const placeOf = (role: ContextRole, path: string, line: number): ContextPlace => ({
    role,
    path,
    line,
    fileRank: searches.codeRank(path)
  })
  const places: ContextPlace[] = [
    ...searches.records.flatMap((s) => s.result.hits.map((h) => placeOf(roleOf(s, h.path), h.path, h.line))),
    ...candidates.filter((c) => c.kind === 'registration').map((c) => placeOf('registration', c.path, c.line))
  ]
  const allocation = allocateContext(places, (p) => fileData.get(p)?.lines.length ?? 0, r.analysis)
  for (const l of allocation.limitsReached) searches.limitsReached.add(l)
  const files = allocation.files.flatMap((f) => (fileData.get(f.path) === undefined ? [] : [f]))
  const blocks = files.flatMap((f) => {
    const data = fileData.get(f.path)
    return f.windows.map((w) => ({
      path: f.path,
      start_line: w.start,
      lines: (data?.lines ?? []).slice(w.start - 1, w.end).map((text) => {
        const c = cutLine(text, r.limits.max_line_chars)
        return c.cut ? { text: c.text, text_truncated: true as const, length: c.length } : c.text
      })
    }))
  })
  const origins = files.flatMap((f) => {
    const d = fileData.get(f.path)
    return d === undefined ? [] : [d.origin]
  })
  return { allocation, files, blocks, origins }
}
