/**
 * Scores of an evaluation run, from its cases alone: each case is verified first (an edited or
 * broken case is reported with its finding codes, never scored), then read for its state, what its
 * conclusion cites (see places.ts) and what the investigation spent. Totals are hit rates and
 * medians. The same cases and suite give the same results, byte for byte (no clock is read).
 */
import { existsSync } from 'node:fs'
import * as path from 'node:path'
import { verifyCase } from '../adapters/case-store/verify.js'
import { readObject } from '../adapters/case-store/objects.js'
import type { Receipt } from '../adapters/case-store/append.js'
import type { RecordedEvent } from '../events/chain.js'
import { fold } from '../projections/projection.js'
import { lifecycleProjection, type LifecycleView } from '../projections/lifecycle-view.js'
import { modelUsage } from '../projections/model-usage.js'
import { parseBoundedBytes } from '../events/bounds.js'
import { citedEvidence, evidenceCaptures, hitsOf, placesOf, type Place } from './places.js'
import type { Bug, ChangedRange } from './suite.js'
import type { RunModel } from './run-folder.js'

/** One bug's scores. Hit fields are null for a case that is missing or does not verify. */
export interface BugScore {
  readonly id: string
  readonly title: string | null
  /** The case's state (NOT_STARTED and the lifecycle states), or MISSING when there is no case. */
  readonly state: string
  readonly reason: string | null
  readonly verified: boolean
  /** Finding codes of a case that does not verify (each once). */
  readonly findings: readonly string[]
  readonly head: string | null
  readonly file_hit: boolean | null
  readonly line_hit: boolean | null
  readonly first_hit_rank: number | null
  readonly cited_places: number | null
  readonly turns: number | null
  readonly queries: number | null
  readonly budget_spent: number | null
  readonly prompt_chars: number | null
  readonly tokens: number | null
  readonly model_latency_ms: number | null
  readonly wall_ms: number | null
  readonly changed: readonly ChangedRange[]
}

/** A run's totals: counts, hit rates over all bugs, and medians over the scored ones. */
export interface Totals {
  readonly bugs: number
  readonly scored: number
  readonly unverified: number
  readonly missing: number
  readonly concluded: number
  readonly file_hits: number
  readonly line_hits: number
  readonly file_hit_rate: number
  readonly line_hit_rate: number
  readonly median_first_hit_rank: number | null
  readonly median_turns: number | null
  readonly median_queries: number | null
  readonly median_budget_spent: number | null
  readonly median_prompt_chars: number | null
  readonly median_tokens: number | null
  readonly median_model_latency_ms: number | null
  readonly median_wall_ms: number | null
}

/** results.json. */
export interface Results {
  readonly format: 'vba-eval-results'
  readonly version: 1
  readonly suite: string
  /** The run's model, as run.json records it (none for a run whose run.json predates that record). */
  readonly model?: RunModel
  readonly bugs: readonly BugScore[]
  readonly totals: Totals
}

const empty = (bug: Bug, state: string, changed: readonly ChangedRange[]): BugScore => ({
  id: bug.id,
  title: bug.truth.title ?? null,
  state,
  reason: null,
  verified: false,
  findings: [],
  head: null,
  file_hit: null,
  line_hit: null,
  first_hit_rank: null,
  cited_places: null,
  turns: null,
  queries: null,
  budget_spent: null,
  prompt_chars: null,
  tokens: null,
  model_latency_ms: null,
  wall_ms: null,
  changed
})

/** What the investigation spent, from its events (after its start). */
const spending = (events: readonly RecordedEvent[]) => {
  const start = events.find((e) => e.type === 'InvestigationStarted')
  const after = start === undefined ? [] : events.filter((e) => e.seq > start.seq)
  let promptChars = 0
  let latency = 0
  let queries = 0
  for (const e of after) {
    if (e.type === 'ModelRequested') promptChars += e.data.prompt_chars
    if (e.type === 'ModelResponded') latency += e.data.provenance?.latency_ms ?? 0
    if (e.type === 'PlanConfirmed') queries++
  }
  const last = events[events.length - 1]
  const wall = start === undefined || last === undefined ? null : Date.parse(last.at) - Date.parse(start.at)
  return { promptChars, latency, queries, wall, started: start !== undefined }
}

