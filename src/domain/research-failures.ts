/**
 * Which research failures mean "the provider is unavailable" (retry later, block the case), as
 * opposed to an answer about the question: a refusal, or a timeout (the query was too broad; the
 * model may ask a narrower one, so a timeout is recorded as a failed query and its budget released).
 */
import type { Failure } from '../failures/failure.js'

export const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'DATABASE_UNAVAILABLE',
  'DATABASE_AUTH_FAILED',
  'CREDENTIALS_MISSING',
  'SOURCE_UNAVAILABLE'
])

/** True when a research failure is an outage rather than an answer about the question. */
export const isUnavailable = (f: Failure): boolean => UNAVAILABLE_CODES.has(f.code)
