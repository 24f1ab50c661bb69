/** `vba check --config PROFILE`: the profile tried against the world it names, step by step. */
import { loadProfile } from '../adapters/config/profile.js'
import { checkProfile } from '../research/check.js'
import { CliExit, EXIT, terminalText } from './io.js'
import { jsonLine } from './json-line.js'
import type { Out } from './case-verbs.js'

const MARK = { ok: 'ok  ', warn: 'WARN', mistake: 'FIX ', down: 'DOWN' } as const

/**
 * Prints every resolved path and each step's outcome; exit 0 when all are fine, 2 when the profile
 * (or a name, path or credential it gives) is wrong, 3 when only a provider is down.
 */
export const checkVerb = async (io: Out, o: { config: string; json?: boolean }): Promise<void> => {
  const profile = await loadProfile(o.config)
  const report = await checkProfile(profile)
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
