/**
 * `vba investigate DIR --config P (--model-command CMD | --model-url URL --model NAME)`: starts the
 * investigation of a prepared case if needed, then runs the loop until CONCLUDED, EXHAUSTED or
 * BLOCKED (or --max-turns), one line per step, and the final state. Exit 0 concluded; 3 blocked
 * because the model or research is unavailable (the last failure's code and message are shown);
 * 5 blocked by the case's own state, exhausted, or stopped at --max-turns; 2, 4 as elsewhere.
 */
import { plural } from '../projections/query-kinds/parts.js'
import { loadProfile } from '../adapters/config/profile.js'
import { openCaseAt } from '../adapters/case-store/at.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { LEASE_MS, type CaseAt, type Lease } from '../adapters/case-store/store.js'
import { markRun } from '../adapters/case-store/run-marker.js'
import { weakConclusion } from './facts-text.js'
import { weakSupportText } from '../projections/report/support.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import type { Profile } from '../adapters/config/profile.js'
import { fail, must } from '../failures/error.js'
import { hostname } from 'node:os'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { advance, type AdvanceStep, type ModelFn } from '../investigation/loop.js'
import { startInvestigation, type AdvanceResult } from '../commands/lifecycle-commands.js'
import { commandModel, httpModel, type CommandModelEvent } from '../investigation/models.js'
import { apiKeyProblem, commandProgramProblem, endpointUrlProblem } from '../investigation/command-program.js'
import type { ModelAttemptEvent } from '../investigation/http-model.js'
import { DEFAULT_HEARTBEAT_MS, modelProgress } from './model-progress.js'
import { settingsOf, startSettings } from '../investigation/settings.js'
import { CliExit, EXIT, terminalText } from './io.js'
import { jsonLine } from './json-line.js'
import { shownStore, type StoreOption } from './stores.js'
import type { Out } from './case-verbs.js'
import { optional } from '../optional.js'
import { caseWords, nextSteps, shellWord } from './next-step.js'
import { sameJson } from '../commands/run.js'
import { lifecycleView } from '../projections/lifecycle-view.js'
import type { CaseState } from '../domain/case-state.js'
import { FailureError } from '../failures/error.js'
import { researchPreflight } from './research-preflight.js'

export interface InvestigateOptions {
  readonly config: string
  readonly modelCommand?: string
  readonly modelUrl?: string
  readonly model?: string
  readonly maxTurns: number
  readonly manualRetry?: boolean
  readonly json?: boolean
}

/** One line for people per step of an advance (a model turn, a research query, a resume). */
export const stepLine = (s: AdvanceStep): string => {
  switch (s.kind) {
    case 'turn':
      return `turn ${s.turn} (${s.phase}, prompt ${s.prompt_chars} characters): ${s.outcome}`
    case 'research':
      return `  research ${s.plan_id} ${s.query_kind}: ${s.outcome}`
    case 'resume':
      return `resumed into ${s.into}${s.manual_retry ? ' (manual retry)' : ''}`
    default: {
      const _never: never = s
      return JSON.stringify(_never)
    }
  }
}

/** What a case had spent: its model turns and tokens. */
export interface Spent {
  readonly turns: number
  readonly tokens: number
}

/**
 * The last line of a run: where the case stands, why, which model answered, and what was spent,
 * this run's counts and the whole case's told apart (`before`: the case when the run began, `after`: now).
 */
