/**
 * Running an evaluation: every bug of a suite becomes a case in `OUT/cases/<id>`, prepared and
 * investigated at its own commit (the profile's source binding with the bug's commit), N bugs at
 * a time. A bug that fails (blocked, exhausted, an error) is scored as it stands and the run goes
 * on; running again resumes: a finished case (concluded, exhausted, blocked) is kept, an unfinished
 * one continues. The scores are then computed from the cases alone (score.ts) and written as
 * results.json, summary.html and a report page per case.
 */
import { existsSync, promises as fsp } from 'node:fs'
import * as path from 'node:path'
import type { Profile } from '../adapters/config/profile.js'
import { initCase } from '../adapters/case-store/init.js'
import { openCaseAt } from '../adapters/case-store/at.js'
import { enrichmentConfig, prepareRevision, readInputs, type RevisionInputs } from '../commands/prepare.js'
import { startInvestigation } from '../commands/lifecycle-commands.js'
import { advance, type ModelFn } from '../investigation/loop.js'
import { settingsOf } from '../investigation/settings.js'
import { createProjectResearch, type ResearchOptions } from '../research/project-research.js'
import { caseReport } from '../report/case-report.js'
import { fail, must, thrownFailure } from '../failures/error.js'
import { changedOfAll, readSuite, type Bug, type ChangedRange } from './suite.js'
import { scoreCase, totalsOf, resultsText, type BugScore, type Results } from './score.js'
import { summaryHtml } from './summary.js'
import { scoreLine } from './table.js'
import { checkOutOutsideSuite, checkRun, writeRun, type RunModel } from './run-folder.js'
import { optional } from '../optional.js'
import { makeDirs } from '../adapters/make-dirs.js'

/** What an evaluation model knows of its bug: its id, its case and (for an oracle in tests) the truth. */
export interface EvalBug {
  readonly id: string
  readonly caseDir: string
  readonly changed: readonly ChangedRange[]
}

/** The model an evaluation runs: one model function per bug (a stateless model returns the same one). */
export type EvalModel = (bug: EvalBug) => ModelFn

export interface EvalOptions {
  readonly suite: string
  readonly out: string
  readonly profile: Profile
  /** The repository to investigate (default: the profile's [source] repository). */
  readonly repository?: string
  readonly model: EvalModel
  /** What identifies the model (run.json and results.json record it; a resume with another is refused). */
  readonly modelId: RunModel
  readonly concurrency?: number
  /** The turns of one investigation, in all (a resumed run continues up to it). */
  readonly maxTurns: number
  readonly openSource?: ResearchOptions['openSource']
  /** One line per bug as it finishes (and a line per failure). */
  readonly onProgress?: (line: string) => void
  /** Stops the run: the investigations under way stop after their current step, no bug is started. */
  readonly signal?: AbortSignal
}

const TERMINAL = new Set(['CONCLUDED', 'EXHAUSTED', 'BLOCKED'])
/** Blocks for a provider that could not be used: a run again tries them (see runBug). */
export const OUTAGES: ReadonlySet<string> = new Set(['MODEL_UNAVAILABLE', 'RESEARCH_UNAVAILABLE'])

/** The profile bound to one bug: its commit, in the repository named (the URL kept). */
export const profileAt = (profile: Profile, commit: string, repository: string | null): Profile => {
  const source = profile.source
  if (source === undefined && repository === null)
    fail('CONFIG_INVALID', 'the profile has no [source] section: name the repository with --repository PATH')
  return {
    ...profile,
    source:
      source === undefined
        ? { repository: repository as string, url: `file://${repository as string}`, commit }
        : { ...source, commit, ...(repository === null ? {} : { repository }) }
  }
}

const inputsOf = async (bug: Bug): Promise<RevisionInputs> => {
  const read = await readInputs(bug.reportFile, { ownFile: true })
  const listed = bug.truth.entities ?? []
  const key = (e: { type: string; id: number | string }): string => `${e.type}:${String(e.id)}`
  const entities = [...listed, ...(read.entities ?? []).filter((e) => !listed.some((l) => key(l) === key(e)))]
  const origin = read.origin ?? bug.truth.issue
  return { ...read, entities, ...(origin === undefined ? {} : { origin }) }
}

