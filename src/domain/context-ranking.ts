/**
 * How source.context spends its lines: it ranks every place before it cuts. Each place a search
 * found (or a candidate names) has a role, and places get their context window in this order:
 *
 * 1. `term`: direct hits of the asked term, a window of context_lines on both sides;
 * 2. `alias`: hits of a name assigned from the term, in the file that assigns it (both sides);
 * 3. `registration`: registration functions in the files of direct hits, the line and half the
 *    context_lines after it (the start of the function's body);
 * 4. `loader`: registration lines in other files (central script loaders), one line each;
 * 5. `same_name`: hits of an assigned name in other files, one line each: another symbol with the
 *    same name (often another value), never the same one.
 *
 * Within a role, code files come before the rest (data dumps) when the query named no path_prefix,
 * then path and line order. A window that does not fit the lines left is narrowed around its place
 * (the place itself is always shown while a line is left); windows of a file merge when they
 * overlap or touch. Every place that got no context says why: `files`, `blocks` or `lines`.
 * Deterministic and pure.
 */
import { around, mergeWindows, type LineWindow } from './context-windows.js'

export type ContextRole = 'term' | 'alias' | 'registration' | 'loader' | 'same_name'

/** The order roles get their context in (lower first). */
export const ROLE_ORDER: readonly ContextRole[] = ['term', 'alias', 'registration', 'loader', 'same_name']

export interface ContextPlace {
  readonly role: ContextRole
  readonly path: string
  readonly line: number
  /** 0 for code files (or every file when a path_prefix was given), 1 for the rest. */
  readonly fileRank: number
}

export interface ContextLimits {
  readonly context_lines: number
  readonly max_files: number
  readonly max_blocks: number
  readonly max_total_lines: number
}

export type NoContext = 'files' | 'blocks' | 'lines'

export interface ContextAllocation {
  /** Merged windows per file, files in the order they first got lines. */
  readonly files: ReadonlyArray<{ readonly path: string; readonly windows: readonly LineWindow[] }>
  /** Why a place got no context (absent when it is inside a returned window). */
  readonly noContext: (place: { readonly path: string; readonly line: number }) => NoContext | undefined
  readonly limitsReached: ReadonlySet<NoContext>
}

const windowOf = (p: ContextPlace, ctx: number, total: number): LineWindow => {
  switch (p.role) {
    case 'term':
    case 'alias':
      return around(p.line, ctx, total)
    case 'registration':
      return { start: p.line, end: Math.min(total, p.line + Math.ceil(ctx / 2)) }
    case 'loader':
    case 'same_name':
      return { start: p.line, end: p.line }
    default: {
      const _never: never = p.role
      return _never
    }
  }
}

const lineCount = (ws: readonly LineWindow[]): number => ws.reduce((n, w) => n + w.end - w.start + 1, 0)
const covers = (ws: readonly LineWindow[], line: number): boolean => ws.some((w) => line >= w.start && line <= w.end)

/** A window of at most `size` lines inside `w` that keeps `line`, as centred as `w` allows. */
const narrowed = (w: LineWindow, line: number, size: number): LineWindow => {
  const before = Math.min(line - w.start, Math.floor((size - 1) / 2))
  const after = Math.min(w.end - line, size - 1 - before)
  const more = Math.min(line - w.start - before, size - 1 - before - after)
  return { start: line - before - more, end: line + after }
}

/** Ranks places and allocates context windows within the limits (see the module comment). */
export const allocateContext = (
  places: readonly ContextPlace[],
  totalLines: (path: string) => number,
  limits: ContextLimits
): ContextAllocation => {
  const ranked = [...places].sort(
    (a, b) =>
      ROLE_ORDER.indexOf(a.role) - ROLE_ORDER.indexOf(b.role) ||
      a.fileRank - b.fileRank ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
      a.line - b.line
  )
  const byFile = new Map<string, LineWindow[]>()
  const refused = new Map<string, NoContext>()
  const reached = new Set<NoContext>()
  let lines = 0
  let blocks = 0
  const refuse = (p: ContextPlace, why: NoContext): void => {
    reached.add(why)
    refused.set(`${p.path}:${p.line}`, why)
  }
  for (const p of ranked) {
    const mine = byFile.get(p.path) ?? []
    const full = windowOf(p, limits.context_lines, Math.max(p.line, totalLines(p.path)))
    // a window already inside the returned ones costs nothing; one that reaches further extends them
    if (mine.some((w) => full.start >= w.start && full.end <= w.end)) continue
    if (!byFile.has(p.path) && byFile.size >= limits.max_files) {
      refuse(p, 'files')
      continue
    }
    let chosen: LineWindow[] | null = null
    for (let size = full.end - full.start + 1; size >= 1 && chosen === null; size--) {
      const merged = mergeWindows([...mine, narrowed(full, p.line, size)])
      if (blocks - mine.length + merged.length > limits.max_blocks) {
        refuse(p, 'blocks')
        break
      }
      if (lines - lineCount(mine) + lineCount(merged) <= limits.max_total_lines) chosen = merged
      else reached.add('lines')
    }
    if (chosen === null) {
      if (!refused.has(`${p.path}:${p.line}`)) refuse(p, 'lines')
      continue
    }
    blocks += chosen.length - mine.length
    lines += lineCount(chosen) - lineCount(mine)
    byFile.set(p.path, chosen)
  }
  const files = [...byFile.entries()].map(([path, windows]) => ({ path, windows }))
  return {
    files,
    noContext: (place) =>
      covers(byFile.get(place.path) ?? [], place.line)
        ? undefined
        : (refused.get(`${place.path}:${place.line}`) ?? 'lines'),
    limitsReached: reached
  }
}