export const resultLine = (r: AdvanceResult, before?: Spent, after?: Spent): string => {
  const why =
    r.last_model_failure === null || r.state !== 'BLOCKED'
      ? ''
      : `; the model failed: ${r.last_model_failure.code}: ${r.last_model_failure.message}`
  const model = r.model === null ? '' : `, model ${r.model}`
  const run =
    before === undefined
      ? `this run ${plural(r.turns, 'model turn')}; the case ${r.tokens} tokens${model}`
      : `this run ${plural(r.turns, 'model turn')}, ${r.tokens - before.tokens} tokens; the case ${plural(after?.turns ?? before.turns + r.turns, 'turn')}, ${r.tokens} tokens${model}`
  return `${r.state}${r.reason === null ? '' : ` / ${r.reason}`}${r.retry_not_before === null ? '' : `, retry not before ${r.retry_not_before}`}${r.cancelled ? ' (stopped by a signal)' : ''}: ${run}, generation ${r.generation}, receipt ${r.receipt.seq}:${r.receipt.hash}${why}`
}

/** Exit 3 when a provider (the model, research) is unavailable, 5 when the case stopped by its own state. */
export const notConcludedExit = (r: AdvanceResult): number =>
  r.state === 'BLOCKED' && (r.reason === 'MODEL_UNAVAILABLE' || r.reason === 'RESEARCH_UNAVAILABLE')
    ? EXIT.UNAVAILABLE
    : EXIT.NOT_CONCLUDED

/** The model a verb runs: --model-command, --model-url with --model, or the profile's [model]. */
export const modelFrom = (
  profile: Profile,
  o: { readonly modelCommand?: string; readonly modelUrl?: string; readonly model?: string },
  onAttempt?: (e: ModelAttemptEvent) => void,
  onCommand?: (e: CommandModelEvent) => void
): ModelFn => {
  const command = o.modelCommand ?? profile.model.command
  const url = o.modelUrl ?? profile.model.url
  const name = o.model ?? profile.model.name
  if (o.modelCommand !== undefined && o.modelUrl !== undefined)
    fail('INVALID_ARGUMENT', 'give --model-command or --model-url, not both')
  if (o.modelUrl === undefined && command !== undefined) {
    // A program that cannot run is the operator's mistake, said before the case is touched (at
    // the first turn it was a model outage that blocked the case).
    const problem = commandProgramProblem(command, process.env, process.cwd())
    if (problem !== null)
      fail(
        o.modelCommand === undefined ? 'CONFIG_INVALID' : 'INVALID_ARGUMENT',
        `${problem}: ${o.modelCommand === undefined ? 'fix [model] command in the profile' : 'fix --model-command'}, or give the program's path`
      )
    return commandModel(command, {
      ...optional('timeoutMs', profile.model.timeout_ms),
      ...optional('onEvent', onCommand)
    })
  }
  if (url !== undefined) {
    if (name === undefined) fail('INVALID_ARGUMENT', '--model-url needs --model NAME (or [model] name in the profile)')
    const m = profile.model
    refuseEndpointMistake(url, o.modelUrl === undefined, m.api_key_env)
    return httpModel({
      url,
      model: name,
      ...optional('apiKeyEnv', m.api_key_env),
      ...optional('timeoutMs', m.timeout_ms),
      ...optional('maxAttempts', m.max_attempts),
      ...optional('maxTotalMs', m.max_total_ms),
      ...optional('temperature', m.temperature),
      ...optional('maxTokens', m.max_tokens),
      ...optional('jsonMode', m.json_mode),
      ...optional('onAttempt', onAttempt)
    })
  }
  return fail(
    'INVALID_ARGUMENT',
    'name the model: --model-command CMD, or --model-url URL --model NAME (or [model] in the profile)'
  )
}

/**
 * An endpoint the model could never be reached at, said before the case is touched (each was a
 * model outage after the investigation had started, retried in vain): a URL that is none, or not
 * http(s), or that holds credentials (the URL's origin is recorded with every answer: a key belongs
 * in `[model] api_key_env`), and an `api_key_env` naming a variable that is not set. The URL is
 * never echoed: it may hold a key.
 */
