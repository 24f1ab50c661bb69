/**
 * The case report: one self-contained HTML page rendered from the log and its objects, for the
 * people who review an investigation (what was asked, what was found, why the conclusion follows,
 * every claim one click from its evidence). A projection: a pure function of the events, the
 * objects they reference and the verification result, so the same case gives byte-identical HTML
 * on any machine. No script, no outside resource (a Content-Security-Policy forbids both); folding
 * uses <details>. Everything from a capture, a model answer or a note is escaped, and bidi and
 * zero-width characters are shown as visible codes, never obeyed.
 */
import type { RecordedEvent } from '../../events/chain.js'
import * as E from 'fp-ts/lib/Either.js'
import { Capture } from '../../events/capture.js'
import { decodeJson } from '../../events/decode.js'
import type { Requester } from '../../events/catalog.js'
import type { Finding } from '../../events/findings.js'
import { FactsDocument, type Fact } from '../../domain/facts-document.js'
import { initCaseState } from '../../domain/case-state.js'
import { evolve } from '../../domain/case-evolve.js'
import { cell, requestText } from '../request-text.js'
import { modelUsage, type ModelUsageView } from '../model-usage.js'
import { STYLE, esc, escPlain, linked, refLinks, utf8, type KnownIds } from './html.js'
import { captureBody, requesterText, valueCell } from './captures.js'
import { budgetChart, budgetSeries } from './budget.js'
import { reservedRequests, timelineItem } from './timeline.js'
import { plural } from '../query-kinds/parts.js'
import { provenanceText } from '../../domain/extract.js'
import { MAX_WINDOWS, permalink, sourceWindows, windowText } from './permalinks.js'
import { notDerived } from './not-derived.js'
import { boundTo, onlyWeakSupport, weakSupportText } from './support.js'

export { esc, escPlain } from './html.js'

export interface ReportInput {
  readonly caseId: string
  readonly title: string | null
  readonly createdAt: string
  /** Every event, in order. */
  readonly events: readonly RecordedEvent[]
  /** Objects by digest: captures, facts, reports and raw answers (others may be absent). */
  readonly objects: ReadonlyMap<string, Uint8Array>
  readonly verification: {
    readonly valid: boolean
    readonly findings: readonly Finding[]
    readonly head: { readonly seq: number; readonly hash: string } | null
    /** The evidence re-derived from a profile's world, when it was (`vba report --against`). */
    readonly evidence?: EvidenceSummary
  }
  /** The library version that rendered the page (part of the page, so part of its bytes). */
  readonly version: string
  /** The log does not check out: the page shows the verification findings only. */
  readonly unreadable?: boolean
  /** The repository's web view template: every source window of the evidence links to it at its commit. */
  readonly webView?: string
}

interface Model {
  readonly evidence: Map<
    string,
    {
      id: string
      seq: number
      at: string
      capture: Capture | null
      digest: string
      repeat: boolean
      kind: string
      source: 'investigation' | 'enrichment'
      requester: Requester | null
    }
  >
  readonly hypotheses: Map<
    string,
    {
      id: string
      statement: string
      history: Array<{ seq: number; at: string; status: string; evidence: string[]; note: string }>
    }
  >
}

const ids = (m: Model): KnownIds => ({
  evidence: new Set(m.evidence.keys()),
  hypotheses: new Set(m.hypotheses.keys())
})

const parseCapture = (b: Uint8Array | undefined): Capture | null => {
  const t = utf8(b)
  if (t === null) return null
  const c = decodeJson(Capture, t)
  return E.isRight(c) ? c.right : null
}

const buildModel = (input: ReportInput): Model => {
  const evidence: Model['evidence'] = new Map()
  const hypotheses: Model['hypotheses'] = new Map()
  const requesters = new Map<string, Requester | null>()
  for (const e of input.events) {
    if (e.type === 'BudgetReserved') requesters.set(e.data.reservation_id, e.data.requester)
    else if (e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') {
      const d = e.data
      const requester = e.type === 'CaptureRecorded' ? (requesters.get(e.data.reservation_id) ?? null) : null
      if (!evidence.has(d.evidence_id))
        evidence.set(d.evidence_id, {
          id: d.evidence_id,
          seq: e.seq,
          at: e.at,
          capture: parseCapture(input.objects.get(d.capture.digest)),
          digest: d.capture.digest,
          repeat: d.repeat,
          kind: d.kind,
          source: e.type === 'CaptureRecorded' ? 'investigation' : 'enrichment',
          requester
        })
    } else if (e.type === 'HypothesisProposed') {
      hypotheses.set(e.data.hypothesis_id, {
        id: e.data.hypothesis_id,
        statement: e.data.statement,
        history: [{ seq: e.seq, at: e.at, status: 'proposed', evidence: [...e.data.evidence], note: '' }]
      })
    } else if (e.type === 'HypothesisUpdated') {
      hypotheses.get(e.data.hypothesis_id)?.history.push({
        seq: e.seq,
        at: e.at,
        status: e.data.status,
        evidence: [...e.data.evidence],
        note: e.data.note
      })
    }
  }
  return { evidence, hypotheses }
}

