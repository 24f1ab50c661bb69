/** Which research failures mean "the provider is unavailable" (retry later, block the case). */
import type { Failure } from './failure.js'

export const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'DATABASE_UNAVAILABLE',
  'DATABASE_TIMEOUT',
  'CREDENTIALS_MISSING',
  'SOURCE_UNAVAILABLE',
  'SOURCE_TIMEOUT'
])

/** True when a research failure is an outage rather than a bad question. */
export const isUnavailable = (f: Failure): boolean => UNAVAILABLE_CODES.has(f.code)