const refuseEndpointMistake = (url: string, fromProfile: boolean, apiKeyEnv: string | undefined): void => {
  const where = fromProfile ? '[model] url in the profile' : '--model-url'
  const problem = endpointUrlProblem(url)
  if (problem !== null) fail(fromProfile ? 'CONFIG_INVALID' : 'INVALID_ARGUMENT', `${where} ${problem}`)
  const key = apiKeyProblem(apiKeyEnv, process.env)
  if (key !== null) fail('CONFIG_INVALID', key)
}

/** The model flags of a run, as placeholders ('' when it used the profile's model). */
export const modelFlags = (o: {
  readonly modelCommand?: string
  readonly modelUrl?: string
  readonly model?: string
}): string =>
  o.modelCommand !== undefined
    ? ' --model-command CMD'
    : o.modelUrl !== undefined
      ? ` --model-url URL${o.model === undefined ? '' : ' --model NAME'}`
      : o.model !== undefined
        ? ' --model NAME'
        : ''

export const investigate = async (io: Out, dir: CaseAt, o: InvestigateOptions & StoreOption): Promise<void> => {
  const profile = await loadProfile(o.config)
  const progress = modelProgress(
    (value, text) => io.out(o.json === true ? jsonLine(value) : terminalText(text)),
    profile.model.heartbeat_ms ?? DEFAULT_HEARTBEAT_MS
  )
  const model = modelFrom(profile, o, progress.onAttempt, progress.onCommand)

  const handle = await openCaseAt(dir)
  // Before anything is written: a profile whose commit is not in its repository, or whose binding
  // is not the started investigation's, is refused; one the case was not prepared under is said.
  const warning = await researchPreflight(handle.cursor.state, profile, o.config, true)
  if (warning !== null)
    io.out(o.json === true ? jsonLine({ warning: { message: warning } }) : terminalText(`warning: ${warning}`))
  // In a store, the case is leased for the run: no worker of the fleet advances it meanwhile.
  let lease: Lease | undefined
  let renewal: NodeJS.Timeout | undefined
  const sql = typeof dir === 'string' ? null : (dir.store as Partial<SqlStore>)
  const stop = new AbortController()
  if (typeof dir !== 'string' && sql?.leaseCase !== undefined && sql.renew !== undefined) {
    const renew = sql.renew
    lease = await sql.leaseCase(dir.caseId, `vba-investigate@${hostname()}.${process.pid}`, LEASE_MS.default)
    renewal = setInterval(() => {
      if (lease !== undefined)
        renew(lease, LEASE_MS.default).then(
          (l) => {
            lease = l
          },
          () => stop.abort()
        )
    }, LEASE_MS.default / 3)
  }
  const leased = optional('lease', lease)
  // A directory holds no lease: its run marker tells vba status and vba serve who advances the case.
  const unmark = typeof dir === 'string' ? await markRun(dir, 'vba investigate') : null
  try {
    await runLeased(io, dir, o, profile, model, handle, leased, stop)
  } finally {
    await unmark?.().catch(() => undefined)
    progress.stop()
    if (renewal !== undefined) clearInterval(renewal)
    if (lease !== undefined && sql?.release !== undefined) await sql.release(lease).catch(() => undefined)
  }
}

