/**
 * project-query-v1: the only questions a model can ask. The io-ts codecs are the contract; a
 * request is decoded from `unknown`, and a member the contract does not name (a repository, a
 * ref, a host, a raw SQL string) is refused rather than ignored.
 */
import type * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { describeErrors } from '../events/decode.js'
import { boundsViolation } from '../events/bounds.js'
import { QUERY_REQUESTS, type DatabaseQuery, type ProjectQuery, type QueryKind } from '../events/query-requests.js'

export * from '../events/query-requests.js'

const CODECS: Readonly<Record<QueryKind, t.Mixed>> = QUERY_REQUESTS

export const QUERY_KINDS = Object.keys(CODECS) as readonly QueryKind[]

/** The codec of each query kind (the contract; JSON Schemas are generated from them). */
export const QUERY_CODECS: Readonly<Record<QueryKind, t.Mixed>> = CODECS

/** Member names a codec allows, at the top level. */
const allowedKeys = (codec: t.Mixed): Set<string> => {
  const c = codec as unknown as { _tag: string; props?: Record<string, unknown>; types?: t.Mixed[] }
  if (c._tag === 'InterfaceType' || c._tag === 'PartialType') return new Set(Object.keys(c.props ?? {}))
  if (c._tag === 'IntersectionType') return new Set((c.types ?? []).flatMap((x) => [...allowedKeys(x)]))
  return new Set()
}

/** The members each kind allows, computed once. */
const ALLOWED: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(CODECS).map(([kind, codec]) => [kind, allowedKeys(codec)])
)

const FILTER_KEYS = new Set(['column', 'operator', 'value'])
const ORDER_KEYS = new Set(['column', 'direction'])

export type QueryFailure = Failure<'QUERY_INVALID' | 'QUERY_UNKNOWN_KIND'>

const invalid = (message: string, data: Record<string, unknown> = {}): E.Either<QueryFailure, never> =>
  E.left(failure('QUERY_INVALID', message, data))

/**
 * Decodes project.query arguments. Unknown kinds, unknown members (at the top level, in filters
 * and in order_by), wrong types and out-of-range numbers are refused with a coded error.
 */
export const decodeQuery = (u: unknown): E.Either<QueryFailure, ProjectQuery> => {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return invalid('a query is a JSON object')
  const bounds = boundsViolation(u)
  if (bounds !== null) return invalid(`a query is ${bounds.message}`, { limit: bounds.limit, depth: bounds.depth })
  const kind = (u as { kind?: unknown }).kind
  if (typeof kind !== 'string' || !Object.hasOwn(CODECS, kind)) {
    return E.left(
      failure('QUERY_UNKNOWN_KIND', `unknown query kind; expected one of ${QUERY_KINDS.join(', ')}`, {
        kind: typeof kind === 'string' ? kind.slice(0, 40) : typeof kind
      })
    )
  }
  const codec = CODECS[kind as ProjectQuery['kind']]
  const allowed = ALLOWED.get(kind) ?? new Set<string>()
  const extra = Object.keys(u).filter((k) => !allowed.has(k))
  if (extra.length > 0)
    return invalid(
      `${kind} does not take: ${extra
        .slice(0, 5)
        .map((k) => JSON.stringify(k.slice(0, 40)))
        .join(', ')}`,
      { members: extra.slice(0, 5).map((k) => k.slice(0, 40)) }
    )
  const record = u as Record<string, unknown>
  for (const [list, keys] of [
    ['filters', FILTER_KEYS],
    ['order_by', ORDER_KEYS]
  ] as const) {
    const items = record[list]
    if (Array.isArray(items)) {
      for (const item of items) {
        if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
          const bad = Object.keys(item).filter((k) => !keys.has(k))
          if (bad.length > 0)
            return invalid(
              `${list} entries do not take: ${bad
                .slice(0, 5)
                .map((k) => JSON.stringify(k.slice(0, 40)))
                .join(', ')}`
            )
        }
      }
    }
  }
  const decoded = codec.decode(u)
  if (E.isLeft(decoded)) return invalid(`${kind}: ${describeErrors(decoded.left)}`)
  // Text that is not valid Unicode can be neither compared, canonicalised nor recorded.
  if (holdsLoneSurrogate(decoded.right))
    return invalid(`${kind}: a value holds lone UTF-16 surrogates (not valid Unicode text)`)
  return E.right(decoded.right as ProjectQuery)
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** True when any string (value or key) inside `u` holds a lone UTF-16 surrogate. */
export const holdsLoneSurrogate = (u: unknown): boolean => {
  if (typeof u === 'string') return LONE_SURROGATE.test(u)
  if (Array.isArray(u)) return u.some(holdsLoneSurrogate)
  if (typeof u === 'object' && u !== null)
    return Object.entries(u).some(([k, v]) => LONE_SURROGATE.test(k) || holdsLoneSurrogate(v))
  return false
}

/** Narrows a query to the database half. */
export const isDatabaseQuery = (q: ProjectQuery): q is DatabaseQuery => q.kind.startsWith('database.')
