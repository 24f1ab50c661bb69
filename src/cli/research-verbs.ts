/** `vba research`: one project.query without a case or a model; prints the capture. */
import { plural } from '../projections/query-kinds/parts.js'
import { isUnavailable } from '../domain/research-failures.js'
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { terminalText } from './io.js'
import { readQuery } from './research-verb.js'
import { queryInCase, type CaseQueryResult } from '../commands/case-query.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { openCaseAt } from '../adapters/case-store/at.js'
import { systemEnv } from '../adapters/env.js'
import { FailureError, must } from '../failures/error.js'
import { enrichmentConfig, prepareRevision, readInputs } from '../commands/prepare.js'
import { provenanceText, untypedNumbers } from '../domain/extract.js'
import type { Out } from './case-verbs.js'
import { gapLine } from './facts-text.js'
import { caseWords, shellWord } from './next-step.js'
import { shownStore, type StoreOption } from './stores.js'
import { refuseBudgetBeforeStart, refuseSourceMistake, researchPreflight } from './research-preflight.js'
import { reservationOf } from '../commands/query-outcome.js'

/** Whose answer `vba case query` printed, when it is not this call's own. */
const ORIGIN_WORDS: Readonly<Record<CaseQueryResult['origin'], string>> = {
  own: '',
  resumed: ' (under a reservation recorded before, resumed by this call)',
  before: ' (recorded before under this command id: nothing ran, nothing was recorded)',
  concurrent: ' (recorded by another writer of this command id at the same time: this call recorded nothing)'
}

/** `vba case query DIR --config FILE --query FILE`: one project.query recorded in a case. */
export const caseQuery = async (
  io: Out,
  dir: CaseAt,
  opts: { config: string; query: string; commandId?: string }
): Promise<void> => {
  const profile = await loadProfile(opts.config)
  const query = await readQuery(opts.query)
  // A profile mistake (a commit the repository does not hold, another binding than the started
  // investigation's) is refused before a reservation is recorded; a different preparation is said.
  const handle = await openCaseAt(dir)
  const warning = await researchPreflight(handle.cursor.state, profile, opts.config, false)
  if (warning !== null) io.err(`warning: ${terminalText(warning)}`)
  const commandId = opts.commandId ?? `query-${systemEnv.newId()}`
  refuseBudgetBeforeStart(
    handle.cursor.state,
    profile,
    opts.config,
    opts.commandId !== undefined && (await reservationOf(handle, commandId)) !== null
  )
  const r = createProjectResearch(profile, { openSource: cliOpenSource })
  try {
    const result = await queryInCase(dir, r, query, commandId)
    if (result.outcome === 'failed' && result.failure !== undefined) {
      const retry = isUnavailable(result.failure)
        ? `; the reservation is kept: retry with --command-id ${commandId}`
        : ''
      const f = result.failure
      throw new FailureError({
        ...f,
        message: `${f.message} (recorded in the case, generation ${result.generation}, command ${commandId}${retry})`
      })
    }
    io.out(
      `recorded ${result.capture?.kind ?? 'capture'} as evidence ${result.evidenceId ?? '?'}${result.repeat === true ? ' (a repeat of earlier evidence, not new evidence)' : ''}${ORIGIN_WORDS[result.origin]}; generation ${result.generation}; command ${commandId}; receipt ${result.receipt.seq}:${result.receipt.hash}`
    )
  } finally {
    await r.close()
  }
}

/**
 * One title: the case's, given by `vba case init --title`. A report's own title is not a second one;
 * a line says so when they differ (null when they agree or the report has none).
 */
export const titleNotice = (caseTitle: string | undefined, reportTitle: string | undefined): string | null => {
  if (reportTitle === undefined || reportTitle === caseTitle) return null
  return caseTitle === undefined
    ? `title: the case has none (vba case init --title gives it); the report's own title ${JSON.stringify(reportTitle)} stays the report's`
    : `title: ${JSON.stringify(caseTitle)}, the case's (vba case init --title); the report's own title ${JSON.stringify(reportTitle)} stays the report's`
}

/** `vba case prepare DIR --config FILE --input REPORT.json [--again]`: a new revision, enriched and completed. */
export const casePrepare = async (
  io: Out,
  dir: CaseAt,
  opts: { config: string; input: string; extract?: boolean; again?: boolean } & StoreOption,
  ref: string = typeof dir === 'string' ? dir : dir.caseId
): Promise<void> => {
  const profile = await loadProfile(opts.config)
  const config = must(enrichmentConfig(profile))
  const inputs = await readInputs(opts.input)
  // A commit the repository does not hold would leave every source lookup of the enrichment out as an outage.
  await refuseSourceMistake(profile, opts.config)
  const store = shownStore(opts)
  const r = createProjectResearch(profile, { openSource: cliOpenSource })
  try {
    const p = await prepareRevision(dir, r, config, inputs, {
      extract: opts.extract !== false,
      again: opts.again === true
    })
    for (const x of p.extracted) io.out(`extracted ${terminalText(provenanceText(x))}`)
    // an id typed elsewhere (extracted at another mention, or listed) is not untyped
    const typed = new Set([...p.extracted, ...(inputs.entities ?? [])].map((x) => String(x.id)))
    const untyped = opts.extract === false ? [] : untypedNumbers(inputs.report, p.extracted, 10, typed)
    if (untyped.length > 0)
      io.out(
        `numbers of the report given no type: ${untyped.join(', ')} (no pattern recognised them; name the ones that are ids in "entities" of a REPORT.json to look them up)`
      )
    const title = titleNotice((await openCaseAt(dir)).declaration.title, inputs.title)
    if (title !== null) io.out(terminalText(title))
    for (const g of p.left_out) io.out(terminalText(gapLine(g)))
    const again = p.again_of === null ? '' : ` (the inputs of revision ${p.again_of} prepared again)`
    io.out(
      p.status === 'unchanged'
        ? `revision ${p.revision} already holds these inputs; nothing recorded (generation ${p.generation}); to enrich them again: vba case prepare ${caseWords(ref, store)} --config ${shellWord(opts.config)} --input ${shellWord(opts.input)} --again`
        : `revision ${p.revision}${again} completed: ${plural(p.facts, 'fact')} from ${plural(p.captures, 'query')}${p.complete ? '' : `, partial: ${plural(p.left_out.length, 'item')} left out (above)`}; generation ${p.generation}; receipt ${p.receipt.seq}:${p.receipt.hash}`
    )
  } finally {
    await r.close()
  }
}