const runLeased = async (
  io: Out,
  dir: CaseAt,
  o: InvestigateOptions & StoreOption,
  profile: Profile,
  model: ModelFn,
  handle: CaseHandle,
  leased: { lease?: Lease },
  stop: AbortController
): Promise<void> => {
  const out = (value: Record<string, unknown>, text: string): void => {
    io.out(o.json === true ? jsonLine(value) : terminalText(text))
  }
  const ref = typeof dir === 'string' ? dir : dir.caseId
  const store = shownStore(o)
  // The next run names the model this one was given (without the profile's it would go elsewhere):
  // as placeholders, since a command or URL may hold a secret that output must not show.
  const models = modelFlags(o)
  const runLine = `vba investigate ${caseWords(ref, store)} --config`
  const next = (s: CaseState): string[] =>
    nextSteps({ ...lifecycleView(s), prepared: s.revisions.some((r) => r.completed) }, ref, store).map((l) =>
      l
        .replaceAll(`${runLine} PROFILE`, `${runLine} ${shellWord(o.config)}${models}`)
        .replaceAll('--config PROFILE', `--config ${shellWord(o.config)}`)
    )
  refuseOtherContext(handle.cursor.state, profile, o.config)
  const research = createProjectResearch(profile, { openSource: cliOpenSource })
  const onSignal = (): void => stop.abort()
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  try {
    if (handle.cursor.state.state === 'NOT_STARTED') {
      const settings = must(await startSettings(profile, research))
      const generation = await startInvestigation(dir, { settings, ...leased })
      out(
        {
          started: {
            revision: handle.cursor.state.revisions.filter((r) => r.completed).pop()?.revision ?? null,
            generation
          }
        },
        `started the investigation (generation ${generation})`
      )
    }
    const r = await advance(dir, {
      model,
      research,
      signal: stop.signal,
      ...leased,
      maxTurns: o.maxTurns,
      ...(o.manualRetry === true ? { manualRetry: true } : {}),
      onStep: (s) => out({ step: s }, stepLine(s))
    }).catch((e: unknown) => {
      // Blocked until a retry time: not a conflict but a case that has not concluded (exit 5), and how it goes on.
      if (!(e instanceof FailureError) || e.failure.code !== 'RETRY_NOT_YET') throw e
      const steps = next(handle.cursor.state)
      out(
        { blocked: { ...e.failure, next: steps } },
        `vba: RETRY_NOT_YET: the case is blocked (${String(e.failure.data['reason'])}) until ${String(e.failure.data['retry_not_before'])}`
      )
      for (const l of steps) if (o.json !== true) out({}, l)
      throw new CliExit(EXIT.NOT_CONCLUDED)
    })
    // The run advanced its own view of the case: read where it stands now.
    const now = (await openCaseAt(dir)).cursor.state
    const steps = next(now)
    const begun = handle.cursor.state
    const before = { turns: begun.turn, tokens: begun.tokens.total }
    const after = { turns: now.turn, tokens: now.tokens.total }
    out(
      { result: { ...r, run: { turns: r.turns, tokens: r.tokens - before.tokens }, case: after, next: steps } },
      resultLine(r, before, after)
    )
    const weak = r.state === 'CONCLUDED' ? await weakConclusion(dir) : null
    if (weak !== null) out({ weak_support: weak }, `warning: ${weakSupportText(weak)}`)
    if (r.state !== 'CONCLUDED') {
      if (o.json !== true) for (const l of steps) out({}, l)
      throw new CliExit(notConcludedExit(r))
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await research.close()
  }
}

/**
 * A profile whose [source_analysis] differs from the one the case started with would have every
 * source.context answer refused to the model (CONTEXT_SETTINGS_DIFFER), which cannot fix that: it
 * is refused here, before a turn, naming each setting with both values.
 */
const refuseOtherContext = (s: CaseState, profile: Profile, file: string): void => {
  const started = s.settings?.source_context ?? null
  if (s.state === 'NOT_STARTED' || started === null) return
  const now = must(settingsOf(profile)).source_context
  if (now !== null && sameJson(now, started)) return
  const differ =
    now === null
      ? ['source.context is off in the profile (enabled = false or no [source])']
      : Object.keys({ ...started, ...now })
          .filter((k) => !sameJson((started as Record<string, unknown>)[k], (now as Record<string, unknown>)[k]))
          .map(
            (k) =>
              `${k}: the case started with ${JSON.stringify((started as Record<string, unknown>)[k])}, the profile has ${JSON.stringify((now as Record<string, unknown>)[k])}`
          )
  fail(
    'CONTEXT_SETTINGS_DIFFER',
    `${file}: [source_analysis] differs from the settings the investigation started with (${differ.join('; ')}); run it with the profile it started with`,
    { started, profile: now }
  )
}