/** Runs (or resumes) one bug's case; a failure is told and left in the case as it stands. */
const runBug = async (bug: Bug, changed: readonly ChangedRange[], o: EvalOptions, repository: string | null) => {
  const caseDir = path.join(o.out, 'cases', bug.id)
  if (!existsSync(path.join(caseDir, 'case.json')))
    await initCase({
      dir: caseDir,
      caseId: bug.id,
      ...(bug.truth.title === undefined ? {} : { title: bug.truth.title })
    })
  const state = (await openCaseAt(caseDir)).cursor.state
  // A case blocked by an outage (the model or the research down, a key missing) is run again: the
  // cause may be fixed since; one that ended (or was blocked by its own answers) is kept.
  const outage = state.state === 'BLOCKED' && OUTAGES.has(state.reason ?? '')
  if (TERMINAL.has(state.state) && !outage) return { kept: true, failure: null }
  const profile = profileAt(o.profile, bug.truth.commit, repository)
  const research = createProjectResearch(profile, o.openSource === undefined ? {} : { openSource: o.openSource })
  try {
    if (state.state === 'NOT_STARTED') {
      if (!state.revisions.some((r) => r.completed))
        await prepareRevision(caseDir, research, must(enrichmentConfig(profile)), await inputsOf(bug))
      await startInvestigation(caseDir, { settings: must(settingsOf(profile)) })
    }
    const left = o.maxTurns - state.turn
    if (left <= 0) return { kept: false, failure: null }
    const r = await advance(caseDir, {
      model: o.model({ id: bug.id, caseDir, changed }),
      research,
      maxTurns: left,
      ...(outage ? { manualRetry: true } : {}),
      ...(o.signal === undefined ? {} : { signal: o.signal })
    })
    // the model's failure only when the model is what blocks the case (it stays recorded until an answer is accepted)
    return {
      kept: false,
      failure: r.state === 'BLOCKED' && r.reason === 'MODEL_UNAVAILABLE' ? r.last_model_failure : null
    }
  } finally {
    await research.close()
  }
}

/** A pool of `n` workers over `items`, in order of start; none starts once `signal` is aborted. */
const pool = async <A>(
  items: readonly A[],
  n: number,
  work: (a: A) => Promise<void>,
  signal?: AbortSignal
): Promise<void> => {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length && signal?.aborted !== true) {
      const item = items[next++] as A
      await work(item)
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(n, items.length)) }, worker))
}

/** Scores every bug of the suite from the cases under `out` and writes results.json, summary.html and the report pages. */
export const scoreRun = async (
  out: string,
  bugs: readonly Bug[],
  changed: ReadonlyMap<string, readonly ChangedRange[]>,
  suiteName: string,
  heads: ReadonlyMap<string, string> = new Map(),
  model?: RunModel
): Promise<Results> => {
  const scores: BugScore[] = []
  for (const bug of bugs) {
    const head = heads.get(bug.id)
    const m = head === undefined ? null : /^(\d+):(sha256:[0-9a-f]{64})$/.exec(head)
    const expect = m === null ? undefined : { seq: Number(m[1]), hash: m[2] as string }
    scores.push(await scoreCase(bug, path.join(out, 'cases', bug.id), changed.get(bug.id) ?? [], expect))
  }
  return {
    format: 'vba-eval-results',
    version: 1,
    suite: suiteName,
    // (none for a run whose run.json predates the model's record, so that its results.json is reproduced)
    ...optional('model', model),
    bugs: scores,
    totals: totalsOf(scores)
  }
}

/** Writes a report page per verified case and the summary linking them. */
export const writePages = async (out: string, results: Results): Promise<void> => {
  await makeDirs(path.join(out, 'reports'))
  for (const b of results.bugs)
    if (b.state !== 'MISSING')
      await fsp.writeFile(path.join(out, 'reports', `${b.id}.html`), await caseReport(path.join(out, 'cases', b.id)))
  await fsp.writeFile(path.join(out, 'summary.html'), summaryHtml(results))
}

/** Runs (or resumes) an evaluation and returns its results (also written under `out`). */
export const runEval = async (o: EvalOptions): Promise<Results> => {
  // Before the suite is read: a run inside it would be read as its bugs (and a resume refused).
  await checkOutOutsideSuite(o.out, o.suite)
  const bugs = await readSuite(o.suite)
  const repository = o.repository === undefined ? (o.profile.source?.repository ?? null) : path.resolve(o.repository)
  // Before anything runs: a run folder of another suite, repository or model is refused, and so is
  // a bad truth (a listed range past the end of its file); then run.json is written.
  const opened = await checkRun(o.out, o.suite, repository, o.modelId)
  const { changed, failures } = await changedOfAll(bugs, repository)
  if (opened.write) await writeRun(o.out, opened.run)
  const say = o.onProgress ?? (() => undefined)
  let done = 0
  await pool(
    bugs,
    o.concurrency ?? 1,
    async (bug) => {
      let note = ''
      const unreadable = failures.get(bug.id)
      try {
        if (unreadable !== undefined) fail('SOURCE_UNAVAILABLE', unreadable.replace(/^SOURCE_UNAVAILABLE: /, ''))
        const ran = await runBug(bug, changed.get(bug.id) ?? [], o, repository)
        note = ran.kept
          ? ' (kept from an earlier run)'
          : ran.failure === null
            ? ''
            : ` (the model: ${ran.failure.code}: ${ran.failure.message.slice(0, 300)})`
      } catch (e) {
        const f = thrownFailure(e)
        note = ` (failed: ${f.code}: ${f.message.slice(0, 300)})`
      }
      const score = await scoreCase(bug, path.join(o.out, 'cases', bug.id), changed.get(bug.id) ?? [])
      done++
      say(
        `[${done}/${bugs.length}] ${scoreLine(score)}${note}${o.signal?.aborted === true ? ' (stopped by a signal)' : ''}`
      )
    },
    o.signal
  )
  const results = await scoreRun(o.out, bugs, changed, path.basename(path.resolve(o.suite)), new Map(), o.modelId)
  await fsp.writeFile(path.join(o.out, 'results.json'), resultsText(results))
  await writePages(o.out, results)
  return results
}
