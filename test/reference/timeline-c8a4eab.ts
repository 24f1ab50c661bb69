/**
 * FROZEN reference: the report's timeline as it was before it moved into
 * src/projections/report/timeline.ts (commit c8a4eab; `git show c8a4eab^:src/projections/report/render.ts`),
 * kept so that a seeded property test (test/projections/timeline-reference.test.ts) compares it
 * with today's code. Only the imports and the signature (objects instead of the whole input) are
 * new. Never edited: a change to the timeline that is meant changes the property's generator
 * (or, when it changes what every event shows, this copy, said in the commit).
 */
import type { RecordedEvent } from '../../src/events/chain.js'
import { tokensOf } from '../../src/events/model-provenance.js'
import { requestText } from '../../src/projections/request-text.js'
import { asRec } from '../../src/projections/json-read.js'
import { esc, escPlain, str, utf8 } from '../../src/projections/report/html.js'
import { requesterText } from '../../src/projections/report/captures.js'

type Known = { evidence: ReadonlySet<string>; hypotheses: ReadonlySet<string> }

/** Escaped text in which every known E… and H… id links to its anchor. */
const linked = (text: string, known: Known): string =>
  esc(text).replace(/\b([EH]\d{1,6})\b/g, (m) =>
    known.evidence.has(m) || known.hypotheses.has(m) ? `<a href="#${m}">${m}</a>` : m
  )

const refLinks = (list: readonly string[], known: Known): string =>
  list.length === 0
    ? '<span class="muted">none</span>'
    : list
        .map((x) =>
          known.evidence.has(x) || known.hypotheses.has(x)
            ? `<a href="#${escPlain(x)}">${esc(x)}</a>`
            : `<span class="bad" title="unknown id">${esc(x)}</span>`
        )
        .join(', ')

const when = (e: RecordedEvent): string => `<span class="when">seq ${e.seq} · ${esc(e.at)} · ${esc(e.actor)}</span>`

