/**
 * The timeline of the case report: one entry per event that says what happened, in order, with
 * every id linked to its evidence or hypothesis. Events shown elsewhere (the enrichment captures,
 * the budget consumed) get no entry. `TIMELINE` is mapped by event type.
 */
import type { RecordedEvent } from '../../events/chain.js'
import type { EventType } from '../../events/catalog.js'
import { tokensOf } from '../../events/model-provenance.js'
import { requestText } from '../request-text.js'
import { asRec } from '../json-read.js'
import { esc, escPlain, linked, refLinks, str, utf8, type KnownIds } from './html.js'
import { requesterText } from './captures.js'
import { plural } from '../query-kinds/parts.js'

type EventOf<T extends EventType> = Extract<RecordedEvent, { type: T }>

const when = (e: RecordedEvent): string => `<span class="when">seq ${e.seq} · ${esc(e.at)} · ${esc(e.actor)}</span>`

/** One timeline entry of class `cls`: when and by whom, then the body. */
const li = (e: RecordedEvent, cls: string, body: string): string => `<li class="${cls}">${when(e)}<br>${body}</li>`

/** What an entry may read besides its event: the objects (a model's raw answer) and the ids to link. */
export interface TimelineContext {
  readonly objects: ReadonlyMap<string, Uint8Array>
  readonly known: KnownIds
  /** The request of each reservation whose request the log holds, in words (see {@link reservedRequests}). */
  readonly requests: ReadonlyMap<string, string>
}

/**
 * The request of every reservation the log holds it for, in words, by reservation id: a plan's
 * from its PlanConfirmed, an operator's query from its BudgetReserved (version 4 on; earlier ones
 * record only the digest, so their refusals show no request).
 */
export const reservedRequests = (events: readonly RecordedEvent[]): Map<string, string> => {
  const plans = new Map<string, Readonly<Record<string, unknown>>>()
  const out = new Map<string, string>()
  for (const e of events) {
    if (e.type === 'PlanConfirmed') plans.set(e.data.plan_id, e.data.arguments)
    if (e.type !== 'BudgetReserved') continue
    const asked = e.data.plan_id === null ? e.data.request : (plans.get(e.data.plan_id) ?? null)
    if (asked !== null) out.set(e.data.reservation_id, requestText(str(asRec(asked)['kind']), asked))
  }
  return out
}

/** The timeline entry of one event type: its HTML, or null for an event shown elsewhere. */
export type TimelineEntry<K extends EventType> = (e: EventOf<K>, c: TimelineContext) => string | null

/** Events shown elsewhere (the enrichment captures in the facts, the consumption in the budget chart). */
const shownElsewhere = (): null => null

/**
 * The entry of every event type (one per type of the catalog: a new type does not compile until
 * it has one, or `shownElsewhere`).
 */
