/**
 * The timeline of the case report: one entry per event that says what happened, in order, with
 * every id linked to its evidence or hypothesis. Events shown elsewhere (the enrichment captures,
 * the budget consumed) get no entry.
 */
import type { RecordedEvent } from '../../events/chain.js'
import { tokensOf } from '../../events/model-provenance.js'
import { requestText } from '../request-text.js'
import { asRec } from '../json-read.js'
import { esc, escPlain, linked, refLinks, str, utf8, type KnownIds } from './html.js'
import { requesterText } from './captures.js'

type EventOf<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>

const when = (e: RecordedEvent): string => `<span class="when">seq ${e.seq} · ${esc(e.at)} · ${esc(e.actor)}</span>`

/** One timeline entry of class `cls`: when and by whom, then the body. */
const li = (e: RecordedEvent, cls: string, body: string): string => `<li class="${cls}">${when(e)}<br>${body}</li>`

/** The preparation of the case: its inputs, the prepared revision and the start of the investigation. */
const preparationItem = (e: EventOf<'InputsRecorded' | 'RevisionCompleted' | 'InvestigationStarted'>): string => {
  switch (e.type) {
    case 'InputsRecorded':
      return li(
        e,
        'op',
        `revision ${e.data.revision}: bug report and ${e.data.entities.length} entit${e.data.entities.length === 1 ? 'y' : 'ies'} recorded${e.data.extracted === undefined ? '' : `, ${e.data.extracted.length} found in the report`}`
      )
    case 'RevisionCompleted':
      return li(
        e,
        'op',
        `revision ${e.data.revision} prepared: ${e.data.fact_count} facts from ${e.data.queries} queries${e.data.complete ? '' : ' <span class="warn">(coverage incomplete)</span>'}`
      )
    case 'InvestigationStarted':
      return li(e, 'op', `investigation started on revision ${e.data.revision}, budget ${e.data.settings.budget_total}`)
  }
}