/**
 * Scores the case of `bug` at `caseDir` against `changed`. `expectHead` (the head a published
 * results.json names) makes a case that was rolled back, forked or re-chained since a finding.
 */
export const scoreCase = async (
  bug: Bug,
  caseDir: string,
  changed: readonly ChangedRange[],
  expectHead?: Receipt
): Promise<BugScore> => {
  if (!existsSync(path.join(caseDir, 'case.json'))) return empty(bug, 'MISSING', changed)
  const events: RecordedEvent[] = []
  const report = await verifyCase(caseDir, {
    onEvent: (e) => events.push(e),
    ...(expectHead === undefined ? {} : { expectHead })
  })
  if (!report.valid)
    return {
      ...empty(bug, 'UNVERIFIED', changed),
      findings: [...new Set(report.findings.filter((f) => f.severity === 'error').map((f) => f.code))].sort()
    }
  const f = fold([lifecycleProjection])
  for (const e of events) f.feed(e)
  const view = f.views()['lifecycle']?.view as LifecycleView
  const captures = evidenceCaptures(events)
  const places: Place[] = []
  for (const id of citedEvidence(events)) {
    const ref = captures.get(id)
    if (ref === undefined) continue
    places.push(...placesOf(id, parseBoundedBytes(await readObject(caseDir, ref))))
  }
  const hits = hitsOf(places, changed)
  const spent = spending(events)
  return {
    id: bug.id,
    title: bug.truth.title ?? null,
    state: view.state,
    reason: view.reason,
    verified: true,
    findings: [],
    head: report.head === null ? null : `${report.head.seq}:${report.head.hash}`,
    ...hits,
    turns: view.turn,
    queries: spent.queries,
    budget_spent: view.budget?.consumed ?? 0,
    prompt_chars: spent.promptChars,
    tokens: modelUsage(events).tokens.total,
    model_latency_ms: spent.latency,
    wall_ms: spent.wall,
    changed
  }
}

const median = (values: ReadonlyArray<number | null>): number | null => {
  const v = values.filter((x): x is number => x !== null).sort((a, b) => a - b)
  if (v.length === 0) return null
  const mid = Math.floor(v.length / 2)
  return v.length % 2 === 1 ? (v[mid] as number) : ((v[mid - 1] as number) + (v[mid] as number)) / 2
}
const rate = (n: number, of: number): number => (of === 0 ? 0 : Math.round((n / of) * 10_000) / 10_000)

/** The totals of a run's bug scores. */
export const totalsOf = (bugs: readonly BugScore[]): Totals => {
  const scored = bugs.filter((b) => b.verified)
  const fileHits = scored.filter((b) => b.file_hit === true).length
  const lineHits = scored.filter((b) => b.line_hit === true).length
  return {
    bugs: bugs.length,
    scored: scored.length,
    unverified: bugs.filter((b) => b.state === 'UNVERIFIED').length,
    missing: bugs.filter((b) => b.state === 'MISSING').length,
    concluded: scored.filter((b) => b.state === 'CONCLUDED').length,
    file_hits: fileHits,
    line_hits: lineHits,
    file_hit_rate: rate(fileHits, bugs.length),
    line_hit_rate: rate(lineHits, bugs.length),
    median_first_hit_rank: median(scored.map((b) => b.first_hit_rank)),
    median_turns: median(scored.map((b) => b.turns)),
    median_queries: median(scored.map((b) => b.queries)),
    median_budget_spent: median(scored.map((b) => b.budget_spent)),
    median_prompt_chars: median(scored.map((b) => b.prompt_chars)),
    median_tokens: median(scored.map((b) => b.tokens)),
    median_model_latency_ms: median(scored.map((b) => b.model_latency_ms)),
    median_wall_ms: median(scored.map((b) => b.wall_ms))
  }
}

/** results.json as text: two-space JSON, members in the order above, a final newline. */
export const resultsText = (r: Results): string => `${JSON.stringify(r, null, 2)}\n`
