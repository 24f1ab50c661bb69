/**
 * source.context: a bounded lexical chain around one term. (1) Search the term: an identifier as a
 * whole word, anything else as a fixed string. (2) Follow, within max_searches: identifiers
 * assigned from the term in a simple assignment (`NPC_WILD_WOLPERTINGER = 23487`), and functions
 * with the configured registration prefixes in the files that matched (where else they appear).
 * Names in the files reached only by following a registration (central loader files) are not
 * followed further. (3) Read context windows around hits and candidates, merging overlapping or
 * adjacent windows per file, within max_files, max_blocks and max_total_lines.
 *
 * The result is context for a reader: it claims no call graph, no execution and no cause, and
 * equal numbers in different files are separate hits that nothing here links.
 */
import { failure } from '../../domain/failure.js'
import type { SourceContext } from '../../domain/query.js'
import { checkSourcePath } from '../../domain/source-paths.js'
import { around, mergeWindows, type LineWindow } from '../../domain/context-windows.js'
import { assignedNames, cutLine, isIdentifier, registrationNames } from '../../domain/text-scan.js'
import type { Capture } from '../../events/capture.js'
import { FailureError } from '../../adapters/fs-util.js'
import { buildCapture } from '../capture.js'
import { bytesOf, gitOrigin, reportSkipped, scan, sourceSettings, splitLines, type ScanResult, type ScannedFile, type SourceResearch } from './common.js'
import { orThrow } from './util.js'

interface SearchRecord {
  readonly index: number
  readonly term: string
  readonly mode: 'word' | 'literal'
  readonly reason: 'term' | 'assignment' | 'registration'
  readonly from: { readonly path: string; readonly line: number } | null
  readonly result: ScanResult
}

