/** Investigation settings from the profile ([loop], [budget], [limits], the allowlist) and the source analysis contract. */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../failures/failure.js'
import type { InvestigationSettings } from '../events/settings.js'
import { bindingOf, type Profile } from '../adapters/config/profile.js'
import { analysisOf } from '../research/source/open.js'

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
    source_context:
      profile.source !== undefined && a.enabled
        ? {
            context_lines: a.context_lines,
            max_searches: a.max_searches,
            max_matches: a.max_matches,
            max_files: a.max_files,
            max_blocks: a.max_blocks,
            max_total_lines: a.max_total_lines,
            registration_prefixes: [...a.registration_prefixes],
            code_path_prefixes: [...a.code_path_prefixes]
          }
        : null,
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
    binding: bindingOf(profile)
  })
}
