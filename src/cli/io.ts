/** Terminal output helpers shared by the CLI verbs: exit codes, one-line errors, progress. */
import { isUtf8 } from 'node:buffer'
import type { SingleBar } from 'cli-progress'
import { failure, failureKind, type Failure } from '../failures/failure.js'
import { fail, thrownFailure } from '../failures/error.js'
import { VbaError } from '../api/errors.js'
import { showInvisible } from '../projections/visible-text.js'

/**
 * Text for a terminal: controls (ESC, BEL, BS, line breaks), bidi and zero-width characters from a
 * case, a model or a file shown as `<U+XXXX>` codes (the report's own function), so no answer can
 * move the cursor, clear the screen or reorder a line.
 */
export const terminalText = (text: string): string => showInvisible(text)

/**
 * Refuses `-` as an output file (`vba report --out`, `vba export`): these verbs write a file
 * atomically beside its final name and never standard output, so `-` would be a file named `-`.
 * `./-` names such a file on purpose.
 */
export const refuseStdoutName = (out: string): void => {
  if (out === '-')
    fail('INVALID_ARGUMENT', 'give a file name; - is not standard output here (./- names a file called -)')
}

/** Exit codes of every verb (documented in docs/usage.md). */
export const EXIT = {
  OK: 0,
  /** verify found errors; a case is corrupt */
  FINDINGS: 1,
  /** bad input: usage, arguments, a query, a missing case */
  INPUT: 2,
  /** a provider (git repository, database) is unavailable */
  UNAVAILABLE: 3,
  /** retryable: the case is locked or moved on (generation conflict) */
  CONFLICT: 4,
  /** vba investigate: the case is blocked, exhausted, or the loop stopped at --max-turns */
  NOT_CONCLUDED: 5,
  /** unexpected internal error (a bug) */
  INTERNAL: 70
} as const

/** The exit code of a failure follows its kind (see FAILURE_CODES); a stale lock needs an operator (4). */
export const exitCodeOf = (f: Failure): number => {
  if (f.code === 'CASE_LOCK_STALE') return EXIT.CONFLICT
  switch (failureKind(f.code)) {
    case 'retryable':
      return EXIT.CONFLICT
    case 'unavailable':
      return EXIT.UNAVAILABLE
    case 'corrupt':
      return EXIT.FINDINGS
    case 'bug':
      return EXIT.INTERNAL
    case 'permanent':
      return EXIT.INPUT
    default:
      return EXIT.INPUT
  }
}

/**
 * Ends a command with an exit code where no failure exists: verify's findings (1), a case that
 * did not conclude or nothing to claim (5). A failure travels as a thrown FailureError (or a
 * client's VbaError) and becomes its line and exit code in one place, {@link failureLine}.
 */
export class CliExit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`)
  }
}

/** `vba: CODE: message`, the one line a person sees for a failure. */
export const formatFailure = (f: Failure): string => `vba: ${f.code}: ${terminalText(f.message)}`

/**
 * The CLI's one conversion of what a command threw (a FailureError, the client's VbaError, or a
 * bug): its line for stderr and the exit code of its kind.
 */
export const failureLine = (e: unknown): { readonly line: string; readonly code: number } => {
  const f = e instanceof VbaError ? failure(e.code, e.message, e.data) : thrownFailure(e)
  return { line: formatFailure(f), code: exitCodeOf(f) }
}

/**
 * A progress bar on stderr when it is a terminal; silent otherwise. The bar's package loads only
 * for a terminal (a verb run by a script or a test never loads it); what is reported before it has
 * loaded is drawn as the bar's first state.
 */
export const progressBar = (label: string): { update: (done: number, total: number) => void; stop: () => void } => {
  if (process.stderr.isTTY !== true) return { update: () => undefined, stop: () => undefined }
  let bar: SingleBar | null = null
  let last: { done: number; total: number } | null = null
  let stopped = false
  let lastTotal = -1
  const draw = (done: number, total: number): void => {
    if (bar === null) return
    if (lastTotal < 0) bar.start(total, done)
    else if (total !== lastTotal) bar.setTotal(total)
    lastTotal = total
    bar.update(done)
  }
  void import('cli-progress').then(
    ({ default: cliProgress }) => {
      bar = new cliProgress.SingleBar(
        {
          format: `${label} [{bar}] {percentage}% {value}/{total}`,
          stream: process.stderr,
          clearOnComplete: true,
          hideCursor: true
        },
        cliProgress.Presets.shades_classic
      )
      if (last !== null && !stopped) draw(last.done, last.total)
    },
    () => undefined
  )
  return {
    update: (done, total) => {
      last = { done, total }
      draw(done, total)
    },
    stop: () => {
      stopped = true
      if (bar !== null && lastTotal >= 0) bar.stop()
    }
  }
}

/**
 * The position (1-based) of the first command-line argument that is not valid UTF-8, from the
 * process's raw arguments (Node has already replaced such bytes with U+FFFD in process.argv, so a
 * name given that way would silently become another name). `raw` are the NUL-separated bytes of
 * /proc/self/cmdline; `count` is how many arguments the command has.
 */
export const nonUtf8Argument = (raw: Buffer, count: number): number | null => {
  const parts: Buffer[] = []
  for (let s = 0, nul = raw.indexOf(0); nul >= 0; s = nul + 1, nul = raw.indexOf(0, s)) parts.push(raw.subarray(s, nul))
  const args = parts.slice(Math.max(0, parts.length - count))
  const bad = args.findIndex((a) => !isUtf8(a))
  return bad < 0 ? null : bad + 1
}
