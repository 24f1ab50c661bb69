/**
 * `vba eval` and `vba eval score`: run an evaluation with a model (a command, an OpenAI-compatible
 * endpoint, or the built-in baseline) and print its table; recompute a run's scores from its
 * cases and say whether they reproduce its results.json byte for byte. Exit 0; 1 when a case does
 * not verify or the recomputed results differ; 2 for bad input.
 */
import { existsSync } from 'node:fs'
import * as path from 'node:path'
import { loadProfile } from '../adapters/config/profile.js'
import { fail } from '../failures/error.js'
import { openSourceResearch } from '../research/source/open.js'
import { OUTAGES, runEval, scoreRun, type EvalModel } from '../eval/run.js'
import { programOf } from '../investigation/models.js'
import { endpointOrigin, readRunFile, type RunFile, type RunModel } from '../eval/run-folder.js'
import type { Profile } from '../adapters/config/profile.js'
import * as E from 'fp-ts/lib/Either.js'
import { parseBoundedJson } from '../events/bounds.js'
import { readNamedFile } from '../adapters/regular-file.js'
import { prepareOutput, writeOutputFile } from '../adapters/output.js'
import { baselineModel } from '../eval/baseline-model.js'
import { changedOfAll, readSuite } from '../eval/suite.js'
import { resultsText, type Results } from '../eval/score.js'
import { resultsTable } from '../eval/table.js'
import { modelFrom } from './investigate-verb.js'
import { printNotice } from './source-open.js'
import { CliExit, EXIT, terminalText } from './io.js'
import type { Out } from './case-verbs.js'
import { optional } from '../optional.js'

export interface EvalRunOptions {
  readonly config: string
  readonly out: string
  readonly repository?: string
  readonly baseline?: boolean
  readonly modelCommand?: string
  readonly modelUrl?: string
  readonly model?: string
  readonly concurrency: number
  readonly maxTurns: number
  readonly json?: boolean
}

export interface EvalScoreOptions {
  readonly suite?: string
  readonly repository?: string
  readonly out?: string
  /** Replace an existing regular file at `out`. */
  readonly force?: boolean
  readonly json?: boolean
}

/**
 * What identifies the model `o` names (as modelFrom, which has checked the flags, chooses it): the
 * baseline; a command by its program name only; an endpoint by its URL's origin and the model name.
 */
const runModelOf = (profile: Profile, o: EvalRunOptions): RunModel => {
  if (o.baseline === true) return { kind: 'baseline' }
  const command = o.modelCommand ?? profile.model.command
  if (o.modelUrl === undefined && command !== undefined) return { kind: 'command', program: programOf(command) }
  return {
    kind: 'http',
    origin: endpointOrigin(o.modelUrl ?? profile.model.url ?? ''),
    name: o.model ?? profile.model.name ?? ''
  }
}

const print = (io: Out, r: Results, json: boolean | undefined): void => {
  if (json === true) io.out(resultsText(r).trimEnd())
  else for (const l of resultsTable(r)) io.out(terminalText(l))
}

export const evalRun = async (io: Out, suite: string, o: EvalRunOptions): Promise<void> => {
  const profile = await loadProfile(o.config)
  if (o.baseline === true && (o.modelCommand !== undefined || o.modelUrl !== undefined))
    fail('INVALID_ARGUMENT', 'give --baseline or a model (--model-command, --model-url), not both')
  const fn = o.baseline === true ? null : modelFrom(profile, o)
  const model: EvalModel = fn === null ? baselineModel : () => fn
  // SIGINT or SIGTERM: the investigations under way stop after their step, no bug is started; run again to resume.
  const stop = new AbortController()
  const onSignal = (): void => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const results = await runEval({
    suite,
    out: o.out,
    profile,
    ...optional('repository', o.repository),
    model,
    modelId: runModelOf(profile, o),
    concurrency: o.concurrency,
    maxTurns: o.maxTurns,
    signal: stop.signal,
    openSource: (p, options) => openSourceResearch(p, { ...options, onNotice: printNotice }),
    onProgress: (line) => (o.json === true ? io.err(terminalText(line)) : io.out(terminalText(line)))
  }).finally(() => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  })
  print(io, results, o.json)
  if (o.json !== true)
    io.out(terminalText(`results: ${path.join(o.out, 'results.json')}; summary: ${path.join(o.out, 'summary.html')}`))
  if (stop.signal.aborted) {
    io.err('vba: stopped by a signal: run the same command again to resume')
    throw new CliExit(EXIT.NOT_CONCLUDED)
  }
  // Scores of a run in which no bug could be investigated measure the outage, not the model.
  if (results.bugs.every((b) => b.state === 'MISSING' || (b.state === 'BLOCKED' && OUTAGES.has(b.reason ?? '')))) {
    io.err(
      'vba: no bug of the suite could be investigated: every one is blocked by an outage or has no case (the lines above say why); run the same command again once the model and the research answer'
    )
    throw new CliExit(EXIT.UNAVAILABLE)
  }
}

/**
 * The most the results.json of a run may hold (read back to compare with the new one): a suite's
 * results are some KiB a bug, so this is far over any suite; a link to /dev/zero is refused unread.
 */
const MAX_RESULTS_BYTES = 256 << 20

export const evalScore = async (io: Out, dir: string, o: EvalScoreOptions): Promise<void> => {
  // An --out that would be refused is refused before the cases are verified and scored.
  if (o.out !== undefined) await prepareOutput(o.out, { force: o.force === true })
  const runFile = path.join(dir, 'run.json')
  const run: Partial<RunFile> = existsSync(runFile) ? await readRunFile(runFile) : {}
  const suite = o.suite ?? run.suite
  if (suite === undefined) fail('INPUT_INVALID', `${dir} has no run.json naming its suite: give --suite`)
  const repository = o.repository === undefined ? (run.repository ?? null) : path.resolve(o.repository)
  const bugs = await readSuite(suite)
  const { changed, failures } = await changedOfAll(bugs, repository)
  for (const [id, message] of failures) io.err(terminalText(`${id}: the truth cannot be read: ${message}`))
  const published = path.join(dir, 'results.json')
  const before = existsSync(published)
    ? (await readNamedFile(published, { maxBytes: MAX_RESULTS_BYTES, code: 'INPUT_INVALID' })).toString('utf8')
    : null
  // The heads the published results name: a case rolled back, forked or re-chained since is a finding.
  const heads = new Map<string, string>()
  if (before !== null) {
    const published = parseBoundedJson(before)
    if (E.isLeft(published)) fail('INPUT_INVALID', `${path.join(dir, 'results.json')}: ${published.left}`)
    const bugs = (published.right as Partial<Results> | null)?.bugs
    for (const b of Array.isArray(bugs) ? bugs : [])
      if (typeof b?.head === 'string' && typeof b.id === 'string') heads.set(b.id, b.head)
  }
  const results = await scoreRun(dir, bugs, changed, path.basename(path.resolve(suite)), heads, run.model)
  const text = resultsText(results)
  if (o.out !== undefined) await writeOutputFile(o.out, text, 'report', { force: o.force === true })
  print(io, results, o.json)
  const same = before === text
  const say = o.json === true ? io.err : io.out
  say(
    before === null
      ? `${dir} has no results.json to compare with`
      : same
        ? 'results.json reproduced byte for byte from the cases'
        : 'results.json DIFFERS from the scores recomputed from the cases'
  )
  if (!same || results.totals.unverified > 0) throw new CliExit(EXIT.FINDINGS)
}