// --- captures ------------------------------------------------------------------------------------

/**
 * The evidence re-derived from the world a profile reaches (see src/research/rederive.ts): what
 * `verify --against` and `report --against` found. @category cases
 */
export interface EvidenceSummary {
  /** Distinct captures the log records. */
  readonly captures: number
  /** Asked again and compared. */
  readonly checked: number
  readonly matched: number
  readonly mismatched: number
  /** Not asked again (another snapshot, no database or source in the profile, an unavailable provider). */
  readonly not_rechecked: number
  /** The commits and snapshots the evidence was re-derived at. */
  readonly commits: readonly string[]
  readonly snapshots: readonly string[]
}

/** Says whether the evidence was re-derived, where, and with what result; only chain and rules are claimed otherwise. */
const evidenceBadge = (e: EvidenceSummary | undefined): string => {
  if (e === undefined)
    return '<span class="badge" id="evidence-check">evidence not re-derived (vba report --against PROFILE)</span>'
  const at =
    [...e.commits.map((c) => `commit ${c}`), ...e.snapshots.map((x) => `snapshot ${x}`)].join(' and ') || 'nothing'
  const whole = e.mismatched === 0 && e.not_rechecked === 0 && e.checked === e.captures
  const counts = `${e.matched} of ${e.captures} capture(s) identical${e.mismatched === 0 ? '' : `, ${e.mismatched} differ`}${e.not_rechecked === 0 ? '' : `, ${e.not_rechecked} not re-checked`}`
  return `<span class="badge ${e.mismatched > 0 ? 'bad' : whole ? 'ok' : ''}" id="evidence-check">${esc(`evidence re-derived at ${at}: ${counts}`)}</span>`
}

const originText = (c: Capture): string =>
  c.origin.type === 'git'
    ? `commit ${c.origin.commit}`
    : `database ${c.origin.database}, snapshot ${c.origin.snapshot_id}`

/** The permalinks of a capture's source windows (none without a web view). */
const windowLinks = (c: Capture, webView: string | undefined): string => {
  if (webView === undefined) return ''
  const windows = sourceWindows(c)
  if (windows.length === 0) return ''
  const shown = windows
    .slice(0, MAX_WINDOWS)
    .map((w) => `<a class="mono" href="${escPlain(permalink(webView, w))}" rel="noreferrer">${esc(windowText(w))}</a>`)
  return `<p>at the repository: ${shown.join(', ')}${windows.length > MAX_WINDOWS ? ` and ${windows.length - MAX_WINDOWS} more` : ''}</p>`
}

const evidenceCard = (ev: Model['evidence'] extends Map<string, infer V> ? V : never, webView?: string): string => {
  const c = ev.capture
  const head = `<h3 id="${escPlain(ev.id)}">${esc(ev.id)} <span class="badge">${esc(ev.kind)}</span> <span class="muted">${ev.source === 'enrichment' ? 'case preparation' : ev.requester === null ? 'investigation' : `asked by ${requesterText(ev.requester)}`}, seq ${ev.seq}${ev.repeat ? ', a repeat of earlier evidence' : ''}</span></h3>`
  if (c === null)
    return `<section class="card">${head}<p class="bad">the capture object ${esc(ev.digest)} is not available</p></section>`
  return `<section class="card">${head}<p class="mono">${esc(requestText(c.kind, c.request))}</p><p class="muted">${esc(originText(c))} · capture ${esc(ev.digest)}</p>${windowLinks(c, webView)}${captureBody(c)}</section>`
}

// --- facts ---------------------------------------------------------------------------------------

