/**
 * The places a concluded case cites, and how they meet the truth. Pure: the case's events and the
 * decoded captures in, the cited places and the hits out.
 *
 * The cited evidence is the conclusion's own evidence, then the evidence of every hypothesis the
 * conclusion names, in order, each id once. A cited capture shows places: a source read shows its
 * window (the lines it returned), source.context its blocks, a search (files, search, symbol,
 * registration) each hit line as a window of one line, source.files each path without lines.
 */
import type { RecordedEvent } from '../events/chain.js'
import type { ChangedRange } from './suite.js'

/** A cited place: a file, and the lines shown of it (null: the file only). */
export interface Place {
  readonly evidence: string
  readonly path: string
  readonly lines: readonly [number, number] | null
}

/** What the conclusion cites: evidence ids in order, each once (empty when the case did not conclude). */
export const citedEvidence = (events: readonly RecordedEvent[]): string[] => {
  const hypotheses = new Map<string, string[]>()
  let conclusion: { hypotheses: string[]; evidence: string[] } | null = null
  for (const e of events) {
    if (e.type === 'HypothesisProposed') hypotheses.set(e.data.hypothesis_id, [...e.data.evidence])
    else if (e.type === 'HypothesisUpdated') {
      const list = hypotheses.get(e.data.hypothesis_id) ?? []
      hypotheses.set(e.data.hypothesis_id, [...list, ...e.data.evidence.filter((x) => !list.includes(x))])
    } else if (e.type === 'ConclusionRecorded') conclusion = e.data
  }
  if (conclusion === null) return []
  const out: string[] = []
  const add = (id: string): void => {
    if (!out.includes(id)) out.push(id)
  }
  for (const id of conclusion.evidence) add(id)
  for (const h of conclusion.hypotheses) for (const id of hypotheses.get(h) ?? []) add(id)
  return out
}

/** The capture object of each evidence id (the first capture recorded under it). */
export const evidenceCaptures = (
  events: readonly RecordedEvent[]
): Map<string, { readonly digest: string; readonly size: number }> => {
  const out = new Map<string, { readonly digest: string; readonly size: number }>()
  for (const e of events)
    if ((e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') && !out.has(e.data.evidence_id))
      out.set(e.data.evidence_id, { digest: e.data.capture.digest, size: e.data.capture.size })
  return out
}

const rec = (u: unknown): Record<string, unknown> =>
  typeof u === 'object' && u !== null && !Array.isArray(u) ? (u as Record<string, unknown>) : {}
const arr = (u: unknown): unknown[] => (Array.isArray(u) ? u : [])
const int = (u: unknown): number | null => (typeof u === 'number' && Number.isSafeInteger(u) && u >= 1 ? u : null)
const str = (u: unknown): string | null => (typeof u === 'string' ? u : null)

/** The places one decoded capture shows, in its own order. */
export const placesOf = (evidence: string, capture: unknown): Place[] => {
  const c = rec(capture)
  const r = rec(c['result'])
  const out: Place[] = []
  const push = (p: unknown, lines: readonly [number, number] | null): void => {
    const path = str(p)
    if (path !== null) out.push({ evidence, path, lines })
  }
  switch (c['kind']) {
    case 'source.read': {
      const numbers = arr(r['lines'])
        .map((l) => int(rec(l)['line']))
        .filter((n): n is number => n !== null)
      if (numbers.length > 0) push(r['path'], [Math.min(...numbers), Math.max(...numbers)])
      else push(r['path'], null)
      break
    }
    case 'source.context':
      for (const b of arr(r['blocks'])) {
        const start = int(rec(b)['start_line'])
        const n = arr(rec(b)['lines']).length
        push(rec(b)['path'], start === null || n === 0 ? null : [start, start + n - 1])
      }
      break
    case 'source.search':
    case 'source.symbol':
    case 'source.registration':
      for (const h of arr(r['hits'])) {
        const line = int(rec(h)['line'])
        push(rec(h)['path'], line === null ? null : [line, line])
      }
      break
    case 'source.files':
      for (const f of arr(r['files'])) push(typeof f === 'string' ? f : rec(f)['path'], null)
      break
    default:
      break
  }
  return out
}

/** How the cited places meet the truth: a file hit, a line hit, and the 1-based rank of the first place in a changed file. */
export interface Hits {
  readonly file_hit: boolean
  readonly line_hit: boolean
  readonly first_hit_rank: number | null
  readonly cited_places: number
}

const overlaps = (a: readonly [number, number], b: readonly [number, number]): boolean => a[0] <= b[1] && b[0] <= a[1]

/** Scores cited places against the changed ranges (places are distinct by path and lines, first kept). */
export const hitsOf = (places: readonly Place[], changed: readonly ChangedRange[]): Hits => {
  const seen = new Set<string>()
  const distinct = places.filter((p) => {
    const key = `${p.path}\u0000${p.lines?.join('-') ?? ''}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
  const files = new Set(changed.map((c) => c.path))
  const rank = distinct.findIndex((p) => files.has(p.path))
  const line = distinct.some((p) => {
    const lines = p.lines
    return lines !== null && changed.some((c) => c.path === p.path && overlaps(lines, c.lines))
  })
  return {
    file_hit: rank >= 0,
    line_hit: line,
    first_hit_rank: rank < 0 ? null : rank + 1,
    cited_places: distinct.length
  }
}
