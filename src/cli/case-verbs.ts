/**
 * The case-package verbs: case init/note/gc/unlock, verify, replay, show, report. Thin over the
 * public client where it offers the operation with the CLI's output (init, gc, unlock, verify);
 * the others are listed in docs/architecture.md ("The CLI and the client").
 */
import * as path from 'node:path'
import { openCaseAt, replayAt } from '../adapters/case-store/at.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { recordNote } from '../commands/typed.js'
import { parseReceipt, type VerifyReport } from '../adapters/case-store/verify.js'
import type { Receipt } from '../adapters/case-store/append.js'
import { existsSync } from 'node:fs'
import { coded, fail } from '../failures/error.js'
import { writeOutputFile } from '../adapters/output.js'
import { defaultProjections } from '../projections/index.js'
import { lifecycleProjection, type LifecycleView } from '../projections/lifecycle-view.js'
import type { SummaryView } from '../projections/summary.js'
import type { RevisionsView } from '../projections/revisions.js'
import type { Finding } from '../events/findings.js'
import { CliExit, EXIT, progressBar, refuseStdoutName, terminalText } from './io.js'
import { jsonLine } from './json-line.js'
import { caseWords } from './next-step.js'
import { cliClient, shownStoreUrl, storeUrl, type StoreOption } from './stores.js'
import { loadProfile } from '../adapters/config/profile.js'
import { caseReportWithVerification, caseSummaryMarkdown } from '../report/case-report.js'
import { optional } from '../optional.js'
import { factLines, latestFacts, latestFactsDocument } from './facts-text.js'
import { signerLines, trustOf } from './trust.js'
import { readSignedHeadFile } from './signed-head.js'
import { signersLines, signersProjection, type SignersView } from '../projections/signers.js'
import type { TrustOptions } from './options.js'