export const TIMELINE: { readonly [K in EventType]: TimelineEntry<K> } = {
  // The preparation of the case: its inputs, the prepared revision and the start of the investigation.
  InputsRecorded: (e) =>
    li(
      e,
      'op',
      `revision ${e.data.revision}: bug report and ${e.data.entities.length} entit${e.data.entities.length === 1 ? 'y' : 'ies'} recorded${e.data.extracted === undefined ? '' : `, ${e.data.extracted.length} found in the report`}`
    ),
  EnrichmentCaptured: shownElsewhere,
  RevisionCompleted: (e) =>
    li(
      e,
      'op',
      `revision ${e.data.revision} prepared: ${plural(e.data.fact_count, 'fact')} from ${plural(e.data.queries, 'query')}${e.data.complete ? '' : ' <span class="warn">(coverage incomplete)</span>'}`
    ),
  InvestigationStarted: (e) =>
    li(e, 'op', `investigation started on revision ${e.data.revision}, budget ${e.data.settings.budget_total}`),

  // The model's turns: the prompts asked, the answers given, failed or rejected, and the interpretation.
  ModelRequested: (e) =>
    li(e, 'turn', `<b>turn ${e.data.turn}</b> (${esc(e.data.phase)}): prompt of ${e.data.prompt_chars} characters`),
  ModelResponded: (e, { objects, known }) => {
    const raw = utf8(objects.get(e.data.raw.digest))
    const p = e.data.provenance
    const agent = p?.requester === undefined ? null : `${p.requester.name} ${p.requester.version}`.trim()
    const by =
      p === null
        ? ''
        : agent !== null
          ? ` decided by the agent <span class="mono">${esc(agent)}</span> over MCP`
          : ` by ${p.model === null ? p.kind : `<span class="mono">${esc(p.model)}</span>`}${p.usage === null ? '' : `, ${tokensOf(p.usage)} tokens`}, ${p.latency_ms} ms${p.attempts > 1 ? `, ${p.attempts} attempts` : ''}`
    return li(
      e,
      'turn',
      `<details><summary>the model's answer to turn ${e.data.turn} (${e.data.raw.size} bytes${by})</summary><pre>${raw === null ? 'not available' : linked(raw, known)}</pre></details>`
    )
  },
  ModelFailed: (e) =>
    li(
      e,
      'block',
      `<span class="bad">model call failed (turn ${e.data.turn}): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
    ),
  ModelResponseRejected: (e) =>
    li(
      e,
      'block',
      `<span class="bad">answer rejected (turn ${e.data.turn}, ${e.data.consecutive} in a row): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
    ),
  InterpretationRecorded: (e, { known }) => li(e, 'turn', `interpretation: ${linked(e.data.summary, known)}`),

  // The research of confirmed plans: the queries, the evidence they recorded, their refusals and cancellations.
  PlanConfirmed: (e) =>
    li(
      e,
      'turn',
      `plan ${esc(e.data.plan_id)}: <span class="mono">${esc(requestText(str(asRec(e.data.arguments)['kind']), e.data.arguments))}</span>`
    ),
  CaptureRecorded: (e) =>
    li(
      e,
      'turn',
      `evidence <a href="#${escPlain(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> recorded (${esc(e.data.kind)}${e.data.repeat ? ', a repeat' : ''})`
    ),
  QueryAnsweredFromCase: (e) =>
    li(
      e,
      'turn',
      `plan ${esc(e.data.plan_id)} answered from the case: evidence <a href="#${escPlain(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> again (an identical query; a repeat, no budget used)`
    ),
  ResearchFailed: (e, { requests }) => {
    const asked = requests.get(e.data.reservation_id)
    return li(
      e,
      e.data.unavailable ? 'block' : 'op',
      `<span class="${e.data.unavailable ? 'bad' : 'warn'}">research ${e.data.unavailable ? 'unavailable' : 'refused'}: ${esc(e.data.code)}</span>: ${esc(e.data.message)}${asked === undefined ? '' : `<br>request: <span class="mono">${esc(asked)}</span>`}`
    )
  },
  PlanCancelled: (e) => li(e, 'op', `plan ${esc(str(e.data.plan_id))} cancelled: ${esc(e.data.reason)}`),

  // The budget: reservations, releases and top-ups (consumption shows in the budget chart).
  BudgetReserved: (e) =>
    li(
      e,
      'op',
      `budget reserved: ${e.data.amount} (${esc(e.data.reservation_id)})${e.data.requester === null ? '' : ` for ${requesterText(e.data.requester)}`}`
    ),
  BudgetConsumed: shownElsewhere,
  BudgetReleased: (e) => li(e, 'op', `budget released: ${e.data.amount} (${esc(e.data.reason)})`),
  BudgetToppedUp: (e) => li(e, 'op', `budget topped up by ${e.data.amount}: ${esc(e.data.reason)}`),

  // A checkpoint: the state the case entered, why, and when it may resume.
  CheckpointRecorded: (e) => {
    const d = e.data
    const cls = d.state === 'BLOCKED' || d.state === 'EXHAUSTED' ? 'block' : 'op'
    return li(
      e,
      cls,
      `<span class="badge state-${escPlain(d.state)}">${esc(d.state)}${d.reason === null ? '' : ` / ${esc(d.reason)}`}</span>${d.resume_state === null ? '' : ` resumes into ${esc(d.resume_state)}`}${d.retry_not_before === null ? '' : `, retry not before ${esc(d.retry_not_before)}`}${d.manual_retry ? ' (manual retry)' : ''}`
    )
  },

  // The reasoning: hypotheses proposed and updated, lab tests and their feedback, and the conclusion.
  HypothesisProposed: (e, { known }) =>
    li(
      e,
      'turn',
      `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> proposed: ${linked(e.data.statement, known)} (evidence ${refLinks(e.data.evidence, known)})`
    ),
  HypothesisUpdated: (e, { known }) =>
    li(
      e,
      'turn',
      `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> → ${esc(e.data.status)}: ${linked(e.data.note, known)} (evidence ${refLinks(e.data.evidence, known)})`
    ),
  LabTestRequested: (e, { known }) =>
    li(e, 'block', `lab test ${esc(e.data.request_id)} requested: ${linked(e.data.description, known)}`),
  LabFeedbackRecorded: (e, { known }) =>
    li(e, 'op', `lab feedback for ${esc(e.data.request_id)}: ${linked(e.data.feedback, known)}`),
  ConclusionRecorded: (e, { known }) => li(e, 'turn', `<b>conclusion</b>: ${linked(e.data.summary, known)}`),

  // The operator's additions: notes and attachments.
  NoteRecorded: (e, { known }) =>
    li(
      e,
      'op',
      `note: ${e.data.format === 'markdown' ? '<span class="muted">(Markdown, shown as text)</span> ' : ''}<pre>${linked(e.data.text, known)}</pre>`
    ),
  AttachmentAdded: (e) =>
    li(
      e,
      'op',
      `attachment <span class="mono">${esc(e.data.name)}</span> (${e.data.object.size} bytes, ${esc(e.data.object.digest)})`
    ),

  // What the signature means (valid, trusted) is the verification's word, shown with it.
  CommandSigned: (e) =>
    li(
      e,
      'sys',
      `events ${e.data.first_seq}–${e.data.last_seq} signed by <b>${esc(e.data.principal)}</b> <span class="mono">${esc(e.data.fingerprint)}</span>`
    )
}

/** The timeline entry of one event, or null for an event the timeline does not show. */
export const timelineItem = (
  e: RecordedEvent,
  objects: ReadonlyMap<string, Uint8Array>,
  known: KnownIds,
  requests: ReadonlyMap<string, string> = new Map()
): string | null => {
  const entry = TIMELINE[e.type] as TimelineEntry<EventType> | undefined
  return entry === undefined ? null : entry(e, { objects, known, requests })
}
