/**
 * What an MCP tool call answers. A recorded capture: the compact text the investigation prompt
 * shows (the prompt's own renderer, captureText), headed by the evidence id it was recorded as,
 * and the capture itself as structured content. A refusal: a tool error whose text starts with the
 * failure code, says whether anything was recorded, and what the agent can change. Pure.
 */
import { failure, failureKind, type Failure } from '../failures/failure.js'
import type { Capture } from '../events/capture.js'
import { renderCapture } from '../projections/capture-text.js'
import type { CaseQueryResult } from '../commands/case-query.js'

/** A tools/call result (the subset of the MCP type this server produces). */
export interface ToolAnswer {
  readonly content: ReadonlyArray<{ readonly type: 'text'; readonly text: string }>
  readonly structuredContent?: Readonly<Record<string, unknown>>
  readonly isError?: boolean
}

/** The resource URI of one piece of evidence. */
export const evidenceUri = (id: string): string => `vba://evidence/${id}`

const budgetText = (left: number | null): string => (left === null ? 'no budget limit' : `budget left: ${left}`)

const requesterText = (r: CaseQueryResult['reservation']): string =>
  r === null
    ? ''
    : `the reservation at seq ${r.seq}${r.requester === null ? '' : ` made for ${r.requester.name}${r.requester.version === '' ? '' : ` ${r.requester.version}`}`}`

/** The first line of an answer: which evidence it is, whose answer it is (as the log says), and what it cost. */
export const evidenceHeader = (
  r: Pick<CaseQueryResult, 'evidenceId' | 'repeat' | 'answeredFromCase' | 'budgetLeft' | 'origin' | 'reservation'>
): string => {
  const id = r.evidenceId ?? '?'
  const as = r.repeat === true ? `a repeat of earlier evidence ${id}` : 'new evidence'
  if (r.origin === 'concurrent')
    return `${id}: answered from the case: another writer asked the same question at the same time and its answer was recorded first, as ${as} (under ${requesterText(r.reservation) || 'the same command id'}); this call recorded nothing and spent no budget (${budgetText(r.budgetLeft)})`
  if (r.answeredFromCase)
    return `${id}: answered from the case (this exact call was recorded before; nothing ran, no budget spent; ${budgetText(r.budgetLeft)})`
  const resumed =
    r.origin === 'resumed'
      ? ` under ${requesterText(r.reservation) || 'a reservation recorded before'}, resumed by this call`
      : ''
  if (r.repeat === true)
    return `${id}: the same answer as earlier evidence ${id} (recorded as its repeat, not as new evidence${resumed}; ${budgetText(r.budgetLeft)})`
  return `${id}: new evidence, recorded in the case${resumed === '' ? '' : ` ${resumed.trimStart()}`} (${budgetText(r.budgetLeft)})`
}

/** The compact text of a capture under its header line. */
export const captureAnswerText = (header: string, capture: Capture): string =>
  [header, ...renderCapture(capture)].join('\n')