export const referenceTimelineItem = (
  e: RecordedEvent,
  objects: ReadonlyMap<string, Uint8Array>,
  known: Known
): string | null => {
  const input = { objects }
  const li = (cls: string, body: string): string => `<li class="${cls}">${when(e)}<br>${body}</li>`
  switch (e.type) {
    case 'InputsRecorded':
      return li(
        'op',
        `revision ${e.data.revision}: bug report and ${e.data.entities.length} entit${e.data.entities.length === 1 ? 'y' : 'ies'} recorded`
      )
    case 'RevisionCompleted':
      return li(
        'op',
        `revision ${e.data.revision} prepared: ${e.data.fact_count} facts from ${e.data.queries} queries${e.data.complete ? '' : ' <span class="warn">(coverage incomplete)</span>'}`
      )
    case 'InvestigationStarted':
      return li('op', `investigation started on revision ${e.data.revision}, budget ${e.data.settings.budget_total}`)
    case 'ModelRequested':
      return li(
        'turn',
        `<b>turn ${e.data.turn}</b> (${esc(e.data.phase)}): prompt of ${e.data.prompt_chars} characters`
      )
    case 'ModelResponded': {
      const raw = utf8(input.objects.get(e.data.raw.digest))
      const p = e.data.provenance
      const by =
        p === null
          ? ''
          : ` by ${p.model === null ? p.kind : `<span class="mono">${esc(p.model)}</span>`}${p.usage === null ? '' : `, ${tokensOf(p.usage)} tokens`}, ${p.latency_ms} ms${p.attempts > 1 ? `, ${p.attempts} attempts` : ''}`
      return li(
        'turn',
        `<details><summary>the model's answer to turn ${e.data.turn} (${e.data.raw.size} bytes${by})</summary><pre>${raw === null ? 'not available' : linked(raw, known)}</pre></details>`
      )
    }
    case 'ModelFailed':
      return li(
        'block',
        `<span class="bad">model call failed (turn ${e.data.turn}): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'ModelResponseRejected':
      return li(
        'block',
        `<span class="bad">answer rejected (turn ${e.data.turn}, ${e.data.consecutive} in a row): ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'InterpretationRecorded':
      return li('turn', `interpretation: ${linked(e.data.summary, known)}`)
    case 'PlanConfirmed':
      return li(
        'turn',
        `plan ${esc(e.data.plan_id)}: <span class="mono">${esc(requestText(str(asRec(e.data.arguments)['kind']), e.data.arguments))}</span>`
      )
    case 'CaptureRecorded':
      return li(
        'turn',
        `evidence <a href="#${escPlain(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> recorded (${esc(e.data.kind)}${e.data.repeat ? ', a repeat' : ''})`
      )
    case 'EnrichmentCaptured':
      return null
    case 'QueryAnsweredFromCase':
      return li(
        'turn',
        `plan ${esc(e.data.plan_id)} answered from the case: evidence <a href="#${esc(e.data.evidence_id)}">${esc(e.data.evidence_id)}</a> again (an identical query; a repeat, no budget used)`
      )
    case 'ResearchFailed':
      return li(
        e.data.unavailable ? 'block' : 'op',
        `<span class="${e.data.unavailable ? 'bad' : 'warn'}">research ${e.data.unavailable ? 'unavailable' : 'refused'}: ${esc(e.data.code)}</span>: ${esc(e.data.message)}`
      )
    case 'BudgetReserved':
      return li(
        'op',
        `budget reserved: ${e.data.amount} (${esc(e.data.reservation_id)})${e.data.requester === null ? '' : ` for ${requesterText(e.data.requester)}`}`
      )
    case 'BudgetReleased':
      return li('op', `budget released: ${e.data.amount} (${esc(e.data.reason)})`)
    case 'BudgetConsumed':
      return null
    case 'BudgetToppedUp':
      return li('op', `budget topped up by ${e.data.amount}: ${esc(e.data.reason)}`)
    case 'PlanCancelled':
      return li('op', `plan ${esc(str(e.data.plan_id))} cancelled: ${esc(e.data.reason)}`)
    case 'CheckpointRecorded': {
      const d = e.data
      const cls = d.state === 'BLOCKED' || d.state === 'EXHAUSTED' ? 'block' : 'op'
      return li(
        cls,
        `<span class="badge state-${escPlain(d.state)}">${esc(d.state)}${d.reason === null ? '' : ` / ${esc(d.reason)}`}</span>${d.resume_state === null ? '' : ` resumes into ${esc(d.resume_state)}`}${d.retry_not_before === null ? '' : `, retry not before ${esc(d.retry_not_before)}`}${d.manual_retry ? ' (manual retry)' : ''}`
      )
    }
    case 'HypothesisProposed':
      return li(
        'turn',
        `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> proposed: ${linked(e.data.statement, known)} (evidence ${refLinks(e.data.evidence, known)})`
      )
    case 'HypothesisUpdated':
      return li(
        'turn',
        `hypothesis <a href="#${escPlain(e.data.hypothesis_id)}">${esc(e.data.hypothesis_id)}</a> → ${esc(e.data.status)}: ${linked(e.data.note, known)} (evidence ${refLinks(e.data.evidence, known)})`
      )
    case 'LabTestRequested':
      return li('block', `lab test ${esc(e.data.request_id)} requested: ${linked(e.data.description, known)}`)
    case 'LabFeedbackRecorded':
      return li('op', `lab feedback for ${esc(e.data.request_id)}: ${linked(e.data.feedback, known)}`)
    case 'ConclusionRecorded':
      return li('turn', `<b>conclusion</b>: ${linked(e.data.summary, known)}`)
    case 'NoteRecorded':
      return li(
        'op',
        `note: ${e.data.format === 'markdown' ? '<span class="muted">(Markdown, shown as text)</span> ' : ''}<pre>${linked(e.data.text, known)}</pre>`
      )
    case 'AttachmentAdded':
      return li(
        'op',
        `attachment <span class="mono">${esc(e.data.name)}</span> (${e.data.object.size} bytes, ${esc(e.data.object.digest)})`
      )
    default:
      return null
  }
}
