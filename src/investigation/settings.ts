/** Investigation settings from the profile ([loop], [budget]) and the source analysis contract. */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import { describeErrors } from '../events/decode.js'
import type { InvestigationSettings } from '../events/catalog.js'
import type { Profile } from '../adapters/config/profile.js'
import { analysisOf } from '../research/source/open.js'

const LoopSection = t.partial({ max_invalid_responses: t.number, retry_delay_ms: t.number, prompt_max_chars: t.number })
const BudgetSection = t.partial({ total: t.number, project_query: t.number })

export const settingsOf = (profile: Profile): E.Either<Failure, InvestigationSettings> => {
  const loop = LoopSection.decode(profile.raw['loop'] ?? {})
  const budget = BudgetSection.decode(profile.raw['budget'] ?? {})
  if (E.isLeft(loop)) return E.left(failure('CONFIG_INVALID', `[loop] ${describeErrors(loop.left)}`))
  if (E.isLeft(budget)) return E.left(failure('CONFIG_INVALID', `[budget] ${describeErrors(budget.left)}`))
  const a = analysisOf(profile)
  return E.right({
    prompt_version: 'investigation_project_v1',
    budget_total: budget.right.total ?? 20,
    action_costs: { 'project.query': budget.right.project_query ?? 1 },
    max_invalid_responses: loop.right.max_invalid_responses ?? 3,
    retry_delay_ms: loop.right.retry_delay_ms ?? 10 * 60 * 1000,
    prompt_max_chars: loop.right.prompt_max_chars ?? 20_000,
    source_context: profile.source !== undefined && a.enabled
      ? { context_lines: a.context_lines, max_searches: a.max_searches, max_matches: a.max_matches, max_files: a.max_files, max_blocks: a.max_blocks, max_total_lines: a.max_total_lines, registration_prefixes: [...a.registration_prefixes] }
      : null
  })
}
