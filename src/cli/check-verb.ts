/** `vba check --config PROFILE`: the profile tried against the world it names, step by step. */
import { loadProfile, type Profile } from '../adapters/config/profile.js'
import { checkProfile, type CheckStep } from '../research/check.js'
import { apiKeyProblem, commandProgramProblem, endpointUrlProblem } from '../investigation/command-program.js'
import { programOf } from '../investigation/models.js'
import { CliExit, EXIT, terminalText } from './io.js'
import { jsonLine } from './json-line.js'
import type { Out } from './case-verbs.js'

const MARK = { ok: 'ok  ', warn: 'WARN', mistake: 'FIX ', down: 'DOWN' } as const

/**
 * The profile's `[model]`, as `vba investigate` will judge it before it touches a case: a command
 * whose program is not found, an endpoint URL that could never be reached, a key variable not set.
 */
const modelSteps = (profile: Profile): CheckStep[] => {
  const m = profile.model
  if (m.command !== undefined) {
    const problem = commandProgramProblem(m.command, process.env, process.cwd())
    return [
      problem === null
        ? { step: 'model', outcome: 'ok', text: `model command, program ${programOf(m.command)}` }
        : { step: 'model', outcome: 'mistake', code: 'CONFIG_INVALID', text: problem }
    ]
  }
  if (m.url === undefined)
    return [
      {
        step: 'model',
        outcome: 'ok',
        text: 'no [model]: name one when you run (--model-command, or --model-url with --model)'
      }
    ]
  const problem = endpointUrlProblem(m.url) ?? apiKeyProblem(m.api_key_env, process.env)
  if (problem !== null)
    return [
      {
        step: 'model',
        outcome: 'mistake',
        code: 'CONFIG_INVALID',
        text: problem.startsWith('[model]') ? problem : `[model] url ${problem}`
      }
    ]
  return [
    {
      step: 'model',
      outcome: 'ok',
      text: `endpoint ${new URL(m.url).origin}${m.name === undefined ? '' : `, model ${m.name}`}${m.api_key_env === undefined ? ', no key' : `, key from $${m.api_key_env}`} (not called: vba check asks no model)`
    }
  ]
}

/**
 * Prints every resolved path and each step's outcome; exit 0 when all are fine, 2 when the profile
 * (or a name, path or credential it gives) is wrong, 3 when only a provider is down.
 */
export const checkVerb = async (io: Out, o: { config: string; json?: boolean }): Promise<void> => {
  const profile = await loadProfile(o.config)
  const checked = await checkProfile(profile)
  const report = { ...checked, steps: [...checked.steps, ...modelSteps(profile)] }
  const mistakes = report.steps.filter((s) => s.outcome === 'mistake').length
  const down = report.steps.filter((s) => s.outcome === 'down').length
  const warnings = report.steps.filter((s) => s.outcome === 'warn').length
  const exit = mistakes > 0 ? EXIT.INPUT : down > 0 ? EXIT.UNAVAILABLE : EXIT.OK
  const verdict =
    exit === EXIT.OK
      ? warnings === 0
        ? 'the profile is ready'
        : `the profile is ready (${warnings} warning(s): WARN above)`
      : `${mistakes} to fix in the profile, ${down} provider(s) down (exit ${exit})`
  if (o.json === true) io.out(jsonLine({ ...report, mistakes, down, warnings, exit, verdict }))
  else {
    io.out(terminalText(`profile ${report.profile}`))
    io.out(terminalText(`relative paths resolve against the profile's folder ${report.folder}`))
    for (const p of report.paths.slice(1)) io.out(terminalText(`  ${p.key} = ${p.path}`))
    for (const s of report.steps)
      io.out(`${MARK[s.outcome]} ${s.step}: ${s.code === undefined ? '' : `${s.code}: `}${terminalText(s.text)}`)
    io.out(`check: ${verdict}`)
  }
  if (exit !== EXIT.OK) throw new CliExit(exit)
}