const factItem = (f: Fact, byDigest: ReadonlyMap<string, string>, known: ReturnType<typeof ids>): string => {
  const src = (p: { capture: string } | undefined): string => {
    const e = p === undefined ? undefined : byDigest.get(p.capture)
    return e === undefined ? '' : ` <span class="muted">(<a href="#${escPlain(e)}">${esc(e)}</a>)</span>`
  }
  switch (f.type) {
    case 'entity':
      return `<li><b>${esc(`${f.entity_type} ${String(f.id)}`)}</b> from ${esc(f.table)}${src(f.provenance)}<table><tbody>${Object.entries(
        f.values
      )
        .map(([k, v]) => `<tr><th>${esc(k)}</th>${valueCell(v)}</tr>`)
        .join('')}</tbody></table></li>`
    case 'project_description':
      return `<li><b>${esc(`${f.role}`)}</b> of ${esc(`${f.entity_type} ${String(f.id)}`)} (${esc(f.column)})${src(f.provenance)}<pre>${esc(f.text)}</pre><p class="muted">${esc(f.notice)}</p></li>`
    case 'relationship':
      return `<li>${esc(`${f.relation}: ${f.from.table}.${f.from.column} = ${cell(f.from.value)} → ${f.to.rows} row(s) in ${f.to.table}.${f.to.column}${f.to.complete ? '' : ' (partial)'}`)}${src(f.to.provenance)}</li>`
    case 'source_symbol':
      return `<li>${esc(`${f.relation}: symbol ${f.symbol}${f.path_prefix === null ? '' : ` under ${f.path_prefix}`}: ${plural(f.hits, 'hit')}${f.complete ? '' : ' (partial)'}`)}${src(f.provenance)}</li>`
    case 'not_found':
      return `<li class="warn">${esc(`not found: ${f.table}.${f.column} = ${cell(f.value)}: ${f.notice}`)}${src(f.provenance)}</li>`
    case 'project_context_coverage':
      return `<li><b>coverage</b>: ${esc(`${plural(f.queries_run, 'query')} run, ${f.identical_queries_reused} reused; ${f.complete ? 'complete' : 'incomplete'}`)}${f.left_out.length === 0 ? '' : `<ul>${f.left_out.map((g) => `<li class="warn">${esc(`left out (${g.reason}): ${g.what}${g.count === undefined ? '' : `, ${plural(g.count, 'item')}`}${g.code === undefined ? '' : `, ${g.code}`}${g.detail === undefined ? '' : `: ${g.detail}`}`)}</li>`).join('')}</ul>`}<p class="muted">${esc(f.notice)}</p></li>`
    default:
      return `<li><pre>${linked(JSON.stringify(f), known)}</pre></li>`
  }
}

// --- model ---------------------------------------------------------------------------------------

/** The models that answered, the tokens they spent, and a model failure the case still waits on. */
/** The commits (or snapshots) the evidence was asked at, or else the revision's binding, said as such. */
const boundCell = (
  asked: ReadonlySet<string>,
  bound: string | null,
  revision: number | undefined,
  none: string
): string => {
  if (asked.size > 0 || bound === null)
    return asked.size === 0 ? `<span class="muted">${none}</span>` : [...asked].sort().map(esc).join('<br>')
  return `${esc(bound)} <span class="muted">(revision ${revision ?? '-'} is bound to it; no query asked there)</span>`
}

const modelCell = (u: ModelUsageView): string => {
  const names =
    u.models.length === 0
      ? u.answers === 0
        ? '<span class="muted">no answer yet</span>'
        : '<span class="muted">not recorded</span>'
      : u.models.map((m) => `<span class="mono">${esc(m)}</span>`).join(', ')
  const at = u.last?.endpoint == null ? '' : ` at <span class="mono">${esc(u.last.endpoint)}</span>`
  const tokens =
    u.answersWithUsage === 0
      ? ''
      : `; ${u.tokens.total} tokens (${u.tokens.prompt} prompt, ${u.tokens.completion} completion) over ${plural(u.answersWithUsage, 'answer')}`
  const failed =
    u.failure === null
      ? ''
      : `<br><span class="bad" id="model-failure">the model failed (turn ${u.failure.turn}): ${esc(u.failure.code)}: ${esc(u.failure.message)}</span>`
  return `${names}${at}${tokens}${failed}`
}

// --- the page (the timeline is in timeline.ts) ---------------------------------------------------

