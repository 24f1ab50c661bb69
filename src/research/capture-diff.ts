/**
 * The first difference between a recorded capture and the same question asked again: a JSON
 * pointer in canonical key order, and where that is for people (a file and line of a source
 * capture, a table, row and column of a database capture), with both values, bounded.
 */
import type { Capture } from '../events/capture.js'

export interface CaptureDifference {
  readonly pointer: string
  readonly where: string
  readonly recorded: string
  readonly rederived: string
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const escapeToken = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1')
const shown = (v: unknown): string => {
  if (v === undefined) return 'nothing'
  const t = JSON.stringify(v) ?? String(v)
  return t.length > 160 ? `${t.slice(0, 160)}… (${t.length} characters)` : t
}

/** The path (keys and indexes) to the first difference of two JSON values, or null when equal. */
const firstPath = (a: unknown, b: unknown, at: Array<string | number> = []): Array<string | number> | null => {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const p = firstPath(a[i], b[i], [...at, i])
      if (p !== null) return p
    }
    return null
  }
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      const p = firstPath(a[k], b[k], [...at, k])
      if (p !== null) return p
    }
    return null
  }
  return Object.is(a, b) ? null : at
}

const valueAt = (root: unknown, path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>((v, k) => (Array.isArray(v) ? v[k as number] : isObject(v) ? v[String(k)] : undefined), root)

/** Where a difference is, for people: file and line, or table, row and column, else the pointer. */
const describe = (c: Capture, path: ReadonlyArray<string | number>, pointer: string): string => {
  if (path[0] !== 'result') return pointer.slice(1).replace(/\//g, '.')
  const request = c.request
  if (c.origin.type === 'database') {
    const rowsAt = path.indexOf('rows')
    const row = path[rowsAt + 1]
    if (rowsAt >= 0 && typeof row === 'number') {
      const offset = typeof c.result['offset'] === 'number' ? c.result['offset'] : 0
      const column = path[rowsAt + 2]
      return `table ${c.origin.database}.${String(request['table'])}, row ${offset + row + 1}${column === undefined ? '' : `, column ${String(column)}`}`
    }
    return `${String(request['table'] ?? c.kind)}: ${pointer.slice(1).replace(/\//g, '.')}`
  }
  // Source: the nearest enclosing object with a line number, and the nearest path above it.
  let file: string | null = null
  let line: number | null = null
  for (let i = path.length; i >= 0; i--) {
    const v = valueAt(c, path.slice(0, i))
    if (!isObject(v)) continue
    if (line === null && typeof v['line'] === 'number') line = v['line']
    if (file === null && typeof v['path'] === 'string') file = v['path']
  }
  if (file !== null) return `${file}${line === null ? '' : `:${line}`}`
  return pointer.slice(1).replace(/\//g, '.')
}

/** The first difference of two captures (`fresh` is the question asked again). */
export const firstDifference = (recorded: Capture, fresh: Capture): CaptureDifference => {
  const path = firstPath(recorded, fresh) ?? []
  const pointer = `/${path.map((k) => escapeToken(String(k))).join('/')}`
  return {
    pointer,
    where: describe(recorded, path, pointer),
    recorded: shown(valueAt(recorded, path)),
    rederived: shown(valueAt(fresh, path))
  }
}
