/**
 * Verification findings. A finding is a coded, located observation about a case package; errors
 * make a case invalid, notices (crash leftovers that were never acknowledged) do not.
 */

/** Every finding code verification can produce (documented in case-format/SPEC.md). */
export const FINDING_CODES = {
  CASE_DECLARATION_MISSING: 'error',
  CASE_DECLARATION_INVALID: 'error',
  LOG_MISSING: 'error',
  LOG_TRUNCATED: 'error',
  HEAD_MISSING: 'error',
  HEAD_INVALID: 'error',
  HEAD_MISMATCH: 'error',
  EVENT_MALFORMED: 'error',
  EVENT_NOT_CANONICAL: 'error',
  EVENT_ENVELOPE_INVALID: 'error',
  EVENT_HASH_MISMATCH: 'error',
  EVENT_UNKNOWN_TYPE: 'error',
  EVENT_UNKNOWN_VERSION: 'error',
  EVENT_DATA_INVALID: 'error',
  EVENT_ID_DUPLICATE: 'error',
  COMMAND_SPLIT: 'error',
  SEQ_GAP: 'error',
  SEQ_REORDERED: 'error',
  CHAIN_BROKEN: 'error',
  OBJECT_REF_INVALID: 'error',
  OBJECT_MISSING: 'error',
  OBJECT_DIGEST_MISMATCH: 'error',
  OBJECT_SIZE_MISMATCH: 'error',
  FOREIGN_FILE: 'error',
  TORN_TAIL: 'notice',
  UNACKNOWLEDGED_TAIL: 'notice',
  ORPHAN_OBJECT: 'notice',
  TEMP_FILE_LEFTOVER: 'notice',
  LOCK_PRESENT: 'notice'
} as const

export type FindingCode = keyof typeof FINDING_CODES
export type Severity = 'error' | 'notice'

export interface Finding {
  readonly code: FindingCode
  readonly severity: Severity
  readonly message: string
  /** Case-relative path of the file concerned. */
  readonly path?: string
  /** 1-based line number in events.jsonl. */
  readonly line?: number
  readonly seq?: number
  readonly data?: Readonly<Record<string, unknown>>
}

/** Builds a finding with the severity its code carries. */
export const finding = (
  code: FindingCode,
  message: string,
  where: Omit<Finding, 'code' | 'severity' | 'message'> = {}
): Finding => ({ code, severity: FINDING_CODES[code], message, ...where })

export const isError = (f: Finding): boolean => f.severity === 'error'
