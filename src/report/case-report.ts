/**
 * The case report of a case wherever it is (a directory or a store): verification, the events and
 * the objects the page shows (captures, facts, the bug report, raw answers), rendered by the pure
 * {@link renderReport}. The same case gives byte-identical HTML on any machine.
 */
import type { RecordedEvent } from '../events/chain.js'
import { collectInto } from '../projections/projection.js'
import type { ObjectRefLite } from '../domain/case-state.js'
import { locate } from '../adapters/case-store/directory-store.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { FailureError } from '../failures/error.js'
import { renderReport, type ReportInput } from '../projections/report/render.js'
import { renderSummaryMarkdown } from '../projections/report/markdown.js'
import { VERSION } from '../version.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import { optional } from '../optional.js'

/** The objects a report shows, by the events that reference them. */
const shownObjects = (events: readonly RecordedEvent[]): ObjectRefLite[] => {
  const out: ObjectRefLite[] = []
  for (const e of events) {
    if (e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') out.push(e.data.capture)
    else if (e.type === 'InputsRecorded') out.push(e.data.report)
    else if (e.type === 'RevisionCompleted') out.push(e.data.facts)
    else if (e.type === 'ModelResponded') out.push(e.data.raw)
  }
  return out
}

export interface ReportOptions {
  /** Adds to the verification (for example the evidence re-derived from a profile's world: `vba report --against`). */
  readonly refine?: (report: VerifyReport) => Promise<VerifyReport>
  /** The repository's web view template (`[source] web_view`): cited source windows link to it. */
  readonly webView?: string
}

/**
 * What the report of a case shows, with its verification: the events and the objects the page
 * shows. A case whose log does not check out gives its verification findings only (unreadable).
 */
export const caseReportInput = async (
  at: CaseAt,
  options: ReportOptions = {}
): Promise<{ readonly input: ReportInput; readonly verification: VerifyReport }> => {
  const { store, ref } = locate(at)
  const checked = await store.verify(ref)
  const verification = options.refine === undefined || checked.head === null ? checked : await options.refine(checked)
  const events: RecordedEvent[] = []
  let handle: Awaited<ReturnType<typeof store.open>>
  try {
    handle = await store.open(ref)
    await store.replay(ref, [collectInto(events)])
  } catch (e) {
    if (!(e instanceof FailureError) || e.failure.code !== 'CASE_CORRUPT') throw e
    const input: ReportInput = {
      caseId: verification.case_id ?? ref,
      title: null,
      createdAt: '',
      events: [],
      objects: new Map(),
      verification: { valid: false, findings: verification.findings, head: verification.head },
      version: VERSION,
      unreadable: true
    }
    return { input, verification }
  }
  const objects = new Map<string, Uint8Array>()
  for (const o of shownObjects(events)) {
    if (objects.has(o.digest)) continue
    try {
      objects.set(o.digest, await store.readObject(ref, o))
    } catch (e) {
      // A missing or damaged object is already a verification finding; the page says it is not available.
      if (!(e instanceof FailureError)) throw e
    }
  }
  const input: ReportInput = {
    caseId: handle.declaration.case_id,
    title: handle.declaration.title ?? null,
    createdAt: handle.declaration.created_at,
    events,
    objects,
    verification: {
      valid: verification.valid,
      findings: verification.findings,
      head: verification.head,
      ...optional('evidence', verification.evidence)
    },
    version: VERSION,
    ...optional('webView', options.webView)
  }
  return { input, verification }
}

/**
 * Renders the HTML report of a case with its verification. A case whose log does not check out
 * still gets a page: its verification findings, and nothing read from the log.
 */
export const caseReportWithVerification = async (
  at: CaseAt,
  options: ReportOptions = {}
): Promise<{ readonly html: string; readonly verification: VerifyReport }> => {
  const { input, verification } = await caseReportInput(at, options)
  return { html: renderReport(input), verification }
}

/** The case as a Markdown comment for its issue (see {@link renderSummaryMarkdown}), with its verification. */
export const caseSummaryMarkdown = async (
  at: CaseAt,
  options: ReportOptions = {}
): Promise<{ readonly markdown: string; readonly verification: VerifyReport }> => {
  const { input, verification } = await caseReportInput(at, options)
  return { markdown: renderSummaryMarkdown(input, options.webView ?? null), verification }
}

/** Renders the HTML report of a case (see {@link caseReportWithVerification}). */
export const caseReport = async (at: CaseAt): Promise<string> => (await caseReportWithVerification(at)).html
