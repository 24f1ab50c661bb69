/**
 * What to run next for a case, as exact commands: one table by state and block reason, read by
 * `vba status`, `vba investigate` and `vba serve`, so every place that says a case is blocked also
 * says how it goes on (the retry time, `--manual-retry`, the feedback to give).
 */
import type { LifecycleView } from '../projections/lifecycle-view.js'
import { shellPath, shellWord } from '../adapters/shell-word.js'

export { shellPath, shellWord }

/**
 * A case as words of a command: a directory ({@link shellPath}), or a case id with `--store` and
 * the store (its URL as shown: never a password).
 */
export const caseWords = (ref: string, store?: string): string =>
  store === undefined ? shellPath(ref) : `${shellWord(ref)} --store ${shellWord(store)}`

/** What the next steps depend on. */
export type NextInput = Pick<LifecycleView, 'state' | 'retry_not_before' | 'lab_requests'> & {
  readonly reason: string | null
  /** A revision is completed (the case is prepared). */
  readonly prepared: boolean
}

/**
 * The next commands for a case named `ref` (a directory, or a case id with --store), each a line
 * `next: …`. `--config PROFILE` stands for the profile the case runs with; `store` (a store URL
 * without its password) is named after the case in every command.
 */
export const nextSteps = (v: NextInput, ref: string, store?: string): string[] => {
  // A case in a store is named by its id and the store (the URL as shown: never a password).
  const c = caseWords(ref, store)
  const run = `vba investigate ${c} --config PROFILE`
  const after = v.retry_not_before === null ? '' : ` after ${v.retry_not_before}`
  switch (v.state) {
    case 'NOT_STARTED':
      return v.prepared
        ? [`next: ${run} (starts the investigation with the model of the profile, or --model-url/--model-command)`]
        : [
            `next: vba case prepare ${c} --config PROFILE --input REPORT (the bug report: Markdown or text, a REPORT.json with its entities, or a gh issue view --json export)`
          ]
    case 'INTERPRETING':
    case 'INVESTIGATING':
      return [`next: ${run} (continues where the last run stopped)`]
    case 'CONCLUDED':
      return [
        `next: vba report ${c} --out report.html (the page for reviewers); vba export ${c} OUT.tar (a bag); vba verify ${c}`
      ]
    case 'EXHAUSTED':
      return [`next: vba report ${c} --out report.html (what the budget bought); the case takes no more turns`]
    case 'BLOCKED':
      break
    default:
      return []
  }
  switch (v.reason) {
    case 'MODEL_UNAVAILABLE':
      return [
        `next: ${run}${after} (the retry), or now: ${run} --manual-retry (once the model answers; vba resume ${c} --manual-retry only lifts the block)`
      ]
    case 'INVALID_LLM_RESPONSES':
      return [
        `next: ${run}${after}, or now: ${run} --manual-retry (recorded); see the refused answers in vba report ${c} --out report.html, and tell the model with vba case note ${c} TEXT`
      ]
    case 'RESEARCH_UNAVAILABLE':
      return [
        `next: vba check --config PROFILE (what is down), then ${run}${after}, or now: ${run} --manual-retry (retries the confirmed plan)`
      ]
    case 'AWAITING_TEST_FEEDBACK': {
      const waiting = v.lab_requests.filter((l) => l.feedback === null)
      if (waiting.length === 0)
        return [`next: vba status ${c} (names the lab tests), then vba case feedback ${c} ID 'WHAT THE TEST SHOWED'`]
      return [
        ...waiting.map(
          (l) => `next: vba case feedback ${c} ${shellWord(l.id)} 'WHAT THE TEST SHOWED' (lab test ${l.id})`
        ),
        `then: ${run}`
      ]
    }
    default:
      return []
  }
}

/**
 * The next steps for a case in a store that a worker (or a vba investigate) holds under a lease:
 * every writer but the holder is refused (CASE_LEASED) until the lease ends, so wait for it, or
 * give the case back for a holder known to have stopped (killed, its machine gone).
 */
export const leasedSteps = (ref: string, store: string | undefined, worker: string, until: string): string[] => [
  `next: wait: ${worker} advances the case; its lease ends at ${until} unless it renews it (a holder that stopped gives the case back then)`,
  `or, once ${worker} is known to have stopped: vba queue release ${caseWords(ref, store)} --worker ${shellWord(worker)} (then any worker takes the case up)`
]
