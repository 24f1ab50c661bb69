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
  LOCK_PRESENT: 'notice',
  RUN_PRESENT: 'notice',
  /**
   * A rule that could not be checked for some events (an old version lacks what it needs, no
   * binding was recorded): names the rule, why and the events. An error under `verify --strict`.
   */
  RULE_NOT_APPLIED: 'notice'
} as const

/**
 * Rule findings: an event that the library's deciders could not have produced from the state
 * before it, although the chain is intact (a forged or hand-edited case). One code per family;
 * `data.rule` names the rule (listed in case-format/SPEC.md).
 */
export const RULE_CODES = {
  RULE_ACTOR: 'error',
  RULE_LIFECYCLE: 'error',
  RULE_BUDGET: 'error',
  RULE_RESEARCH: 'error',
  RULE_TURN: 'error',
  RULE_REFERENCE: 'error',
  RULE_REVISION: 'error',
  RULE_COMMAND: 'error',
  RULE_TIME: 'error',
  RULE_VERSION: 'error'
} as const

/** Findings of a SQL store about what it keeps beside the log. */
export const STORE_CODES = {
  /** Event rows past the case row's head (a transaction never leaves them). */
  STORE_ROWS_BEYOND_HEAD: 'error',
  /** Command rows that the log does not hold, or with other spans. */
  STORE_COMMAND_ROWS: 'error',
  /** Queue columns that differ from the fold of the log. */
  STORE_QUEUE_MISMATCH: 'error'
} as const

/** Findings of `verify --against PROFILE`: the evidence re-derived from git and the database. */
export const EVIDENCE_CODES = {
  /** A capture differs from what the bound commit or snapshot answers now. */
  EVIDENCE_MISMATCH: 'error',
  /** A capture that could not be asked again (another snapshot, no provider), and why. */
  EVIDENCE_NOT_RECHECKED: 'notice'
} as const

/** A family of finding codes that are all errors. */
const errorCodes = <const C extends readonly string[]>(...codes: C): { readonly [K in C[number]]: 'error' } =>
  Object.fromEntries(codes.map((c) => [c, 'error'])) as { readonly [K in C[number]]: 'error' }

/** Findings against a receipt (seq, hash) kept outside the case: `verify --expect-head`. */
export const RECEIPT_CODES = errorCodes('HEAD_ROLLBACK', 'HEAD_FORK')

/**
 * Findings about who signed the commands (CommandSigned): a signature that does not hold where it
 * stands; with a trust file, a signer it does not allow; with `--require-signed`, an unsigned command.
 */
export const SIGNATURE_CODES = errorCodes('SIGNATURE_INVALID', 'SIGNER_UNTRUSTED', 'UNSIGNED_COMMAND')

/**
 * Findings of a signed head (`verify --expect-head NOTE --trust FILE`): a note of another case, a
 * signature by a trusted key that does not hold, a note that no allowed key signed.
 */
export const SIGNED_HEAD_CODES = errorCodes(
  'SIGNED_HEAD_OTHER_CASE',
  'SIGNED_HEAD_SIGNATURE_INVALID',
  'SIGNED_HEAD_UNTRUSTED'
)

/** @category cases */
export type RuleCode = keyof typeof RULE_CODES
/** @category cases */
export type SignatureCode = keyof typeof SIGNATURE_CODES
/** @category cases */
export type SignedHeadCode = keyof typeof SIGNED_HEAD_CODES
/** @category cases */
export type ReceiptCode = keyof typeof RECEIPT_CODES
/** @category cases */
export type FindingCode =
  | keyof typeof FINDING_CODES
  | RuleCode
  | ReceiptCode
  | keyof typeof STORE_CODES
  | keyof typeof EVIDENCE_CODES
  | SignatureCode
  | SignedHeadCode

const SEVERITY: Readonly<Record<FindingCode, Severity>> = {
  ...FINDING_CODES,
  ...RULE_CODES,
  ...RECEIPT_CODES,
  ...STORE_CODES,
  ...EVIDENCE_CODES,
  ...SIGNATURE_CODES,
  ...SIGNED_HEAD_CODES
}
/** @category cases */
export type Severity = 'error' | 'notice'

/** A coded, located observation about a case package (errors make it invalid; notices do not). @category cases */
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
): Finding => ({ code, severity: SEVERITY[code], message, ...where })

export const isError = (f: Finding): boolean => f.severity === 'error'

/**
 * Findings about the package's files: what is missing, cut short or changed on disk. HEAD_MISMATCH
 * is not one: a HEAD that does not name the log's last event often follows from a line of the log
 * that does not check (listed with the lines, after them).
 */
const FILE_LAYER: ReadonlySet<string> = new Set([
  'CASE_DECLARATION_MISSING',
  'CASE_DECLARATION_INVALID',
  'LOG_MISSING',
  'LOG_TRUNCATED',
  'HEAD_MISSING',
  'HEAD_INVALID',
  'OBJECT_MISSING',
  'OBJECT_DIGEST_MISMATCH',
  'OBJECT_SIZE_MISMATCH',
  'FOREIGN_FILE'
])

/**
 * How far from the bytes on disk a finding's cause lies: the package's files (0), the log's
 * lines and chain (1), what the rules and the evidence judge of what the lines hold (2), the
 * signatures (3). A later layer's finding often follows from an earlier one's: a log cut short
 * leaves its last command incomplete (RULE_COMMAND after LOG_TRUNCATED).
 */
export const findingLayer = (code: string): number =>
  FILE_LAYER.has(code)
    ? 0
    : code.startsWith('RULE_') || code.startsWith('EVIDENCE_')
      ? 2
      : code.startsWith('SIGN') || code === 'UNSIGNED_COMMAND'
        ? 3
        : 1

/**
 * The findings with the causes first: by {@link findingLayer}, in their order within a layer (a
 * stable sort). What a summary names as "first" is then a cause, not one of its consequences.
 */
export const causeFirst = (findings: readonly Finding[]): Finding[] =>
  findings
    .map((f, k) => ({ f, k, layer: findingLayer(f.code) }))
    .sort((a, b) => a.layer - b.layer || a.k - b.k)
    .map((x) => x.f)
