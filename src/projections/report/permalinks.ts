/**
 * The way back to the repository: the source windows a capture shows (a read's lines, the blocks
 * of a context answer, the lines of search hits) and their permalinks at the capture's pinned
 * commit, by the profile's web view template (`[source] web_view`:
 * `https://github.com/OWNER/REPO/blob/{commit}/{path}#L{start}-L{end}`). Pure.
 */
import type { Capture } from '../../events/capture.js'

/** One window of one file at one commit. */
export interface SourceWindow {
  readonly commit: string
  readonly path: string
  readonly start: number
  readonly end: number
}

/** Windows of one capture at most (the rest are counted). */
export const MAX_WINDOWS = 8

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === 'object' && u !== null && !Array.isArray(u)
const isLine = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1

/**
 * A path as git records one: relative, no empty, `.` or `..` segment. A forged capture's
 * `../../other/repo/x` would make a permalink to another repository under a path that reads as
 * this one's (a browser resolves `%2E%2E` as `..` too), so such a path gets no window.
 */
const isRepoPath = (p: unknown): p is string =>
  typeof p === 'string' && p !== '' && p.split('/').every((s) => s !== '' && s !== '.' && s !== '..')

/** The windows a source capture shows, in its order (none for a database capture). */
export const sourceWindows = (c: Capture): SourceWindow[] => {
  if (c.origin.type !== 'git') return []
  const commit = c.origin.commit
  const r = c.result
  const out: SourceWindow[] = []
  const add = (path: unknown, start: unknown, end: unknown): void => {
    if (isRepoPath(path) && isLine(start) && isLine(end) && end >= start) out.push({ commit, path, start, end })
  }
  if (c.kind === 'source.read' && Array.isArray(r['lines'])) {
    const lines = r['lines'].filter(isRecord).map((l) => l['line'])
    add(r['path'], lines[0], lines[lines.length - 1])
  }
  for (const b of Array.isArray(r['blocks']) ? r['blocks'].filter(isRecord) : []) {
    const n = Array.isArray(b['lines']) ? b['lines'].length : 0
    add(b['path'], b['start_line'], isLine(b['start_line']) ? b['start_line'] + n - 1 : undefined)
  }
  if (c.kind !== 'source.context')
    for (const key of ['hits', 'registrations', 'definitions', 'matches']) {
      for (const h of Array.isArray(r[key]) ? (r[key] as unknown[]).filter(isRecord) : [])
        add(h['path'], h['line'], h['line'])
    }
  // the same window once
  const seen = new Set<string>()
  return out.filter((w) => {
    const k = `${w.path}:${w.start}-${w.end}`
    if (seen.has(k)) return false
    seen.add(k)
    return true
  })
}

/** A path segment URL-encoded, with the characters encodeURIComponent leaves (`!'()*`) too: a `)` ends a Markdown link. */
const segment = (s: string): string =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** The permalink of a window by the template ({commit}, {path}, {start}, {end}; path segments URL-encoded). */
export const permalink = (template: string, w: SourceWindow): string =>
  template
    .replaceAll('{commit}', w.commit)
    .replaceAll('{path}', w.path.split('/').map(segment).join('/'))
    .replaceAll('{start}', String(w.start))
    .replaceAll('{end}', String(w.end))

/** `path L12-L40` (one line: `path L12`). */
export const windowText = (w: SourceWindow): string => `${w.path} L${w.start}${w.end === w.start ? '' : `-L${w.end}`}`
