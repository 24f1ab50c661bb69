/**
 * What `vba investigate` and `vba case query` check of a profile against the case before they
 * write anything: mistakes that would otherwise surface only after the case was started, a model
 * was paid and a query ran, and then as the wrong kind of failure.
 *
 * - A commit the repository does not hold (or a repository that is not there): the first source
 *   question would fail as SOURCE_UNAVAILABLE and block the case as an outage, retried in vain,
 *   and a case started under that profile is bound to the commit for good. Refused as the
 *   profile mistake it is (CONFIG_INVALID, exit 2), as `vba check` reports it.
 * - A profile whose research binding (repository URL and commit, the world database's client,
 *   databases and snapshot id) is not the one the started investigation is bound to: every capture
 *   would be refused by the rule research.binding after its query ran. Refused, naming both.
 * - A case prepared under another binding than the profile's, not started yet: the investigation
 *   would be bound to the profile's and the revision's facts would come from the other. Said as a
 *   warning (preparing again brings the facts to the profile's).
 * - An operator's query before the start that the budget the start records could not hold: the
 *   case could no longer be started (refuseBudgetBeforeStart).
 */
import type { Binding } from '../events/settings.js'
import { bindingOf, type Profile } from '../adapters/config/profile.js'
import type { CaseState } from '../domain/case-state.js'
import { checkSource } from '../research/check.js'
import { fail } from '../failures/error.js'
import * as E from 'fp-ts/lib/Either.js'
import { committedResearch, queryCost } from '../domain/budget.js'
import { settingsOf } from '../investigation/settings.js'

/** A binding's parts in words: the repository at its commit; the database's client, databases and snapshot. */
const sourceWords = (b: NonNullable<Binding['source']>): string => `${b.url} at ${b.commit.slice(0, 12)}`
const databaseWords = (d: NonNullable<Binding['database']>): string =>
  `${d.client} ${d.databases.join(', ')} (snapshot ${d.snapshot_id})`

/** A binding in words. */
const bindingWords = (b: Binding): string =>
  `${b.source === null ? 'no repository' : sourceWords(b.source)}; ${b.database === null ? 'no world database' : databaseWords(b.database)}`

/**
 * Where research under the profile's binding `now` would not be of the binding `was`, in words (empty
 * when none), as the rule research.binding judges a capture: a source capture by the repository's
 * URL and commit, a database capture by the client, the snapshot id and its database being one of
 * the bound ones. Only what the profile can ask is compared: a profile without [database] asks no
 * database question, and one whose databases include a bound one asks that one.
 */
export const bindingDifferences = (was: Binding, now: Binding): string[] => {
  const out: string[] = []
  const a = was.source
  const b = now.source
  if (b !== null && (a === null || a.url !== b.url || a.commit !== b.commit))
    out.push(`source: ${a === null ? 'none' : sourceWords(a)}, the profile has ${sourceWords(b)}`)
  const x = was.database
  const y = now.database
  if (
    y !== null &&
    (x === null ||
      x.client !== y.client ||
      x.snapshot_id !== y.snapshot_id ||
      !y.databases.some((d) => x.databases.includes(d)))
  )
    out.push(`database: ${x === null ? 'none' : databaseWords(x)}, the profile has ${databaseWords(y)}`)
  return out
}

/**
 * Refuses (CONFIG_INVALID) a profile whose [source] repository is not there or does not hold its
 * commit, as `vba check` finds it; a repository that cannot be read now is left to the run (an outage).
 */
export const refuseSourceMistake = async (profile: Profile, file: string): Promise<void> => {
  const mistake = (await checkSource(profile)).find((step) => step.outcome === 'mistake')
  if (mistake !== undefined)
    fail('CONFIG_INVALID', `${file}: ${mistake.text} (vba check --config ${file} checks the whole profile)`, {
      step: mistake.step,
      ...(mistake.code === undefined ? {} : { cause: mistake.code })
    })
}

/**
 * Refuses (throws a FailureError) a profile whose source cannot answer, or whose binding is not
 * the one research of the case is bound to: the started investigation's, and before the start the
 * last completed revision's (what `vba case query` records under). `runs`: the caller runs the
 * investigation (`vba investigate`): it starts one that has not started, which binds it to the
 * profile (a revision prepared under another binding is then a warning line, not a refusal), and
 * asks nothing of one that has ended. Null: nothing to say.
 * `file`: the profile's path, as given.
 */
export const researchPreflight = async (
  s: CaseState,
  profile: Profile,
  file: string,
  runs: boolean
): Promise<string | null> => {
  // A run of a case that has ended asks nothing (not even the repository).
  if (runs && (s.state === 'CONCLUDED' || s.state === 'EXHAUSTED')) return null
  await refuseSourceMistake(profile, file)
  const now = bindingOf(profile)
  const started = s.state === 'NOT_STARTED' ? null : (s.settings?.binding ?? null)
  const prepared = [...s.revisions].reverse().find((r) => r.completed)?.binding ?? null
  const bound = started ?? (runs ? null : prepared)
  if (bound !== null) {
    const differ = bindingDifferences(bound, now)
    if (differ.length > 0)
      fail(
        'CONFIG_INVALID',
        `${file}: research of this case is bound to ${bindingWords(bound)} (${started === null ? 'the revision it was prepared under' : 'since the investigation started'}), and research under this profile would not be (${differ.join('; ')}): every capture would be refused (rule research.binding); use the profile it ${started === null ? 'was prepared with, or prepare it again under this one (vba case prepare --again)' : 'started with'}`,
        { bound, profile: now }
      )
    return null
  }
  if (prepared === null) return null
  const differ = bindingDifferences(prepared, now)
  return differ.length === 0
    ? null
    : `the case was prepared under ${bindingWords(prepared)}, the profile has another (${differ.join('; ')}): the investigation will be bound to the profile's, and the facts of the revision come from the other (vba case prepare --again prepares them under this profile)`
}

/**
 * An operator's query before the investigation starts, checked against the budget the start will
 * record (the profile's): every unit it commits is charged to that budget, and a case whose
 * research before the start outgrows it can no longer be started (BUDGET_INSUFFICIENT) while a
 * top-up waits for the start. Refused (BUDGET_EXHAUSTED, exit 2) before anything is recorded. A
 * retry of a reservation already recorded (`retry`) commits nothing new.
 */
export const refuseBudgetBeforeStart = (s: CaseState, profile: Profile, file: string, retry: boolean): void => {
  if (s.state !== 'NOT_STARTED' || retry) return
  const start = settingsOf(profile)
  if (E.isLeft(start)) return
  const total = start.right.budget_total
  // What the query reserves now, before the start's costs apply (queryCost of a state without settings).
  const cost = queryCost(s)
  const committed = committedResearch(s.research)
  if (committed + cost > total)
    fail(
      'BUDGET_EXHAUSTED',
      `${committed} unit(s) of research are committed before the investigation starts, and a query before the start costs ${cost}: the budget the start records (${file}: [budget] total = ${total}) could not hold it, and the case could not be started; start the investigation first (vba investigate, which also runs the model), or raise [budget] total`,
      { committed, cost, total }
    )
}
