/**
 * The HTML summary of an evaluation run: the totals and one row per bug linking its case report
 * (reports/<id>.html beside it). Self-contained (no script, no outside resource) and deterministic:
 * the same results give the same bytes.
 */
import { esc, escPlain, STYLE } from '../projections/report/html.js'
import type { BugScore, Results } from './score.js'
import { modelLabel } from './run-folder.js'

const yes = (b: boolean | null): string =>
  b === null
    ? '<span class="muted">-</span>'
    : b
      ? '<span class="badge ok">yes</span>'
      : '<span class="badge bad">no</span>'
const num = (v: number | null): string => (v === null ? '<span class="muted">-</span>' : esc(String(v)))
const pct = (r: number): string => `${(r * 100).toFixed(1)}%`

const row = (b: BugScore): string => {
  const state =
    b.state === 'MISSING'
      ? 'no case'
      : b.verified
        ? `${b.state}${b.reason === null ? '' : ` / ${b.reason}`}`
        : `NOT VERIFIED: ${b.findings.join(', ')}`
  const link =
    b.state === 'MISSING' ? esc(b.id) : `<a href="reports/${escPlain(encodeURIComponent(b.id))}.html">${esc(b.id)}</a>`
  const changed = b.changed.map((c) => `${c.path}:${c.lines[0]}-${c.lines[1]}`).join(', ')
  return `<tr><td class="mono">${link}</td><td>${esc(b.title ?? '')}</td><td>${esc(state)}</td><td>${yes(b.file_hit)}</td><td>${yes(b.line_hit)}</td><td>${num(b.first_hit_rank)}</td><td>${num(b.turns)}</td><td>${num(b.queries)}</td><td>${num(b.budget_spent)}</td><td>${num(b.prompt_chars)}</td><td>${num(b.tokens)}</td><td>${num(b.model_latency_ms)}</td><td>${num(b.wall_ms)}</td><td class="mono muted">${esc(changed)}</td></tr>`
}

/** Renders results.json as one HTML page. */
export const summaryHtml = (r: Results): string => {
  const t = r.totals
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escPlain(`vba eval: ${r.suite}`)}</title>
<style>${STYLE}</style></head><body><main>
<header><h1>Evaluation: ${esc(r.suite)}</h1>
${r.model === undefined ? '' : `<p>Model: <span class="mono">${esc(modelLabel(r.model))}</span></p>\n`}<p>${t.bugs} bugs: ${t.concluded} concluded; file hits ${t.file_hits} (${pct(t.file_hit_rate)}), line hits ${t.line_hits} (${pct(t.line_hit_rate)}); ${t.unverified} not verified, ${t.missing} without a case. Medians over the ${t.scored} scored bugs: first hit at ${num(t.median_first_hit_rank)}, ${num(t.median_turns)} turns, ${num(t.median_queries)} queries, budget ${num(t.median_budget_spent)}, prompts ${num(t.median_prompt_chars)} characters, ${num(t.median_tokens)} tokens, model ${num(t.median_model_latency_ms)} ms, wall ${num(t.median_wall_ms)} ms.</p>
<p class="muted">Every figure is computed from the cases in cases/ (each verified first) and the suite's truth: <span class="mono">vba eval score DIR</span> recomputes them.</p></header>
<section><table>
<thead><tr><th>bug</th><th>title</th><th>state</th><th>file hit</th><th>line hit</th><th>first hit</th><th>turns</th><th>queries</th><th>budget</th><th>prompt chars</th><th>tokens</th><th>model ms</th><th>wall ms</th><th>changed</th></tr></thead>
<tbody>
${r.bugs.map(row).join('\n')}
</tbody></table></section>
</main></body></html>
`
}