/** The model's turns: the prompts asked, the answers given, failed or rejected, and the interpretation. */
const modelItem = (
  e: EventOf<'ModelRequested' | 'ModelResponded' | 'ModelFailed' | 'ModelResponseRejected' | 'InterpretationRecorded'>,
  objects: ReadonlyMap<string, Uint8Array>,
  known: KnownIds
): string => {
  switch (e.type) {
    case 'ModelRequested':
      return li(
        e,
        'turn',
        `<b>turn ${e.data.turn}</b> (${esc(e.data.phase)}): prompt of ${e.data.prompt_chars} characters`
      )
    case 'ModelResponded': {
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
    }
    case 'ModelFailed':
      return li(
        e,
        'block',
        `<span class="bad">model call failed (turn ${e.data.turn}): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'ModelResponseRejected':
      return li(
        e,
        'block',
        `<span class="bad">answer rejected (turn ${e.data.turn}, ${e.data.consecutive} in a row): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'InterpretationRecorded':
      return li(e, 'turn', `interpretation: ${linked(e.data.summary, known)}`)
  }
}

/** The research of confirmed plans: the queries, the evidence they recorded, their refusals and cancellations. */
const researchItem = (
  e: EventOf<'PlanConfirmed' | 'CaptureRecorded' | 'QueryAnsweredFromCase' | 'ResearchFailed' | 'PlanCancelled'>
): string => {
  switch (e.type) {
    case 'PlanConfirmed':
      return li(
        e,
        'turn',
        `plan ${esc(e.data.plan_id)}: <span class="mono">${esc(requestText(str(asRec(e.data.arguments)['kind']), e.data.arguments))}</span>`
      )
    case 'CaptureRecorded':
      return li(
        e,
        'turn',
        `evidence <a href="#${escPlain(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> recorded (${esc(e.data.kind)}${e.data.repeat ? ', a repeat' : ''})`
      )
    case 'QueryAnsweredFromCase':
      return li(
        e,
        'turn',
        `plan ${esc(e.data.plan_id)} answered from the case: evidence <a href="#${esc(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> again (an identical query; a repeat, no budget used)`
      )
    case 'ResearchFailed':
      return li(
        e,
        e.data.unavailable ? 'block' : 'op',
        `<span class="${e.data.unavailable ? 'bad' : 'warn'}">research ${e.data.unavailable ? 'unavailable' : 'refused'}: ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'PlanCancelled':
      return li(e, 'op', `plan ${esc(str(e.data.plan_id))} cancelled: ${esc(e.data.reason)}`)
  }
}

/** The budget: reservations, releases and top-ups (consumption shows in the budget chart). */
const budgetItem = (e: EventOf<'BudgetReserved' | 'BudgetReleased' | 'BudgetToppedUp'>): string => {
  switch (e.type) {
    case 'BudgetReserved':
      return li(
        e,
        'op',
        `budget reserved: ${e.data.amount} (${esc(e.data.reservation_id)})${e.data.requester === null ? '' : ` for ${requesterText(e.data.requester)}`}`
      )
    case 'BudgetReleased':
      return li(e, 'op', `budget released: ${e.data.amount} (${esc(e.data.reason)})`)
    case 'BudgetToppedUp':
      return li(e, 'op', `budget topped up by ${e.data.amount}: ${esc(e.data.reason)}`)
  }
}

/** The reasoning: hypotheses proposed and updated, lab tests and their feedback, and the conclusion. */
const reasoningItem = (
  e: EventOf<
    'HypothesisProposed' | 'HypothesisUpdated' | 'LabTestRequested' | 'LabFeedbackRecorded' | 'ConclusionRecorded'
  >,
  known: KnownIds
): string => {
  switch (e.type) {
    case 'HypothesisProposed':
      return li(
        e,
        'turn',
        `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> proposed: ${linked(e.data.statement, known)} (evidence ${refLinks(e.data.evidence, known)})`
      )
    case 'HypothesisUpdated':
      return li(
        e,
        'turn',
        `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> → ${esc(e.data.status)}: ${linked(e.data.note, known)} (evidence ${refLinks(e.data.evidence, known)})`
      )
    case 'LabTestRequested':
      return li(e, 'block', `lab test ${esc(e.data.request_id)} requested: ${linked(e.data.description, known)}`)
    case 'LabFeedbackRecorded':
      return li(e, 'op', `lab feedback for ${esc(e.data.request_id)}: ${linked(e.data.feedback, known)}`)
    case 'ConclusionRecorded':
      return li(e, 'turn', `<b>conclusion</b>: ${linked(e.data.summary, known)}`)
  }
}

/** The operator's additions: notes and attachments. */
const operatorItem = (e: EventOf<'NoteRecorded' | 'AttachmentAdded'>, known: KnownIds): string => {
  switch (e.type) {
    case 'NoteRecorded':
      return li(
        e,
        'op',
        `note: ${e.data.format === 'markdown' ? '<span class="muted">(Markdown, shown as text)</span> ' : ''}<pre>${linked(e.data.text, known)}</pre>`
      )
    case 'AttachmentAdded':
      return li(
        e,
        'op',
        `attachment <span class="mono">${esc(e.data.name)}</span> (${e.data.object.size} bytes, ${esc(e.data.object.digest)})`
      )
  }
}

/** A checkpoint: the state the case entered, why, and when it may resume. */
const checkpointItem = (e: EventOf<'CheckpointRecorded'>): string => {
  const d = e.data
  const cls = d.state === 'BLOCKED' || d.state === 'EXHAUSTED' ? 'block' : 'op'
  return li(
    e,
    cls,
    `<span class="badge state-${escPlain(d.state)}">${esc(d.state)}${d.reason === null ? '' : ` / ${esc(d.reason)}`}</span>${d.resume_state === null ? '' : ` resumes into ${esc(d.resume_state)}`}${d.retry_not_before === null ? '' : `, retry not before ${esc(d.retry_not_before)}`}${d.manual_retry ? ' (manual retry)' : ''}`
  )
}

/** The timeline entry of one event, or null for an event the timeline does not show. */
/** Every event type has its entry in timelineItem (or null with a reason): a new type does not compile until it has one. */
const unlisted = (_: never): null => null

export const timelineItem = (
  e: RecordedEvent,
  objects: ReadonlyMap<string, Uint8Array>,
  known: KnownIds
): string | null => {
  switch (e.type) {
    case 'InputsRecorded':
    case 'RevisionCompleted':
    case 'InvestigationStarted':
      return preparationItem(e)
    case 'ModelRequested':
    case 'ModelResponded':
    case 'ModelFailed':
    case 'ModelResponseRejected':
    case 'InterpretationRecorded':
      return modelItem(e, objects, known)
    case 'PlanConfirmed':
    case 'CaptureRecorded':
    case 'QueryAnsweredFromCase':
    case 'ResearchFailed':
    case 'PlanCancelled':
      return researchItem(e)
    case 'EnrichmentCaptured':
      return null
    case 'BudgetReserved':
    case 'BudgetReleased':
    case 'BudgetToppedUp':
      return budgetItem(e)
    case 'BudgetConsumed':
      return null
    case 'CheckpointRecorded':
      return checkpointItem(e)
    case 'HypothesisProposed':
    case 'HypothesisUpdated':
    case 'LabTestRequested':
    case 'LabFeedbackRecorded':
    case 'ConclusionRecorded':
      return reasoningItem(e, known)
    case 'NoteRecorded':
    case 'AttachmentAdded':
      return operatorItem(e, known)
    case 'CommandSigned':
      // what the signature means (valid, trusted) is the verification's word, shown with it
      return li(
        e,
        'sys',
        `events ${e.data.first_seq}–${e.data.last_seq} signed by <b>${esc(e.data.principal)}</b> <span class="mono">${esc(e.data.fingerprint)}</span>`
      )
    default:
      return unlisted(e)
  }
}
