/**
 * Enrichment's questions: each identical request asked once (later asks reuse its capture), within
 * max_queries, rows gathered page by page, and what an answer left out noted as coverage.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../failures/failure.js'
import { isUnavailable } from './research-failures.js'
import { partialMarkers } from './partial.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import type { Capture } from '../events/capture.js'
import type { CoverageGap } from './facts-document.js'
import type { RowSet, Run } from './enrich.js'

export const captureDigest = (c: Capture): string => {
  const text = canonicalJson(c)
  return E.isRight(text) ? sha256Digest(text.right) : 'not-canonicalisable'
}

export interface Asked {
  readonly capture: Capture
  readonly digest: string
}

/** A question that got no capture: its failure, and the request (absent when enrichment's own bound kept it from being asked). */
export type NotAsked = Failure & { readonly request?: Record<string, unknown> }

/** What the coverage records of a question that got no capture: the code, the message and the request. */
export const failed = (f: NotAsked): Pick<CoverageGap, 'code'> & Partial<Pick<CoverageGap, 'detail' | 'request'>> =>
  f.code === 'MAX_QUERIES'
    ? { code: f.code }
    : { code: f.code, detail: f.message.slice(0, 300), ...(f.request === undefined ? {} : { request: f.request }) }

export const isFailure = <A extends object>(x: A | NotAsked): x is NotAsked => '_tag' in x && x._tag === 'Failure'

/** Asks once per identical request; later asks reuse the same capture. */
export const ask = async (run: Run, request: Record<string, unknown>): Promise<Asked | NotAsked> => {
  const key = canonicalJson(request)
  const k = E.isRight(key) ? key.right : JSON.stringify(request)
  const known = run.byRequest.get(k)
  if (known !== undefined) {
    run.reused++
    return known
  }
  if (run.captures.length >= run.bounds.max_queries)
    return { _tag: 'Failure', code: 'MAX_QUERIES', message: 'max_queries reached', data: {} }
  const r = await run.research.query(request)()
  if (E.isLeft(r) && isUnavailable(r.left)) {
    run.unavailable = r.left
    return r.left
  }
  const out = E.isLeft(r) ? { ...r.left, request } : { capture: r.right, digest: captureDigest(r.right) }
  if (E.isRight(r)) run.captures.push(r.right)
  run.byRequest.set(k, out)
  return out
}

/** Notes what a capture left out beyond what paging handles. */
export const notePartial = (run: Run, asked: Asked, what: string, ignoreHasMore: boolean): void => {
  const markers = partialMarkers(asked.capture.result).filter((m) => !(ignoreHasMore && m.startsWith('has_more')))
  if (markers.length > 0) run.gaps.push({ reason: 'partial_answer', what, detail: markers.join('; ') })
}

/**
 * All rows of a database.rows request, page by page, within max_queries. When the first page
 * has more, a count query (when the budget allows) says how many rows match, so that a lookup
 * cut short by max_queries can say how many it left out.
 */
export const allRows = async (
  run: Run,
  table: string,
  columns: readonly string[],
  filters: ReadonlyArray<Record<string, unknown>>,
  what: string
): Promise<RowSet | NotAsked> => {
  const rows: Array<{ row: Record<string, unknown>; digest: string; index: number }> = []
  const pages: Asked[] = []
  let offset = 0
  let total: number | null = null
  for (;;) {
    const got = await ask(run, {
      kind: 'database.rows',
      table,
      columns: [...columns],
      filters: [...filters],
      offset,
      limit: run.bounds.page_rows
    })
    if (isFailure(got)) {
      if (pages.length === 0) return got
      const left = total === null ? undefined : Math.max(0, total - rows.length)
      run.gaps.push({
        reason: got.code === 'MAX_QUERIES' ? 'rows_not_fetched' : 'refused',
        what: `${what}: rows from offset ${offset} on`,
        ...(left === undefined ? {} : { count: left }),
        ...failed(got),
        ...(got.code === 'MAX_QUERIES'
          ? {
              detail: `max_queries (${run.bounds.max_queries}) reached while paging${total === null ? '' : `; ${total} rows match`}`
            }
          : {})
      })
      return { rows, pages, complete: false }
    }
    pages.push(got)
    const page = (got.capture.result['rows'] ?? []) as Array<Record<string, unknown>>
    page.forEach((row, index) => rows.push({ row, digest: got.digest, index }))
    notePartial(run, got, what, true)
    const next = got.capture.result['next_offset']
    if (got.capture.result['has_more'] !== true || typeof next !== 'number') return { rows, pages, complete: true }
    if (total === null && run.captures.length < run.bounds.max_queries) {
      const counted = await ask(run, { kind: 'database.count', table, filters: [...filters] })
      if (!isFailure(counted) && typeof counted.capture.result['count'] === 'number')
        total = counted.capture.result['count']
    }
    offset = next
  }
}