export interface Out {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

export const caseInit = async (
  io: Out,
  ref: string,
  opts: { id?: string; title?: string } & StoreOption
): Promise<void> => {
  const url = storeUrl(opts)
  const vba = await cliClient(url)
  if (url !== undefined && opts.id !== undefined && opts.id !== ref)
    fail('INVALID_ARGUMENT', 'with --store, CASE is the case id: leave out --id')
  const created = await vba.cases.create(ref, {
    ...optional('id', opts.id),
    ...optional('title', opts.title)
  })
  io.out(terminalText(`created case ${created.case_id} in ${url === undefined ? ref : shownStoreUrl(url)}`))
}

export const caseNote = async (
  io: Out,
  dir: CaseAt,
  text: string,
  opts: { expectGeneration?: number; commandId?: string; markdown?: boolean }
): Promise<void> => {
  const outcome = await recordNote(dir, {
    text,
    format: opts.markdown === true ? 'markdown' : 'plain',
    ...optional('commandId', opts.commandId),
    ...optional('expectedGeneration', opts.expectGeneration)
  })
  for (const r of outcome.repairs) io.err(`vba: notice ${r.code}: ${r.message}`)
  io.out(
    `${outcome.status === 'duplicate' ? 'already recorded' : 'recorded'}: generation ${outcome.generation}; receipt ${outcome.receipt.seq}:${outcome.receipt.hash}`
  )
}

export const caseUnlock = async (io: Out, dir: string, opts: { force?: boolean }): Promise<void> => {
  const vba = await cliClient(undefined)
  const removed = await vba.cases.unlock(dir, { force: opts.force === true })
  const owner = removed.state === 'free' ? '' : ` (owner pid ${removed.info?.pid ?? 'unknown'})`
  io.out(terminalText(`removed ${removed.state} lock${owner}; run vba verify ${caseWords(dir)} before writing`))
}

export const caseGc = async (io: Out, dir: string, opts: { json?: boolean }): Promise<void> => {
  const r = await (await cliClient(undefined)).cases.gc(dir)
  if (opts.json === true) {
    io.out(jsonLine(r))
    return
  }
  for (const o of r.removed_objects) io.out(`removed orphan object ${o}`)
  for (const t of r.removed_temp_files) io.out(`removed temporary file ${t}`)
  if (r.cut_tail_bytes > 0) io.out(`cut ${r.cut_tail_bytes} unacknowledged bytes from the end of events.jsonl`)
  if (r.recent_temp_files > 0)
    io.out(`kept ${r.recent_temp_files} temporary file(s) younger than a minute (a writer may be busy)`)
  io.out(
    `removed ${r.removed_objects.length} object(s) and ${r.removed_temp_files.length} temporary file(s)${r.cut_tail_bytes > 0 ? ', cut the log tail' : ''}`
  )
}

const describeFinding = (f: Finding): string => {
  const where = [
    f.path,
    f.line === undefined ? undefined : `line ${f.line}`,
    f.seq === undefined ? undefined : `seq ${f.seq}`
  ]
    .filter((x) => x !== undefined)
    .join(', ')
  return terminalText(
    `  ${f.severity === 'error' ? 'error ' : 'notice'} ${f.code}${where === '' ? '' : ` (${where})`}: ${f.message}`
  )
}

/** The lines of a case's verification; `subject` names what VALID is said of inside a bag ("case "). */
export const renderVerifyReport = (report: VerifyReport, subject = ''): string[] => {
  const errors = report.findings.filter((f) => f.severity === 'error').length + report.omitted_findings
  const notices = report.findings.length - (errors - report.omitted_findings)
  const notApplied = report.findings.filter((f) => f.code === 'RULE_NOT_APPLIED').length
  const lines = [
    `case ${report.case_id ?? '(unknown)'}: generation ${report.generation}, ${report.events} events, ${report.objects} objects (${report.object_bytes} bytes)${report.head === null ? '' : `, head ${report.head.seq}:${report.head.hash}`}`,
    report.valid
      ? `${subject}VALID${notices > 0 ? ` (${notices} notice${notices === 1 ? '' : 's'}${notApplied > 0 ? `; ${notApplied} rule(s) not applied, see RULE_NOT_APPLIED: --strict refuses this case` : ''})` : ''}`
      : `${subject}INVALID: ${errors} error${errors === 1 ? '' : 's'}, ${notices} notice${notices === 1 ? '' : 's'}`,
    ...report.findings.map(describeFinding),
    ...receiptLines(report),
    ...signerLines(report)
  ]
  if (report.omitted_findings > 0) lines.push(`  ... and ${report.omitted_findings} more findings`)
  const ev = report.evidence
  if (ev !== undefined) {
    const at =
      [...ev.commits.map((c) => `commit ${c}`), ...ev.snapshots.map((s) => `snapshot ${s}`)].join(' and ') || 'nothing'
    lines.push(
      `evidence re-derived at ${at}: ${ev.checked} of ${ev.captures} capture(s) asked again, ${ev.matched} identical, ${ev.mismatched} differ, ${ev.not_rechecked} not re-checked`
    )
  }
  return lines
}

/**
 * A receipt the case holds (`--expect-head`), confirmed: its event, and the later ones that extend
 * it. One it does not hold is a HEAD_ROLLBACK or HEAD_FORK finding; one not compared says nothing.
 */
const receiptLines = (report: VerifyReport): string[] => {
  const r = report.receipt
  if (r?.matched !== true) return []
  const later = report.head === null ? 0 : report.head.seq - r.seq
  return [
    `receipt ${r.seq}:${r.hash} matches: the case holds its event at seq ${r.seq}${later === 0 ? ', its head' : `, and ${later} later event${later === 1 ? ' extends' : 's extend'} it (head ${report.head?.seq})`}`
  ]
}

/** `--against PROFILE`: the case's evidence re-derived from the world the profile reaches. */
export const againstProfile = async (report: VerifyReport, at: CaseAt, profileFile: string): Promise<VerifyReport> => {
  const profile = await loadProfile(profileFile)
  const { rederiveEvidence, withEvidence } = await import('../research/rederive.js')
  const bar = progressBar('evidence')
  try {
    return withEvidence(report, await rederiveEvidence(at, profile, { onProgress: bar.update }))
  } finally {
    bar.stop()
  }
}

/** The progress of a verify: the log and objects ('verify'), then re-derived evidence ('evidence'). */
const phaseBars = (): { update: (phase: string, done: number, total: number) => void; stop: () => void } => {
  const checks = progressBar('verify')
  let evidence: ReturnType<typeof progressBar> | null = null
  return {
    update: (phase, done, total) => {
      if (phase !== 'evidence') return checks.update(done, total)
      if (evidence === null) {
        checks.stop()
        evidence = progressBar('evidence')
      }
      evidence.update(done, total)
    },
    stop: () => {
      if (evidence === null) checks.stop()
      else evidence.stop()
    }
  }
}

/**
 * `--expect-head SEQ:HASH` as a receipt, or `--expect-head FILE`, a signed head as `vba head
 * --sign-key` prints it (checked against --trust); bad input: exit 2.
 */
export const receiptOption = async (text: string | undefined): Promise<{ expectHead?: Receipt | string }> => {
  if (text === undefined) return {}
  const r = parseReceipt(text)
  if (r !== null) return { expectHead: r }
  if (/^\d+:/.test(text) || !existsSync(text))
    return fail(
      'INVALID_ARGUMENT',
      `--expect-head takes SEQ:sha256:<64 hex> (as printed after every append) or the file of a signed head (vba head --sign-key), got ${JSON.stringify(text.slice(0, 100))}`
    )
  return { expectHead: (await readSignedHeadFile(text, '--expect-head')).text }
}

export const verify = async (
  io: Out,
  ref: string,
  opts: { json?: boolean; expectHead?: string; against?: string; strict?: boolean } & TrustOptions & StoreOption
): Promise<void> => {
  const vba = await cliClient(storeUrl(opts))
  const expect = await receiptOption(opts.expectHead)
  const trust = await trustOf(opts)
  const bars = phaseBars()
  let report: VerifyReport
  try {
    report = await vba.cases.verify(ref, {
      ...expect,
      ...optional('against', opts.against),
      ...optional('strict', opts.strict),
      ...trust,
      onProgress: bars.update
    })
  } finally {
    bars.stop()
  }
  if (opts.json === true) {
    for (const f of report.findings) io.out(jsonLine({ finding: f }))
    const { findings: _f, ...summary } = report
    io.out(jsonLine({ summary }))
  } else {
    for (const line of renderVerifyReport(report)) io.out(line)
  }
  if (!report.valid) throw new CliExit(EXIT.FINDINGS)
}

export const replay = async (io: Out, dir: CaseAt, opts: { json?: boolean }): Promise<void> => {
  const result = await replayAt(dir, defaultProjections())
  for (const n of result.notices) io.err(`vba: notice ${n.code}: ${n.message}`)
  const { notices: _n, ...stable } = result
  if (opts.json === true) {
    io.out(jsonLine(stable))
    return
  }
  io.out(`case ${result.case_id}: replayed ${result.generation} events, head ${result.head_hash}`)
  for (const [name, { version, view }] of Object.entries(result.views)) {
    io.out(`${name} (v${version}):`)
    for (const line of JSON.stringify(view, null, 2).split('\n')) io.out(terminalText(`  ${line}`))
  }
}

export const show = async (io: Out, dir: CaseAt, opts: { json?: boolean }): Promise<void> => {
  const handle = await openCaseAt(dir)
  const replayed = await replayAt(dir, [...defaultProjections(), lifecycleProjection, signersProjection])
  // Signers are shown only for a case that has a signature: an unsigned case's output is as before.
  const { signers: signersView, ...views } = replayed.views
  const signers = signersView?.view as SignersView | undefined
  const result = { ...replayed, views: signers?.signers.length ? replayed.views : views }
  const summary = result.views['summary']?.view as SummaryView | undefined
  if (opts.json === true) {
    io.out(
      jsonLine({
        declaration: handle.declaration,
        head_hash: result.head_hash,
        views: result.views,
        facts: (await latestFactsDocument(dir, revisionsOf(result.views)))?.doc ?? null
      })
    )
    return
  }
  const d = handle.declaration
  io.out(terminalText(`case        ${d.case_id}${d.title === undefined ? '' : ` - ${d.title}`}`))
  io.out(`created     ${d.created_at}`)
  io.out(`generation  ${result.generation}`)
  io.out(`head        ${result.head_hash}`)
  const life = result.views['lifecycle']?.view as LifecycleView | undefined
  if (life !== undefined)
    io.out(
      `state       ${life.state}${life.reason === null ? '' : ` / ${life.reason}`}${life.turn > 0 ? `, turn ${life.turn}` : ''} (vba status: the budget, the hypotheses and what to run next)`
    )
  if (summary !== undefined) {
    io.out(
      `events      ${summary.events} in ${summary.commands} commands (${summary.events_upcast} read through upcasters)`
    )
    for (const [type, n] of Object.entries(summary.events_by_type)) io.out(`  ${String(n).padStart(6)} ${type}`)
    io.out(`objects     ${summary.objects.count} (${summary.objects.bytes} bytes)`)
  }
  const facts = await latestFacts(dir, revisionsOf(result.views))
  if (facts !== null) for (const l of factLines(facts.revision, facts.facts)) io.out(terminalText(l))
  for (const line of signersLines(signers)) io.out(terminalText(line))
  for (const n of handle.notices) io.out(terminalText(`notice      ${n.code}: ${n.message}`))
}

const revisionsOf = (views: Record<string, { view: unknown }>): RevisionsView['revisions'] =>
  (views['revisions']?.view as RevisionsView | undefined)?.revisions ?? []

/** The web view template of `--config` (`[source] web_view`), if it names one. */
const webViewOf = async (config: string | undefined): Promise<{ webView?: string }> => {
  if (config === undefined) return {}
  const web = (await loadProfile(config)).source?.web_view
  return web === undefined ? {} : { webView: web }
}

/** `vba case summary CASE --markdown [--config P]`: the case as a Markdown comment for its issue. */
export const summaryVerb = async (io: Out, at: CaseAt, opts: { config?: string }): Promise<void> => {
  const { markdown } = await caseSummaryMarkdown(at, await webViewOf(opts.config))
  io.out(markdown.replace(/\n$/, ''))
}

/** Names whose extension promises another format than the HTML page (what to run for it instead). */
const OTHER_FORMATS: Readonly<Record<string, string>> = {
  '.pdf': 'for a PDF, print the page with a browser (chromium --headless --print-to-pdf=FILE.pdf FILE.html)',
  '.md': 'for Markdown, run vba case summary CASE --markdown',
  '.markdown': 'for Markdown, run vba case summary CASE --markdown',
  '.json': 'for JSON, run vba show CASE --json or vba verify CASE --json',
  '.png': 'for an image, take a screenshot of the page with a browser',
  '.jpg': 'for an image, take a screenshot of the page with a browser',
  '.jpeg': 'for an image, take a screenshot of the page with a browser'
}

/** `--out x.pdf` would have got an HTML page under a PDF's name: refused, with what gives that format. */
const refuseOtherFormat = (out: string): void => {
  const ext = path.extname(out).toLowerCase()
  const instead = OTHER_FORMATS[ext]
  if (instead !== undefined)
    fail(
      'INVALID_ARGUMENT',
      `vba report writes one HTML page, not a ${ext.slice(1)} file: name it FILE.html; ${instead}`
    )
}

/** `vba report CASE --out FILE.html`: the self-contained HTML report (written atomically). */
export const reportVerb = async (
  io: Out,
  at: CaseAt,
  opts: { out: string; force?: boolean; against?: string; config?: string }
): Promise<void> => {
  refuseStdoutName(opts.out)
  refuseOtherFormat(opts.out)
  const against = opts.against
  const web = await webViewOf(opts.config)
  const { html, verification } = await coded(`write ${opts.out}`, async () => {
    const r = await caseReportWithVerification(at, {
      ...web,
      ...(against === undefined ? {} : { refine: (report: VerifyReport) => againstProfile(report, at, against) })
    })
    // Into an existing directory, never over an existing output unless --force (a regular file only).
    await writeOutputFile(opts.out, r.html, 'report', { force: opts.force === true })
    return r
  })
  io.out(terminalText(`wrote ${opts.out} (${Buffer.byteLength(html)} bytes)`))
  if (!verification.valid) {
    const errors = verification.findings.filter((f) => f.severity === 'error').length + verification.omitted_findings
    // The line every failure has (`vba: CODE: message`), exit 1 as for any verb on a corrupt case.
    fail('CASE_CORRUPT', `the case does not verify (${errors} error finding(s)); the report shows them`, {
      findings: verification.findings.filter((f) => f.severity === 'error').slice(0, 20)
    })
  }
}
