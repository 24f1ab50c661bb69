/** `vba status`, `vba resume` and `vba case feedback` (the last two through the public client). */
import { replayAt } from '../adapters/case-store/at.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { lifecycleProjection, type LifecycleView } from '../projections/lifecycle-view.js'
import { revisionsProjection, type RevisionsView } from '../projections/revisions.js'
import { researchProjection, type ResearchView } from '../projections/research.js'
import { entitySources } from '../domain/extract.js'
import { terminalText } from './io.js'
import { cliClient, shownStore, storeUrl, type StoreOption } from './stores.js'
import type { Out } from './case-verbs.js'
import { optional } from '../optional.js'
import { caseWords, leasedSteps, nextSteps } from './next-step.js'
import { inspectLock } from '../adapters/case-store/lock.js'
import { hostname } from 'node:os'
import { heldQueriesProjection, heldQueryLines, type HeldQuery } from './held-queries.js'
import { caseModelsProjection, caseModelText, type CaseModel } from './case-models.js'
import { inspectRun, runText } from '../adapters/case-store/run-marker.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { factLines, latestFacts, weakConclusion } from './facts-text.js'
import { signersLines, signersProjection, type SignersView } from '../projections/signers.js'
import { weakSupportText } from '../projections/report/support.js'

/** Every model and MCP client that answered or asked, in order, and the tokens spent; null when none did. */
const modelsLine = (models: readonly CaseModel[], v: LifecycleView): string | null => {
  if (models.length === 0 && v.model === null && v.tokens.total === 0) return null
  // Answers recorded without provenance name none.
  const who =
    models.length > 0
      ? `model${models.length > 1 ? 's' : ''}: ${models.map(caseModelText).join(', ')}`
      : `model: ${v.model?.name ?? 'unnamed'}${v.model?.endpoint == null ? '' : ` at ${v.model.endpoint}`}${v.model === null ? '' : ` (${v.model.kind})`}`
  return `${who}; ${v.tokens.total} tokens spent (${v.tokens.prompt} prompt, ${v.tokens.completion} completion)${v.tokens.limit === null ? '' : ` of ${v.tokens.limit}`}`
}

export const status = async (io: Out, dir: CaseAt, opts: { json?: boolean } & StoreOption): Promise<void> => {
  const r = await replayAt(dir, [
    lifecycleProjection,
    revisionsProjection,
    signersProjection,
    heldQueriesProjection,
    researchProjection,
    caseModelsProjection
  ])
  const models = (r.views['case-models']?.view as CaseModel[] | undefined) ?? []
  const held = (r.views['held-queries']?.view as HeldQuery[] | undefined) ?? []
  const signers = r.views['signers']?.view as SignersView | undefined
  const signed = signers !== undefined && signers.signers.length > 0 ? { signers } : {}
  const v = r.views['lifecycle']?.view as LifecycleView
  const revisions = (r.views['revisions']?.view as RevisionsView | undefined)?.revisions ?? []
  const latest = revisions[revisions.length - 1]
  const entities = latest === undefined ? [] : entitySources(latest)
  const run = await runOf(dir)
  // A leased case refuses every other writer (CASE_LEASED): its holder goes on, or is released.
  const next =
    run?.until === undefined
      ? nextSteps(
          { ...v, prepared: revisions.some((x) => x.completed) },
          typeof dir === 'string' ? dir : dir.caseId,
          shownStore(opts)
        )
      : leasedSteps(typeof dir === 'string' ? dir : dir.caseId, shownStore(opts), run.by, run.until)
  const lock = await lockOf(dir)
  const weak = await weakConclusion(dir)
  if (opts.json === true) {
    io.out(
      JSON.stringify({
        case_id: r.case_id,
        generation: r.generation,
        ...v,
        entities,
        ...signed,
        run,
        lock: lock?.json ?? null,
        weak_support: weak,
        held_queries: held,
        models,
        next
      })
    )
    return
  }
  // Statements, descriptions and summaries are the model's words: shown, never obeyed by the terminal.
  const say = (line: string): void => io.out(terminalText(line))
  say(`case ${r.case_id}, generation ${r.generation}`)
  say(`state: ${v.state}${v.reason === null ? '' : ` / ${v.reason}`} (checkpoint ${v.checkpoint_generation})`)
  if (run !== null) say(run.text)
  if (lock !== null && lock.text !== null) say(lock.text)
  if (v.resume_state !== null)
    say(
      `resume state: ${v.resume_state}${v.retry_not_before === null ? '' : `, retry not before ${v.retry_not_before}`}`
    )
  for (const x of entities)
    say(
      `entity ${x.type} ${String(x.id)}: ${x.source === 'listed' ? 'listed with the inputs' : `found in the report: ${x.where ?? ''}`}`
    )
  if (v.pending_plan !== null) say(`confirmed plan waiting: ${v.pending_plan}`)
  if (v.last_model_failure !== null)
    say(`the model failed: ${v.last_model_failure.code}: ${v.last_model_failure.message}`)
  if (v.budget !== null)
    say(
      `budget: ${v.budget.consumed} consumed, ${v.budget.held} reserved, ${v.budget.remaining} of ${v.budget.total} left`
    )
  const ref = typeof dir === 'string' ? dir : dir.caseId
  const store = shownStore(opts)
  for (const line of heldQueryLines(held, caseWords(ref, store))) say(line)
  // Before the start, operators' queries are charged to the budget the start records.
  const research = (r.views['research']?.view as ResearchView | undefined)?.budget
  const committed = research === undefined ? 0 : research.consumed + research.held
  if (v.budget === null && committed > 0)
    say(
      `research before the start: ${committed} unit(s) committed (${research?.consumed ?? 0} consumed, ${research?.held ?? 0} held); the start needs a [budget] total of at least ${committed}`
    )
  const who = modelsLine(models, v)
  if (who !== null) say(who)
  for (const h of v.hypotheses)
    say(`hypothesis ${h.id} [${h.status}]: ${h.statement} (evidence ${h.evidence.join(', ') || 'none'})`)
  for (const l of v.lab_requests)
    say(`lab test ${l.id}: ${l.description}${l.feedback === null ? ' (waiting for feedback)' : ` → ${l.feedback}`}`)
  if (v.conclusion !== null) say(`conclusion: ${v.conclusion.summary}`)
  if (weak !== null) say(`warning: ${weakSupportText(weak)}`)
  const facts = await latestFacts(dir, revisions)
  if (facts !== null) for (const l of factLines(facts.revision, facts.facts, 30)) say(l)
  for (const line of signersLines(signers)) say(line)
  // A lock that refuses every write comes first: what to run next waits for it to be lifted.
  const waits = lock !== null && lock.text !== null
  for (const n of next) say(waits ? n.replace(/^next: /, 'next, once the lock is lifted: ') : n)
}

