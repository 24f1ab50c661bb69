/** Investigation settings from the profile ([loop], [budget]) and the source analysis contract. */
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../domain/failure.js'
import type { InvestigationSettings } from '../events/catalog.js'
import type { Profile } from '../adapters/config/profile.js'
import { analysisOf } from '../research/source/open.js'

/** The investigation settings a profile gives (its [loop], [budget] and [source_analysis]). */
export const settingsOf = (profile: Profile): E.Either<Failure, InvestigationSettings> => {
  const a = analysisOf(profile)
  return E.right({
    prompt_version: 'investigation_project_v1',
    budget_total: profile.budget.total ?? 20,
    action_costs: { 'project.query': profile.budget.project_query ?? 1 },
    max_invalid_responses: profile.loop.max_invalid_responses ?? 3,
    retry_delay_ms: profile.loop.retry_delay_ms ?? 10 * 60 * 1000,
    prompt_max_chars: profile.loop.prompt_max_chars ?? 20_000,
    source_context: profile.source !== undefined && a.enabled
      ? { context_lines: a.context_lines, max_searches: a.max_searches, max_matches: a.max_matches, max_files: a.max_files, max_blocks: a.max_blocks, max_total_lines: a.max_total_lines, registration_prefixes: [...a.registration_prefixes] }
      : null,
    max_tokens: profile.budget.max_tokens ?? null
  })
}