export const sourceContext = async (r: SourceResearch, q: SourceContext, deadline: number): Promise<Capture> => {
  const a = r.analysis
  if (!a.enabled) throw new FailureError(failure('SOURCE_CONTEXT_DISABLED', 'source.context is not enabled in [source_analysis] of the profile'))
  const prefix = q.path_prefix === undefined ? undefined : orThrow(checkSourcePath('path_prefix', q.path_prefix))
  const limitsReached = new Set<string>()
  // Internal searches share the query's search bytes: each gets an equal, bounded part.
  const share = Math.floor(r.limits.max_search_bytes / Math.max(1, a.max_searches))
  const searches: SearchRecord[] = []
  const run = async (term: string, reason: SearchRecord['reason'], from: SearchRecord['from']): Promise<SearchRecord | null> => {
    if (searches.length >= a.max_searches) {
      limitsReached.add('searches')
      return null
    }
    const mode = isIdentifier(term) ? 'word' : 'literal'
    const result = await scan(r, { ...(prefix === undefined ? {} : { prefix }), needle: term, wholeWord: mode === 'word', maxMatches: a.max_matches, maxBytes: share, deadline, keepBytes: true })
    for (const l of result.limitsReached) limitsReached.add(l === 'matches' ? 'matches' : l)
    if (result.skipped.some((s) => s.reason === 'too_large' || s.reason === 'missing_object')) limitsReached.add('skipped_files')
    const record = { index: searches.length, term, mode, reason, from, result } as const
    searches.push(record)
    return record
  }

  const first = await run(q.text, 'term', null)
  if (first === null) throw new FailureError(failure('CONFIG_INVALID', '[source_analysis].max_searches must be at least 1'))
  // Follow-ups come only from files the term itself matched (never from loader files reached later).
  const followed = new Set<string>([q.text])
  const candidates: Array<{ kind: 'assignment' | 'registration'; name: string; path: string; line: number }> = []
  for (const hit of first.result.hits) {
    for (const name of assignedNames(hit.text, q.text)) candidates.push({ kind: 'assignment', name, path: hit.path, line: hit.line })
  }
  const matchedFiles = new Map<string, ScannedFile>(first.result.files)
  for (const c of candidates.filter((x) => x.kind === 'assignment')) {
    if (followed.has(c.name)) continue
    followed.add(c.name)
    const s = await run(c.name, 'assignment', { path: c.path, line: c.line })
    if (s === null) break
    for (const [p, f] of s.result.files) matchedFiles.set(p, f)
  }
  for (const [p, f] of [...matchedFiles.entries()].sort(([x], [y]) => (x < y ? -1 : 1))) {
    splitLines(bytesOf(f)).forEach((text, i) => {
      for (const name of registrationNames(text, a.registration_prefixes)) candidates.push({ kind: 'registration', name, path: p, line: i + 1 })
    })
  }
  for (const c of candidates.filter((x) => x.kind === 'registration')) {
    if (followed.has(c.name)) continue
    followed.add(c.name)
    if ((await run(c.name, 'registration', { path: c.path, line: c.line })) === null) break
  }

  // Windows around every hit and candidate, file by file in path order, within the limits.
  const points = new Map<string, Array<{ line: number }>>()
  const fileData = new Map<string, ScannedFile & { lines: string[] }>()
  for (const s of searches) {
    for (const [p, f] of s.result.files) if (!fileData.has(p)) fileData.set(p, { ...f, lines: splitLines(bytesOf(f)) })
    for (const h of s.result.hits) points.set(h.path, [...(points.get(h.path) ?? []), { line: h.line }])
  }
  for (const c of candidates) points.set(c.path, [...(points.get(c.path) ?? []), { line: c.line }])
  const files: Array<{ path: string; blob: string; sha256: string; size: number }> = []
  const blocks: Array<{ path: string; start_line: number; lines: Array<string | { text: string; text_truncated: true; length: number }> }> = []
  const returned = new Map<string, LineWindow[]>()
  let totalLines = 0
  for (const p of [...points.keys()].sort()) {
    const data = fileData.get(p)
    if (data === undefined) continue
    if (files.length >= a.max_files) {
      limitsReached.add('files')
      break
    }
    const windows = mergeWindows((points.get(p) ?? []).map((x) => around(x.line, a.context_lines, data.lines.length)))
    const kept: LineWindow[] = []
    for (const w of windows) {
      if (blocks.length >= a.max_blocks) {
        limitsReached.add('blocks')
        break
      }
      const room = a.max_total_lines - totalLines
      if (room <= 0) {
        limitsReached.add('lines')
        break
      }
      const end = Math.min(w.end, w.start + room - 1)
      if (end < w.end) limitsReached.add('lines')
      const lines = data.lines.slice(w.start - 1, end).map((text) => {
        const c = cutLine(text, r.limits.max_line_chars)
        return c.cut ? { text: c.text, text_truncated: true as const, length: c.length } : c.text
      })
      blocks.push({ path: p, start_line: w.start, lines })
      kept.push({ start: w.start, end })
      totalLines += lines.length
    }
    if (kept.length > 0) {
      files.push(data.origin)
      returned.set(p, kept)
    }
  }
  const shown = (path: string, line: number): boolean => (returned.get(path) ?? []).some((w) => line >= w.start && line <= w.end)
  const complete = limitsReached.size === 0 && searches.every((s) => s.result.complete)
  return orThrow(buildCapture('source.context', q, gitOrigin(r, files), sourceSettings(r, {
    source_analysis: { context_lines: a.context_lines, max_searches: a.max_searches, max_matches: a.max_matches, max_files: a.max_files, max_blocks: a.max_blocks, max_total_lines: a.max_total_lines, registration_prefixes: [...a.registration_prefixes] }
  }), {
    term: q.text,
    mode: first.mode,
    scope: { path_prefix: prefix ?? null, extensions: [...r.extensions].sort() },
    searches: searches.map((s) => ({
      index: s.index, term: s.term, mode: s.mode, reason: s.reason, from: s.from,
      hit_count: s.result.hits.length, files_scanned: s.result.filesScanned, complete: s.result.complete,
      limits_reached: s.result.limitsReached, skipped: reportSkipped(s.result.skipped)
    })),
    hits: searches.flatMap((s) => s.result.hits.map((h) => ({ search: s.index, path: h.path, line: h.line, context_returned: shown(h.path, h.line) }))),
    candidates: candidates.map((c) => ({ ...c, context_returned: shown(c.path, c.line) })),
    files: files.map((f) => f.path),
    blocks,
    limits_reached: [...limitsReached].sort(),
    completeness: complete ? 'complete_configured_source_context' : 'partial_configured_source_context',
    notice: 'Lexical context only: hits and candidates are places to read, not a verified call graph, an execution or a cause. Equal numbers in different files may name different things.'
  }, r.limits.max_result_bytes))
}