/** What the agent can change, by failure code (then by kind). */
const HINTS: Readonly<Record<string, string>> = {
  QUERY_INVALID: "change the arguments to match the tool's input schema (unknown members are refused, not ignored)",
  PATH_INVALID: 'give a path relative to the repository root, without .., ., empty segments, backslashes or .git',
  IDENTIFIER_INVALID: 'use a plain table or column name (database_schema lists the columns)',
  FILTER_INVALID:
    'fix the filter: an operator the column type allows, at most the allowed number of filters and in-values',
  COLUMN_UNKNOWN: 'name columns the table has (database_schema lists them)',
  TABLE_NOT_ALLOWED: 'ask about an allowed table (database_tables lists them)',
  DATABASE_NOT_ALLOWED: 'ask one of the configured databases (see the tool description)',
  TABLE_NOT_FOUND: 'ask about a table that exists (database_tables lists the allowed ones that do)',
  RESULT_TOO_LARGE: 'narrow the query: fewer columns, a smaller limit, a path_prefix, a shorter line window',
  SOURCE_FILE_NOT_FOUND: 'give a path that exists at this commit (source_files finds paths)',
  SOURCE_NOT_READABLE: 'read a regular file: symlinks and submodules are listed, never read as source',
  SOURCE_NOT_TEXT: 'this file is binary; search text files instead',
  SOURCE_FILE_TOO_LARGE: 'this file is over the size limit; search it with source_search instead of reading it',
  SOURCE_TIMEOUT:
    'narrow the query (a path_prefix, a more specific text); the same call again gives the same recorded answer',
  DATABASE_TIMEOUT:
    'narrow the query (more selective filters, fewer rows); the same call again gives the same recorded answer',
  BUDGET_EXHAUSTED:
    "nothing in the request: the case's budget is spent. Evidence recorded so far stays readable at no cost (case_status, vba://evidence/<id>); an operator can top the budget up",
  CASE_CLOSED:
    'nothing in the request: the investigation is closed to research. Evidence recorded so far stays readable (case_status, vba://evidence/<id>)',
  COMMAND_ID_CONFLICT: 'nothing in the request; an operator should look at the case',
  CASE_LEASED: 'retry the same call once the worker has released the case; nothing was recorded',
  CASE_LOCKED: 'retry the same call in a moment; nothing was recorded twice',
  CASE_LOCK_STALE:
    'nothing in the request: a writer of the case was stopped mid-write and left its lock; an operator must check the case (vba verify) and lift the lock (vba case unlock), then the same call resumes',
  GENERATION_CONFLICT: 'retry the same call; nothing was recorded twice'
}

const hintOf = (f: Failure): string => {
  const hint = HINTS[f.code]
  if (hint !== undefined) return hint
  switch (failureKind(f.code)) {
    case 'permanent':
      return 'change the request; the same request gives the same answer'
    case 'retryable':
      return 'retry the same call in a moment'
    case 'unavailable':
      return 'retry the same call later: it resumes the same reservation at no extra cost'
    case 'corrupt':
      return 'stop: the case does not verify, an operator must look at it'
    case 'bug':
      return 'stop and report this error'
    default:
      return 'change the request'
  }
}

const errorAnswer = (f: Failure, recordedHow: string): ToolAnswer => ({
  content: [{ type: 'text', text: `${f.code}: ${f.message}\n${recordedHow}\nWhat you can change: ${hintOf(f)}.` }],
  isError: true
})

/** A refusal before anything was recorded (an invalid request, a spent budget, a locked case). */
export const refusalAnswer = (f: Failure): ToolAnswer => errorAnswer(f, 'Nothing was recorded in the case.')

/** The answer to a query recorded in the case: its capture as evidence, or the recorded failure. */
export const queryAnswer = (r: CaseQueryResult): ToolAnswer => {
  if (r.outcome === 'failed' || r.capture === undefined || r.evidenceId === undefined) {
    const f = r.failure ?? failure('INTERNAL_ERROR', 'the recorded capture could not be read')
    const how =
      failureKind(f.code) === 'unavailable'
        ? 'Recorded in the case as an outage; the reservation is kept: the same call later retries it at no extra cost.'
        : r.origin === 'concurrent'
          ? 'Another writer asked the same question at the same time; its refusal was recorded first. This call recorded nothing and spent no budget.'
          : r.answeredFromCase
            ? 'This exact call was refused before (recorded in the case); no budget was spent.'
            : 'Recorded in the case as a refused query; its budget was released.'
    return errorAnswer(f, how)
  }
  return {
    content: [{ type: 'text', text: captureAnswerText(evidenceHeader(r), r.capture) }],
    structuredContent: {
      evidence_id: r.evidenceId,
      repeat: r.repeat ?? false,
      answered_from_case: r.answeredFromCase,
      budget_left: r.budgetLeft,
      capture: r.capture
    }
  }
}

/**
 * Arguments a tool's input schema refuses: a JSON-RPC error -32602 whose message starts with the
 * failure code (the SDK sends `code` and `message` as they are). Nothing is recorded for it.
 */
export class InvalidParams extends Error {
  readonly code = -32602
  constructor(message: string) {
    super(message)
    this.name = 'InvalidParams'
  }
}
