/**
 * Parts of a capture rendered for people (the query kinds' report bodies): numbered source lines
 * with path and blob, hits by file, database values exactly (long values folded), and the markers
 * of what a capture left out.
 */
import type { Capture } from '../../events/capture.js'
import { cell } from '../values-text.js'
import { esc, str } from './html.js'
import { asArr, asRec, type Rec } from '../json-read.js'

export const lineText = (l: unknown): { text: string; cut: string } => {
  const r = asRec(l)
  const t = typeof l === 'string' ? l : str(r['text'])
  return {
    text: t,
    cut: r['text_truncated'] === true ? ` [line cut at ${t.length} of ${str(r['length'])} characters]` : ''
  }
}

export const sourceTable = (rows: ReadonlyArray<{ line: number; text: string; cut: string; hit?: boolean }>): string =>
  `<table class="src"><tbody>${rows.map((r) => `<tr${r.hit === true ? ' class="hit"' : ''}><td class="num">${r.line}</td><td class="code">${foldable(r.text)}${r.cut === '' ? '' : `<span class="marker">${esc(r.cut)}</span>`}</td></tr>`).join('')}</tbody></table>`

export const blobOf = (c: Capture, path: string): string => {
  if (c.origin.type !== 'git') return ''
  const f = c.origin.files.find((x) => x.path === path)
  return f === undefined ? '' : ` <span class="muted mono">blob ${esc(f.blob)}</span>`
}

export const markers = (list: readonly string[]): string => list.map((m) => `<p class="marker">${esc(m)}</p>`).join('')

export const limitsOf = (r: Rec): string[] => {
  const names = asArr(r['limits_reached']).map(str)
  const out = names.length === 0 ? [] : [`limits reached: ${names.join(', ')} (the answer is partial)`]
  const counts = Object.entries(asRec(asRec(r['skipped'])['counts']))
  if (counts.length > 0) out.push(`skipped: ${counts.map(([k, n]) => `${k} ${str(n)}`).join(', ')}`)
  return out
}

export const hitsByFile = (c: Capture, hits: readonly unknown[]): string => {
  const files = new Map<string, Array<{ line: number; text: string; cut: string }>>()
  for (const h of hits) {
    const r = asRec(h)
    const list = files.get(str(r['path'])) ?? []
    list.push({ line: Number(r['line']), ...lineText(r) })
    files.set(str(r['path']), list)
  }
  return [...files]
    .map(
      ([path, rows]) =>
        `<h4 class="mono">${esc(path)}${blobOf(c, path)} <span class="muted">(${rows.length} hit${rows.length === 1 ? '' : 's'})</span></h4>${sourceTable(rows)}`
    )
    .join('')
}

/** Values longer than this (or of more lines) are folded: a short summary that expands to the whole value in a box of bounded height. */
const LONG_CHARS = 300
const LONG_LINES = 8

/** A value's cell content: the value, or for a long one an expander (the page stays readable whatever a value holds). */
const foldable = (text: string): string => {
  const lines = text.split('\n', LONG_LINES + 1).length
  if (text.length <= LONG_CHARS && lines <= LONG_LINES) return esc(text)
  const head = text.slice(0, 120).split('\n').slice(0, 2).join('\n')
  return `<details class="long"><summary>${esc(head)}… <span class="muted">(${text.length} characters)</span></summary><div class="full">${esc(text)}</div></details>`
}

export const valueCell = (v: unknown): string =>
  v === null || v === undefined
    ? '<td class="null">NULL</td>'
    : `<td class="code val">${foldable(typeof v === 'string' ? v : cell(v))}</td>`
