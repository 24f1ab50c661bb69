/**
 * What a search with few hits missed: when a source query finds fewer than MISSED_BELOW hits, one
 * more scan of the same scope, within the query's limits and time, looks for the term in any case
 * and inside longer identifiers or numbers, and its answer counts those lines (never shown as
 * hits) with the first MISSED_PATHS files: `Drakuru` finds nothing as a word, but names
 * `npc_overlord_drakuru_betrayal`; `Trespasser` finds nothing, but `SPELL_TRESPASSER_A` is there.
 * Recorded in the settings of every capture that may hold it (`missed_matches`), so captures
 * asked before it re-derive without it.
 */
import { FailureError } from '../../failures/error.js'
import { scan, type Hit, type SourceResearch } from './common.js'
import { optional } from '../../optional.js'

/** A query with fewer hits than this says what it missed. */
export const MISSED_BELOW = 3
/** Files a missed-match answer names at most. */
export const MISSED_PATHS = 5

/** The settings member of a capture whose query may say what it missed. */
export const missedSettings = (r: SourceResearch): Record<string, unknown> =>
  r.missedMatches
    ? { missed_matches: { below: MISSED_BELOW, paths: MISSED_PATHS, ...(r.emptyScope ? { empty_scope: true } : {}) } }
    : {}

export interface MissedScope {
  readonly term: string
  readonly hits: readonly Hit[]
  /** Whether the query itself matched any case (then only longer words can be missed). */
  readonly ignoreCase: boolean
  /** Whether the query matched only whole words or numbers (else nothing inside a word is missed). */
  readonly whole: boolean
  readonly prefix?: string
  readonly extensions?: readonly string[]
  readonly maxBytes: number
  readonly deadline: number
  /** The query's scan read no file: its path_prefix holds none (of its extensions). */
  readonly emptyScope?: boolean
}

/** Folders a wrong path_prefix may have meant, at most this many. */
export const SCOPE_NEAREST = 5

/**
 * The folders of the commit that hold `prefix` at a segment boundary, in any case (`scripts/`
 * under `src/server/scripts/`, `src/Server` as `src/server`), as prefixes to ask with: the most
 * files first, at most SCOPE_NEAREST.
 */
export const nearestPrefixes = (paths: Iterable<string>, prefix: string): string[] => {
  const want = prefix.toLowerCase()
  const counts = new Map<string, number>()
  for (const p of paths) {
    const lower = p.toLowerCase()
    for (let at = lower.indexOf(want); at >= 0; at = lower.indexOf(want, at + 1)) {
      if (at > 0 && p[at - 1] !== '/') continue
      const found = p.slice(0, at + prefix.length)
      if (found !== prefix) counts.set(found, (counts.get(found) ?? 0) + 1)
      break
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, SCOPE_NEAREST)
    .map(([p]) => p)
}

/**
 * The missed-match member of a result (`missed`), or an empty object when the research does not
 * record it, the query had enough hits, or nothing could differ (a literal search in any case).
 */
export const missedMatches = async (r: SourceResearch, m: MissedScope): Promise<Record<string, unknown>> => {
  // A path_prefix that holds no file at all: nothing was searched, whatever the result says; the
  // folders it may have meant. (One whose files the query's extensions leave out was searched as asked.)
  const prefix = m.prefix
  if (r.missedMatches && r.emptyScope && m.emptyScope === true && prefix !== undefined) {
    const paths = (await r.snap.entries()).map((e) => e.path)
    if (!paths.some((p) => p.startsWith(prefix)))
      return {
        missed: {
          other_case_lines: 0,
          inside_word_lines: 0,
          file_count: 0,
          files: [],
          complete: true,
          empty_scope: { path_prefix: prefix, nearest: nearestPrefixes(paths, prefix) }
        }
      }
  }
  if (!r.missedMatches || m.hits.length >= MISSED_BELOW || (m.ignoreCase && !m.whole)) return {}
  let found: { hits: readonly Hit[]; complete: boolean; timedOut: boolean }
  try {
    const s = await scan(r, {
      ...optional('prefix', m.prefix),
      ...optional('extensions', m.extensions),
      needle: m.term,
      wholeWord: false,
      ignoreCase: true,
      maxMatches: r.limits.max_matches,
      maxFiles: r.limits.max_files,
      maxBytes: m.maxBytes,
      deadline: m.deadline
    })
    found = { hits: s.hits, complete: s.complete, timedOut: false }
  } catch (e) {
    if (!(e instanceof FailureError) || e.failure.code !== 'SOURCE_TIMEOUT') throw e
    found = { hits: [], complete: false, timedOut: true }
  }
  const known = new Set(m.hits.map((h) => `${h.path}:${h.line}`))
  const lower = m.term.toLowerCase()
  const sameCase = (text: string): boolean =>
    m.ignoreCase ? text.toLowerCase().includes(lower) : text.includes(m.term)
  let otherCase = 0
  let insideWord = 0
  const files: string[] = []
  for (const h of found.hits) {
    if (known.has(`${h.path}:${h.line}`)) continue
    if (sameCase(h.text)) insideWord++
    else otherCase++
    if (files[files.length - 1] !== h.path && !files.includes(h.path)) files.push(h.path)
  }
  return {
    missed: {
      other_case_lines: otherCase,
      inside_word_lines: insideWord,
      file_count: files.length,
      files: files.slice(0, MISSED_PATHS),
      complete: found.complete,
      ...(found.timedOut ? { timed_out: true } : {})
    }
  }
}
