/**
 * source.search (literal), source.symbol (whole word of an identifier), source.schema (literal,
 * .sql files only) and source.registration (symbol hits plus the registration functions of the
 * files they are in). Every result says what it covered, what it skipped and whether it is
 * complete; a complete search with zero hits is evidence of absence within this commit and scope.
 */
import { failure } from '../../failures/failure.js'
import type { SourceRegistration, SourceSchema, SourceSearch, SourceSymbol } from '../../domain/query.js'
import { checkSourcePath } from '../../domain/source-paths.js'
import { isIdentifier, registrationNames } from '../../domain/text-scan.js'
import type { Capture } from '../../events/capture.js'
import { FailureError } from '../../failures/error.js'
import { buildCapture } from '../capture.js'
import {
  bytesOf,
  gitOrigin,
  reportSkipped,
  scan,
  sourceSettings,
  splitLines,
  type SourceScanResult,
  type SourceResearch
} from './common.js'
import { must } from '../../failures/error.js'
import { optional } from '../../optional.js'
import { missedMatches, missedSettings } from './missed.js'

/** The result members of a search's options, present only when asked (older captures hold neither). */
const asked = (q: { readonly ignore_case?: boolean; readonly whole_number?: boolean }): Record<string, unknown> => ({
  ...(q.ignore_case === true ? { ignore_case: true } : {}),
  ...(q.whole_number === true ? { whole_number: true } : {})
})

const searchResult = (
  term: string,
  mode: 'literal' | 'word',
  scope: Record<string, unknown>,
  s: SourceScanResult
): Record<string, unknown> => ({
  term,
  mode,
  scope,
  hits: s.hits,
  hit_count: s.hits.length,
  files_with_hits: s.files.size,
  files_scanned: s.filesScanned,
  bytes_scanned: s.bytesScanned,
  skipped: reportSkipped(s.skipped),
  limits_reached: s.limitsReached,
  complete: s.complete,
  // A complete search without hits is a finding about this commit and scope only.
  result:
    s.hits.length === 0
      ? s.complete
        ? 'no_hits_complete'
        : 'no_hits_partial'
      : s.complete
        ? 'hits_complete'
        : 'hits_partial'
})

/** A scan that read no file, skipped none and stopped at no limit: its scope holds no file. */
const holdsNoFile = (s: SourceScanResult): boolean =>
  s.filesScanned === 0 && s.skipped.length === 0 && s.limitsReached.length === 0

const prefixOf = (p: string | undefined): string | undefined =>
  p === undefined ? undefined : must(checkSourcePath('path_prefix', p))

export const sourceSearch = async (
  r: SourceResearch,
  q: SourceSearch | SourceSymbol | SourceSchema,
  deadline: number
): Promise<Capture> => {
  const term = q.kind === 'source.symbol' ? q.symbol : q.text
  if (q.kind === 'source.symbol' && !isIdentifier(term)) {
    throw new FailureError(
      failure(
        'QUERY_INVALID',
        'source.symbol takes a valid identifier (letters, digits, underscores; not starting with a digit)',
        {}
      )
    )
  }
  const prefix = q.kind === 'source.schema' ? undefined : prefixOf(q.path_prefix)
  const extensions = q.kind === 'source.schema' ? ['.sql'] : r.extensions
  const mode = q.kind === 'source.symbol' ? 'word' : 'literal'
  const ignoreCase = q.ignore_case === true
  const wholeNumber = q.kind === 'source.search' && q.whole_number === true
  const s = await scan(r, {
    ...optional('prefix', prefix),
    extensions,
    needle: term,
    wholeWord: mode === 'word',
    ignoreCase,
    wholeNumber,
    maxMatches: r.limits.max_matches,
    maxFiles: r.limits.max_files,
    maxBytes: r.limits.max_search_bytes,
    deadline
  })
  const missed = await missedMatches(r, {
    term,
    hits: s.hits,
    ignoreCase,
    whole: mode === 'word' || wholeNumber,
    ...optional('prefix', prefix),
    extensions,
    maxBytes: r.limits.max_search_bytes,
    deadline,
    emptyScope: holdsNoFile(s)
  })
  const origin = gitOrigin(
    r,
    [...s.files.values()].map((f) => f.origin)
  )
  return must(
    buildCapture(
      q.kind,
      q,
      origin,
      sourceSettings(r, missedSettings(r)),
      {
        ...searchResult(term, mode, { path_prefix: prefix ?? null, extensions: [...extensions].sort() }, s),
        ...asked(q),
        ...missed
      },
      r.limits.max_result_bytes
    )
  )
}

export const sourceRegistration = async (
  r: SourceResearch,
  q: SourceRegistration,
  deadline: number
): Promise<Capture> => {
  if (!isIdentifier(q.symbol))
    throw new FailureError(failure('QUERY_INVALID', 'source.registration takes a valid identifier', {}))
  const prefix = prefixOf(q.path_prefix)
  const s = await scan(r, {
    ...optional('prefix', prefix),
    needle: q.symbol,
    wholeWord: true,
    ignoreCase: q.ignore_case === true,
    maxMatches: r.limits.max_matches,
    maxFiles: r.limits.max_files,
    maxBytes: r.limits.max_search_bytes,
    deadline,
    keepBytes: true
  })
  const missed = await missedMatches(r, {
    term: q.symbol,
    hits: s.hits,
    ignoreCase: q.ignore_case === true,
    whole: true,
    ...optional('prefix', prefix),
    maxBytes: r.limits.max_search_bytes,
    deadline,
    emptyScope: holdsNoFile(s)
  })
  const prefixes = r.analysis.registration_prefixes
  const registrations: Array<{ path: string; line: number; name: string; text: string }> = []
  for (const f of s.files.values()) {
    const entry = f.entry
    splitLines(bytesOf(f)).forEach((text, i) => {
      for (const name of registrationNames(text, prefixes))
        registrations.push({ path: entry.path, line: i + 1, name, text: text.slice(0, r.limits.max_line_chars) })
    })
  }
  const origin = gitOrigin(
    r,
    [...s.files.values()].map((f) => f.origin)
  )
  return must(
    buildCapture(
      'source.registration',
      q,
      origin,
      sourceSettings(r, { registration_prefixes: [...prefixes], ...missedSettings(r) }),
      {
        ...searchResult(q.symbol, 'word', { path_prefix: prefix ?? null, extensions: [...r.extensions].sort() }, s),
        ...asked(q),
        ...missed,
        registration_prefixes: [...prefixes],
        // Candidates only: whether a function really registers the symbol is for the reader to judge.
        registrations
      },
      r.limits.max_result_bytes
    )
  )
}
