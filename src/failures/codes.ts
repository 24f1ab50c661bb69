/**
 * Every failure code the library can return, with what a caller should do about it:
 *
 * - `retryable`: the same call may succeed soon (another writer holds the case, the case moved on,
 *   a retry time has not passed). Re-read, decide again if needed, retry.
 * - `unavailable`: a provider or the environment cannot be used now (database or repository down,
 *   credentials missing, a full disk). Retry later; nothing was decided.
 * - `corrupt`: the case does not verify; do not write to it (docs/operations.md).
 * - `permanent`: the request itself is refused (bad input, or the case's state forbids it).
 *   Retrying the same call gives the same answer.
 * - `bug`: an internal error; please report it.
 */

/** @category Errors */
export type FailureKind = 'retryable' | 'unavailable' | 'corrupt' | 'permanent' | 'bug'

/** @category Errors */
export const FAILURE_CODES = {
  // bad input: arguments, files, profiles, queries
  INVALID_ARGUMENT: 'permanent',
  CONFIG_INVALID: 'permanent',
  CONFIG_NOT_FOUND: 'permanent',
  /**
   * An optional peer package (a database driver, the MCP SDK) that the feature asked for needs is not
   * installed; `data.package` names it and `data.feature` what needs it: `npm install` it.
   */
  PACKAGE_MISSING: 'permanent',
  INPUT_INVALID: 'permanent',
  QUERY_INVALID: 'permanent',
  /** A protocol message (MCP over stdio) over the size limit, not JSON, or not JSON-RPC: refused unread. */
  MESSAGE_TOO_LARGE: 'permanent',
  MESSAGE_NOT_JSON: 'permanent',
  MESSAGE_INVALID: 'permanent',
  /** An MCP request for a method, tool or prompt the server does not offer (tools/list and prompts/list say what it does). */
  METHOD_UNKNOWN: 'permanent',
  TOOL_UNKNOWN: 'permanent',
  PROMPT_UNKNOWN: 'permanent',
  QUERY_UNKNOWN_KIND: 'permanent',
  QUERY_UNREADABLE: 'permanent',
  PATH_INVALID: 'permanent',
  IDENTIFIER_INVALID: 'permanent',
  FILTER_INVALID: 'permanent',
  COLUMN_UNKNOWN: 'permanent',
  NOT_CANONICALIZABLE: 'permanent',
  REASON_REQUIRED: 'permanent',
  /** Text input (an argument, a query or input file, an archive entry's name) that is not valid UTF-8. */
  INPUT_NOT_UTF8: 'permanent',
  /** A part of a case or bag that must be a regular file is a symlink, FIFO, device or directory. */
  FILE_NOT_REGULAR: 'permanent',
  /** A file larger than its reader allows (a tag file, HEAD, case.json, a lock file). */
  FILE_TOO_LARGE: 'permanent',
  /** Enrichment's own bound (`max_queries`), named in coverage gaps. */
  MAX_QUERIES: 'permanent',
  // signing: keys, trust files, signed receipts
  /** A signing key file that is not an unencrypted OpenSSH Ed25519 key (or has no usable principal). */
  KEY_INVALID: 'permanent',
  /** A passphrase-protected key file that no SSH agent holds (SSH_AUTH_SOCK): add it with ssh-add, or use an unencrypted key. */
  KEY_ENCRYPTED: 'permanent',
  /** The SSH agent SSH_AUTH_SOCK names cannot be reached, or refused to list its keys or to sign. */
  KEY_AGENT_FAILED: 'unavailable',
  /** An allowed_signers file (or a principal-to-actor binding) that cannot be read; `data.line` names the line. */
  TRUST_INVALID: 'permanent',
  /** A signature (SSHSIG, or a signed note's) that does not hold. */
  SIGNATURE_INVALID: 'permanent',
  /** A signature that holds, by a key the trust file does not allow for what it signed. */
  SIGNER_UNTRUSTED: 'permanent',
  // research answers that refuse the question
  DATABASE_NOT_ALLOWED: 'permanent',
  TABLE_NOT_ALLOWED: 'permanent',
  TABLE_NOT_FOUND: 'permanent',
  RESULT_TOO_LARGE: 'permanent',
  DATABASE_ACCESS_DENIED: 'permanent',
  DATABASE_QUERY_FAILED: 'permanent',
  DATABASE_NOT_CONFIGURED: 'permanent',
  SOURCE_NOT_CONFIGURED: 'permanent',
  SOURCE_FILE_NOT_FOUND: 'permanent',
  SOURCE_NOT_READABLE: 'permanent',
  SOURCE_NOT_TEXT: 'permanent',
  SOURCE_FILE_TOO_LARGE: 'permanent',
  SOURCE_OBJECT_MISSING: 'permanent',
  /** A source.read whose start_line is past the file's last line. */
  SOURCE_LINES_PAST_END: 'permanent',
  SOURCE_CONTEXT_DISABLED: 'permanent',
  SOURCE_TREE_UNSAFE: 'permanent',
  /** vba index verify: there is no snapshot index of the commit to check. */
  SOURCE_INDEX_MISSING: 'permanent',
  CONTEXT_SETTINGS_DIFFER: 'permanent',
  DATABASE_UNSAFE_MODE: 'permanent',
  /** A query past `time_ms`: an answer about the query (narrow it), not an outage. */
  SOURCE_TIMEOUT: 'permanent',
  DATABASE_TIMEOUT: 'permanent',
  // providers and environment
  DATABASE_UNAVAILABLE: 'unavailable',
  DATABASE_AUTH_FAILED: 'unavailable',
  CREDENTIALS_MISSING: 'unavailable',
  SOURCE_UNAVAILABLE: 'unavailable',
  MODEL_CALL_FAILED: 'unavailable',
  MODEL_CALL_CANCELLED: 'retryable',
  MODEL_HTTP_ERROR: 'unavailable',
  MODEL_COMMAND_FAILED: 'unavailable',
  IO_ERROR: 'unavailable',
  // concurrency
  CASE_LOCKED: 'retryable',
  GENERATION_CONFLICT: 'retryable',
  /** The writer's clock is behind the case's last event: nothing was written. */
  CLOCK_BEHIND: 'retryable',
  RETRY_NOT_YET: 'retryable',
  LEASE_LOST: 'retryable',
  CASE_LEASED: 'retryable',
  CASE_NOT_LEASED: 'permanent',
  // the case: existence, integrity, writing
  CASE_NOT_FOUND: 'permanent',
  CASE_EXISTS: 'permanent',
  CASE_CORRUPT: 'corrupt',
  CASE_LOCK_STALE: 'corrupt',
  CASE_NOT_LOCKED: 'permanent',
  OBJECT_MISSING: 'corrupt',
  OBJECT_CORRUPT: 'corrupt',
  OBJECT_REF_INVALID: 'permanent',
  EVENT_TOO_LARGE: 'permanent',
  EVENT_UNKNOWN_TYPE: 'permanent',
  EVENT_UNKNOWN_VERSION: 'permanent',
  EVENT_DATA_INVALID: 'permanent',
  EVENT_ENVELOPE_INVALID: 'permanent',
  /** The writer's id source repeated an event id (a broken `clock`): refused, nothing written. */
  EVENT_ID_DUPLICATE: 'permanent',
  RULE_VIOLATION: 'permanent',
  COMMAND_ID_CONFLICT: 'permanent',
  COMMAND_DONE: 'permanent',
  // what the case's state forbids
  BUDGET_INVALID: 'permanent',
  BUDGET_INSUFFICIENT: 'permanent',
  /** The case's budget cannot pay for another query (an operator can top it up). */
  BUDGET_EXHAUSTED: 'permanent',
  CASE_CLOSED: 'permanent',
  RESERVATION_EXISTS: 'permanent',
  RESERVATION_NOT_OPEN: 'permanent',
  NOTHING_TO_CANCEL: 'permanent',
  INVESTIGATION_STARTED: 'permanent',
  INVESTIGATION_NOT_STARTED: 'permanent',
  CASE_NOT_PREPARED: 'permanent',
  CASE_NOT_ADVANCEABLE: 'permanent',
  CASE_NOT_BLOCKED: 'permanent',
  CASE_AWAITING_FEEDBACK: 'permanent',
  CASE_RESEARCH_BLOCKED: 'retryable',
  CASE_NOT_RESUMABLE: 'permanent',
  LAB_REQUEST_UNKNOWN: 'permanent',
  LAB_FEEDBACK_RECORDED: 'permanent',
  REVISION_NOT_OPEN: 'permanent',
  REVISION_COMPLETED: 'permanent',
  // transport
  ARCHIVE_NOT_FOUND: 'permanent',
  ARCHIVE_INVALID: 'permanent',
  ARCHIVE_TOO_LARGE: 'permanent',
  ARCHIVE_ENTRY_UNSAFE: 'permanent',
  ARCHIVE_ENTRY_TYPE: 'permanent',
  ARCHIVE_DUPLICATE_ENTRY: 'permanent',
  ARCHIVE_NOT_CANONICAL: 'corrupt',
  BAG_INVALID: 'corrupt',
  BAG_NOT_A_CASE: 'permanent',
  OUTPUT_EXISTS: 'permanent',
  /** The directory an output is to be written into does not exist (or is not a directory). */
  OUTPUT_DIR_MISSING: 'permanent',
  // stores
  STORE_INVALID: 'permanent',
  STORE_UNAVAILABLE: 'unavailable',
  STORE_SCHEMA_OUTDATED: 'permanent',
  /** An object larger than the store's server accepts in one statement (MariaDB max_allowed_packet). */
  OBJECT_TOO_LARGE: 'permanent',
  INTERNAL_ERROR: 'bug'
} as const satisfies Readonly<Record<string, FailureKind>>

/** Every failure code (a literal union: `switch (e.code)` can be exhaustive). @category Errors */
export type FailureCode = keyof typeof FAILURE_CODES

/** What kind of failure a code is (see the module comment). @category Errors */
export const failureKind = (code: string): FailureKind =>
  (FAILURE_CODES as Readonly<Record<string, FailureKind>>)[code] ?? 'bug'

export const isFailureCode = (code: string): code is FailureCode => Object.hasOwn(FAILURE_CODES, code)