/** Renders the report (deterministic: the same input gives the same bytes). */
export const renderReport = (input: ReportInput): string => {
  const m = buildModel(input)
  const known = ids(m)
  const ev = input.events
  const folded = ev.reduce(evolve, initCaseState())
  const state: string = folded.state
  const reason = folded.reason
  const retry = folded.retryNotBefore
  const commits = new Set<string>()
  const snapshots = new Set<string>()
  for (const x of m.evidence.values()) {
    if (x.capture?.origin.type === 'git') commits.add(x.capture.origin.commit)
    if (x.capture?.origin.type === 'database')
      snapshots.add(`${x.capture.origin.database} @ ${x.capture.origin.snapshot_id}`)
  }
  const v = input.verification
  const errors = v.findings.filter((f) => f.severity === 'error')
  const unchecked = notDerived(ev, v.findings)
  const inputs = [...ev]
    .reverse()
    .find((e): e is Extract<RecordedEvent, { type: 'InputsRecorded' }> => e.type === 'InputsRecorded')
  const revision = [...ev]
    .reverse()
    .find((e): e is Extract<RecordedEvent, { type: 'RevisionCompleted' }> => e.type === 'RevisionCompleted')
  const report = inputs === undefined ? null : utf8(input.objects.get(inputs.data.report.digest))
  const factsText = revision === undefined ? null : utf8(input.objects.get(revision.data.facts.digest))
  const decoded = factsText === null ? null : decodeJson(FactsDocument, factsText)
  const facts: readonly Fact[] = decoded !== null && E.isRight(decoded) ? decoded.right.facts : []
  const byDigest = new Map([...m.evidence.values()].map((x) => [x.digest, x.id]))
  const conclusion = [...ev]
    .reverse()
    .find((e): e is Extract<RecordedEvent, { type: 'ConclusionRecorded' }> => e.type === 'ConclusionRecorded')
  const title = input.title ?? input.caseId
  const bound = boundTo(revision?.data.binding ?? null)
  const weak =
    conclusion === undefined
      ? null
      : onlyWeakSupport(
          conclusion.data,
          (h) => m.hypotheses.get(h)?.history.at(-1)?.evidence ?? [],
          (id) => m.evidence.get(id)?.capture
        )

  const parts: string[] = []
  parts.push(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="vba ${escPlain(input.version)}">
<title>${escPlain(`${input.caseId}: ${title}`)}</title>
<style>${STYLE}</style></head><body><main>`)
  parts.push(`<header><h1>${esc(title)}</h1><p class="muted mono">${esc(input.caseId)}</p>
<p><span class="badge state-${escPlain(state)}" id="state">${input.unreadable === true ? 'UNREADABLE' : esc(state)}${reason === null ? '' : ` / ${esc(reason)}`}</span>${retry === null ? '' : ` <span class="muted">retry not before ${esc(retry)}</span>`}
 <span class="badge ${v.valid ? 'ok' : 'bad'}" id="verification">${v.valid ? `verified: chain and rules hold${unchecked.any ? ', but not every rule applied (see the findings)' : ''}` : `INVALID: ${errors.length} error finding(s)`}</span>
 ${evidenceBadge(v.evidence)}</p>
<dl class="meta"><dt>created</dt><dd>${esc(input.createdAt)}</dd><dt>HEAD</dt><dd class="mono">${v.head === null ? 'none' : esc(`${v.head.seq}:${v.head.hash}`)}</dd>
<dt>source commit</dt><dd class="mono">${boundCell(commits, bound.commit, revision?.data.revision, 'no source research')}</dd>
<dt>world snapshot</dt><dd class="mono">${boundCell(snapshots, bound.snapshot, revision?.data.revision, 'no database research')}</dd>
<dt>model</dt><dd>${modelCell(modelUsage(ev))}</dd>
<dt>events</dt><dd>${ev.length}</dd></dl>
${v.findings.length === 0 ? '' : `<details open><summary class="${v.valid ? '' : 'bad'}">${v.findings.length} finding(s)</summary><ul>${v.findings.map((f) => `<li class="${f.severity === 'error' ? 'bad' : 'warn'}">${esc(`${f.code}${f.seq === undefined ? '' : ` (seq ${f.seq})`}: ${f.message}`)}</li>`).join('')}</ul></details>`}
</header>`)
  if (input.unreadable === true) {
    parts.push(
      `<section id="unreadable"><h2>This case does not verify</h2><p class="bad">Its log does not check out, so nothing in it is shown as fact: only the findings above. Run <code>vba verify</code> for the details.</p></section>`
    )
    parts.push('</main></body></html>\n')
    return parts.join('\n')
  }
  parts.push(
    `<section id="conclusion"><h2>Conclusion</h2>${conclusion === undefined ? `<p class="muted">No conclusion (the case is ${esc(state)}).</p>` : `<div class="card"><p>${linked(conclusion.data.summary, known)}</p><p>hypotheses: ${refLinks(conclusion.data.hypotheses, known)}<br>evidence: ${refLinks(conclusion.data.evidence, known)}</p>${weak === null ? '' : `<p class="warn" id="weak-support">${esc(weakSupportText(weak))}</p>`}</div>`}</section>`
  )
  parts.push(
    `<section id="report"><h2>Bug report</h2>${inputs?.data.origin == null ? '' : `<p>from <a class="mono" href="${escPlain(inputs.data.origin)}" rel="noreferrer">${esc(inputs.data.origin)}</a></p>`}${report === null ? '<p class="muted">No report recorded.</p>' : `<pre>${esc(report)}</pre>`}${inputs === undefined ? '' : `<p>entities: ${inputs.data.entities.map((x) => `<span class="mono">${esc(`${x.type} ${String(x.id)}`)}</span>`).join(', ') || 'none'}${(inputs.data.extracted ?? []).length === 0 ? '' : `<br>found in the report: ${(inputs.data.extracted ?? []).map((x) => `<span class="mono" title="${escPlain(provenanceText(x))}">${esc(`${x.type} ${x.id}`)}</span> (${esc(x.kind)} <span class="mono">${esc(x.text)}</span>, characters ${x.span.start}-${x.span.end})`).join(', ')}`}${inputs.data.attachments.length === 0 ? '' : `<br>attachments: ${inputs.data.attachments.map((a) => `<span class="mono">${esc(a.name)}</span> (${a.object.size} bytes)`).join(', ')}`}</p>`}</section>`
  )
  parts.push(
    `<section id="facts"><h2>Facts of revision ${revision?.data.revision ?? '-'}</h2>${revision !== undefined && unchecked.revisions.has(revision.data.revision) ? `<p class="warn" id="facts-not-derived">Not derived: revision ${revision.data.revision} was completed without its enrichment settings (RevisionCompleted version ${revision.version}), so verify could not derive these facts again from its captures.</p>` : ''}${facts.length === 0 ? '<p class="muted">No facts.</p>' : `<ul>${facts.map((f) => factItem(f, byDigest, known)).join('')}</ul>`}</section>`
  )
  parts.push(
    `<section id="hypotheses"><h2>Hypotheses</h2>${m.hypotheses.size === 0 ? '<p class="muted">None.</p>' : [...m.hypotheses.values()].map((h) => `<div class="card" id="${escPlain(h.id)}"><h3>${esc(h.id)} <span class="badge">${esc(h.history[h.history.length - 1]?.status ?? '')}</span></h3><p>${linked(h.statement, known)}</p><table><thead><tr><th>seq</th><th>status</th><th>evidence</th><th>note</th></tr></thead><tbody>${h.history.map((x) => `<tr><td>${x.seq}</td><td>${esc(x.status)}</td><td>${refLinks(x.evidence, known)}</td><td>${linked(x.note, known)}</td></tr>`).join('')}</tbody></table></div>`).join('')}</section>`
  )
  parts.push(`<section id="budget"><h2>Budget</h2>${budgetChart(budgetSeries(ev))}</section>`)
  const requests = reservedRequests(ev)
  parts.push(
    `<section id="timeline"><h2>Timeline</h2><ol class="timeline">${ev
      .map((e) => timelineItem(e, input.objects, known, requests))
      .filter((x): x is string => x !== null)
      .join('\n')}</ol></section>`
  )
  parts.push(
    `<section id="evidence"><h2>Evidence</h2>${unchecked.unbound.length === 0 ? '' : `<p class="warn" id="evidence-not-checked">Origins not checked: no binding was recorded for ${unchecked.unbound.map((x) => esc(x)).join(', ')}, so verify could not check that they are of the commit and snapshot the case is bound to.</p>`}${m.evidence.size === 0 ? '<p class="muted">No captures.</p>' : [...m.evidence.values()].map((ev) => evidenceCard(ev, input.webView)).join('\n')}</section>`
  )
  parts.push(
    `<footer><p class="muted">Rendered by vba ${esc(input.version)} from the case's log alone (${ev.length} events, HEAD ${v.head === null ? 'none' : esc(`${v.head.seq}:${v.head.hash}`)}). The same case gives the same page.</p></footer></main></body></html>\n`
  )
  return parts.join('\n')
}
