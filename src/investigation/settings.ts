/** Investigation settings from the profile ([loop], [budget], [limits], the allowlist) and the source analysis contract. */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../failures/failure.js'
import type { InvestigationSettings } from '../events/settings.js'
import { bindingOf, type Profile } from '../adapters/config/profile.js'
import { analysisOf } from '../research/source/open.js'
import { recordedAnalysis } from '../research/source/common.js'
import type { ProjectResearch } from '../research/project-research.js'

/** The prompt version new investigations start with. */
export const CURRENT_PROMPT_VERSION = 'investigation_project_v2'

/**
 * The investigation settings a profile gives: budget, loop, the source.context contract, and
 * what the prompt's contract names (databases with their allowed tables, the limits of one query,
 * where code lives). They are recorded at the start and fixed for the investigation's life, so the
 * prompt renders from the log alone.
 * @category investigations
 */
export const settingsOf = (profile: Profile): E.Either<Failure, InvestigationSettings> => {
  const a = analysisOf(profile)
  const l = profile.limits
  const db = profile.database
  return E.right({
    prompt_version: CURRENT_PROMPT_VERSION,
    budget_total: profile.budget.total ?? 20,
    action_costs: { 'project.query': profile.budget.project_query ?? 1 },
    max_invalid_responses: profile.loop.max_invalid_responses ?? 3,
    retry_delay_ms: profile.loop.retry_delay_ms ?? 10 * 60 * 1000,
    prompt_max_chars: profile.loop.prompt_max_chars ?? 20_000,
    source_context: profile.source !== undefined && a.enabled ? recordedAnalysis(a) : null,
    max_tokens: profile.budget.max_tokens ?? null,
    contract: {
      source: profile.source === undefined ? null : { code_path_prefixes: [...a.code_path_prefixes] },
      databases:
        db === undefined
          ? []
          : db.databases.map((name) => ({ name, allowed_tables: [...(db.allowed_tables[name] ?? [])].sort() })),
      limits: {
        max_lines: l.max_lines,
        max_rows: l.max_rows,
        max_result_bytes: l.max_result_bytes,
        max_matches: l.max_matches,
        max_files: l.max_files,
        max_line_chars: l.max_line_chars,
        max_in_values: l.max_in_values,
        max_filters: l.max_filters,
        max_columns: l.max_columns
      }
    },
    count_refusals: true,
    answer_repeats_from_case: true,
    binding: bindingOf(profile),
    newest_result_whole: true,
    search_options: true,
    exact_wording: true
  })
}

/**
 * The settings an investigation starts with: those of the profile, with what the start found of
 * the snapshot in the contract (the allowed tables it does not hold, asked through research's
 * database.tables) and what the profile's [contract] says cannot be reached. When the database
 * cannot be asked, the contract names neither (as before the check).
 * @category investigations
 */
export const startSettings = async (
  profile: Profile,
  research: Pick<ProjectResearch, 'query'>
): Promise<E.Either<Failure, InvestigationSettings>> => {
  const base = settingsOf(profile)
  if (E.isLeft(base) || base.right.contract === null) return base
  const c = base.right.contract
  const absent: Array<{ name: string; tables: string[] }> = []
  if (c.databases.length > 0) {
    const got = await research.query({ kind: 'database.tables' })()
    if (E.isLeft(got)) return base
    const missing = (got.right.result['allowed_but_missing'] ?? []) as ReadonlyArray<{
      database: string
      table: string
    }>
    for (const d of c.databases) {
      const tables = missing.filter((m) => m.database === d.name).map((m) => m.table)
      if (tables.length > 0) absent.push({ name: d.name, tables: [...tables].sort() })
    }
  }
  const snapshot = { absent_tables: absent, not_reachable: [...(profile.contract.not_reachable ?? [])] }
  return E.right({ ...base.right, contract: { ...c, snapshot } })
}
