/** The run's table as text: one line per bug, the totals below (what `vba eval` and `vba eval score` print). */
import type { BugScore, Results } from './score.js'
import { modelLabel } from './run-folder.js'

const yes = (b: boolean | null): string => (b === null ? '-' : b ? 'yes' : 'no')
const n = (v: number | null): string => (v === null ? '-' : String(v))

/** One bug in a line: its state, hits and what it spent. */
export const scoreLine = (b: BugScore): string => {
  if (b.state === 'MISSING') return `${b.id}: no case`
  if (!b.verified) return `${b.id}: NOT VERIFIED (${b.findings.join(', ')}), not scored`
  return `${b.id}: ${b.state}${b.reason === null ? '' : ` / ${b.reason}`}; file hit ${yes(b.file_hit)}, line hit ${yes(b.line_hit)}, first hit at ${n(b.first_hit_rank)} of ${n(b.cited_places)} places; ${n(b.turns)} turns, ${n(b.queries)} queries, budget ${n(b.budget_spent)}, prompts ${n(b.prompt_chars)} chars, ${n(b.tokens)} tokens, model ${n(b.model_latency_ms)} ms, wall ${n(b.wall_ms)} ms`
}

const pct = (r: number): string => `${(r * 100).toFixed(1)}%`

/** The table: the model (when the run names it), a header, a row per bug, the totals. */
export const resultsTable = (r: Results): string[] => {
  const cols = [
    'bug',
    'state',
    'file',
    'line',
    'rank',
    'turns',
    'queries',
    'budget',
    'prompt chars',
    'tokens',
    'model ms',
    'wall ms'
  ]
  const rows = r.bugs.map((b) => [
    b.id,
    b.verified
      ? `${b.state}${b.reason === null ? '' : `/${b.reason}`}`
      : b.state === 'MISSING'
        ? 'MISSING'
        : 'NOT VERIFIED',
    yes(b.file_hit),
    yes(b.line_hit),
    n(b.first_hit_rank),
    n(b.turns),
    n(b.queries),
    n(b.budget_spent),
    n(b.prompt_chars),
    n(b.tokens),
    n(b.model_latency_ms),
    n(b.wall_ms)
  ])
  const t = r.totals
  rows.push([
    `total (${t.bugs})`,
    `${t.concluded} concluded`,
    `${t.file_hits} ${pct(t.file_hit_rate)}`,
    `${t.line_hits} ${pct(t.line_hit_rate)}`,
    n(t.median_first_hit_rank),
    n(t.median_turns),
    n(t.median_queries),
    n(t.median_budget_spent),
    n(t.median_prompt_chars),
    n(t.median_tokens),
    n(t.median_model_latency_ms),
    n(t.median_wall_ms)
  ])
  const width = cols.map((c, i) => Math.max(c.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => c.padEnd(width[i] ?? 0))
      .join('  ')
      .trimEnd()
  const out = [...(r.model === undefined ? [] : [`model: ${modelLabel(r.model)}`]), line(cols), ...rows.map(line)]
  out.push(
    `(totals: hit rates over all ${t.bugs} bugs, medians over the ${t.scored} scored; ${t.unverified} not verified, ${t.missing} without a case)`
  )
  return out
}