/**
 * A directory's writer lock, when it stops writers or is not this host's: a writer killed mid-write
 * leaves a stale one, and a case copied from another host while a writer held it keeps that one.
 * Both refuse every write until an operator lifts them; the text says how (null for a live writer
 * on this host, which finishes by itself). The JSON form is every lock present, null when free.
 */
const lockOf = async (
  at: CaseAt
): Promise<{
  readonly text: string | null
  readonly json: {
    readonly state: 'held' | 'stale'
    readonly pid: number | null
    readonly host: string | null
    readonly this_host: boolean | null
    readonly acquired_at: string | null
    readonly reason: string | null
  }
} | null> => {
  if (typeof at !== 'string') return null
  const lock = await inspectLock(at)
  if (lock.state === 'free') return null
  const info = lock.info
  const thisHost = info === null ? null : info.host === hostname()
  const json = {
    state: lock.state,
    pid: info?.pid ?? null,
    host: info?.host ?? null,
    this_host: thisHost,
    acquired_at: info?.acquired_at ?? null,
    reason: lock.state === 'stale' ? lock.reason : null
  }
  const c = caseWords(at)
  if (lock.state === 'stale')
    return {
      json,
      text: `locked by a writer that is gone (${lock.reason}): every write is refused; check the case (vba verify ${c}), then lift the lock (vba case unlock ${c})`
    }
  if (thisHost === true) return { json, text: null }
  return {
    json,
    text: `locked by process ${lock.info.pid} on host ${lock.info.host} (another host: vba cannot tell whether it runs): every write is refused; once that process has stopped, or if this directory was copied while it wrote, check the case (vba verify ${c}), then run: vba case unlock ${c} --force`
  }
}

/**
 * Who advances the case now: a directory's run marker (vba investigate: pid, host, since when), a
 * store case's lease (its holder and until when); null when nobody does.
 */
const runOf = async (
  at: CaseAt
): Promise<{
  readonly text: string
  readonly by: string
  readonly since?: string
  readonly until?: string
  readonly gone?: boolean
} | null> => {
  if (typeof at === 'string') {
    const s = await inspectRun(at)
    const text = runText(s)
    if (s.state === 'none' || text === null) return null
    return {
      text,
      by: `${s.info.what} (pid ${s.info.pid} on ${s.info.host})`,
      since: s.info.started_at,
      ...(s.state === 'gone' ? { gone: true } : {})
    }
  }
  const sql = at.store as Partial<SqlStore>
  const lease = sql.leaseOf === undefined ? null : await sql.leaseOf(at.caseId)
  return lease === null
    ? null
    : {
        text: `being advanced: leased by ${lease.worker} until ${lease.expires_at}`,
        by: lease.worker,
        until: lease.expires_at
      }
}

export const resume = async (
  io: Out,
  ref: string,
  opts: { manualRetry?: boolean; expectGeneration?: number } & StoreOption
): Promise<void> => {
  const vba = await cliClient(storeUrl(opts))
  const r = await vba.investigations.resume(ref, {
    manualRetry: opts.manualRetry === true,
    ...optional('expectedGeneration', opts.expectGeneration)
  })
  io.out(
    `resumed into ${r.state}${opts.manualRetry === true ? ' (manual retry recorded)' : ''}; generation ${r.generation}`
  )
}

export const feedback = async (
  io: Out,
  ref: string,
  requestId: string,
  text: string,
  opts: StoreOption
): Promise<void> => {
  const vba = await cliClient(storeUrl(opts))
  const { generation } = await vba.investigations.feedback(ref, { requestId, text })
  io.out(`feedback for ${requestId} recorded; generation ${generation}`)
}
