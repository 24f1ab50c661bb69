/**
 * The way back to the tracker: a Markdown comment for the issue a case investigated (`vba case
 * summary CASE --markdown`): the conclusion (or where the case stands), the hypotheses with their
 * status, every source window the conclusion and the hypotheses cite as a permalink with its lines
 * (with the profile's web view; the path and lines otherwise), the budget spent and the
 * verification status in words. Pure over the report's input: the same case gives the same text.
 */
import { plural } from '../query-kinds/parts.js'
import * as E from 'fp-ts/lib/Either.js'
import { Capture } from '../../events/capture.js'
import { decodeJson } from '../../events/decode.js'
import { initCaseState } from '../../domain/case-state.js'
import { evolve } from '../../domain/case-evolve.js'
import { budgetTotal } from '../../domain/budget.js'
import type { ReportInput } from './render.js'
import { permalink, sourceWindows, windowText, MAX_WINDOWS } from './permalinks.js'
import { onlyWeakSupport, weakSupportText } from './support.js'
import { showInvisible } from '../visible-text.js'

/** Model text inside Markdown: one line, invisible characters as <U+XXXX>, no HTML or entity (`&rlm;` is U+200F), no link or emphasis syntax of its own. */
const md = (text: string): string =>
  showInvisible(text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\s]+/g, ' ').trim()).replace(
    /[\\`*_[\]<>|#&]/g,
    (c) => `\\${c}`
  )

/** A repository path's window as a link's text: no bracket, code span or HTML of its own; invisible characters as <U+XXXX>. */
const linkText = (text: string): string => showInvisible(text).replace(/[\\`[\]<>&]/g, (c) => `\\${c}`)

/** A repository path's window as a code span that no backtick in it ends, invisible characters as <U+XXXX>. */
const codeSpan = (text: string): string => {
  const t = showInvisible(text)
  const fence = '`'.repeat(Math.max(0, ...[...t.matchAll(/`+/g)].map((m) => m[0].length)) + 1)
  const pad = t.startsWith('`') || t.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${t}${pad}${fence}`
}

const utf8 = (b: Uint8Array | undefined): string | null => {
  if (b === undefined) return null
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(b)
  } catch {
    return null
  }
}

/** The agents that decided turns over MCP, each with its turns (`the agent a 1.0 over MCP (turns 1, 2)`). */
const agentsOf = (events: ReportInput['events']): string[] => {
  const turns = new Map<string, number[]>()
  for (const e of events) {
    if (e.type !== 'ModelResponded') continue
    const r = e.data.provenance?.requester
    if (r === undefined) continue
    const name = `${r.name} ${r.version}`.trim()
    turns.set(name, [...(turns.get(name) ?? []), e.data.turn])
  }
  return [...turns].map(
    ([name, ts]) => `the agent ${md(name)} over MCP (turn${ts.length === 1 ? '' : 's'} ${ts.join(', ')})`
  )
}

/** The summary of a case as a Markdown comment; `webView` links the cited windows. */
export const renderSummaryMarkdown = (input: ReportInput, webView: string | null = null): string => {
  const v = input.verification
  const errors = v.findings.filter((f) => f.severity === 'error')
  const verified = v.valid
    ? `verified: the hash chain is intact and every event is one the library's deciders could have produced${v.head === null ? '' : ` (${v.head.seq} events, head ${v.head.hash.slice(0, 19)}…)`}`
    : `does NOT verify: ${errors.length} error finding(s)${errors[0] === undefined ? '' : `, the first: ${errors[0].code}: ${md(errors[0].message).slice(0, 200)}`}; nothing below is proven`
  const title = `### vba investigation: ${md(input.title ?? input.caseId)}`
  if (input.unreadable === true) return `${title}\n\nCase \`${input.caseId}\` ${verified}.\n`
  const s = initCaseState()
  const captures = new Map<string, Capture | null>()
  for (const e of input.events) {
    evolve(s, e)
    if (e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') {
      if (captures.has(e.data.evidence_id)) continue
      const text = utf8(input.objects.get(e.data.capture.digest))
      const c = text === null ? null : decodeJson(Capture, text)
      captures.set(e.data.evidence_id, c !== null && E.isRight(c) ? c.right : null)
    }
  }
  const out: string[] = [title, '']
  const agents = agentsOf(input.events)
  if (s.conclusion !== null) {
    out.push(`**Conclusion** (turn ${s.turn}): ${md(s.conclusion.summary)}`)
    const cited = [...s.conclusion.hypotheses, ...s.conclusion.evidence]
    if (cited.length > 0) out.push('', `Cites ${cited.join(', ')}.`)
    const weak = onlyWeakSupport(
      s.conclusion,
      (h) => s.hypotheses.get(h)?.evidence ?? [],
      (id) => captures.get(id)
    )
    if (weak !== null) out.push('', `**Warning**: ${md(weakSupportText(weak))}.`)
  } else
    out.push(
      `**Not concluded**: the case is ${s.state}${s.reason === null ? '' : ` (${s.reason})`} after ${plural(s.turn, 'model turn')}.`
    )
  if (agents.length > 0) out.push('', `**Decided by**: ${agents.join('; ')}.`)
  if (s.hypotheses.size > 0) {
    out.push('', '**Hypotheses**', '')
    for (const h of s.hypotheses.values())
      out.push(
        `- ${h.id} (${h.status}): ${md(h.statement)}${h.evidence.length === 0 ? '' : ` (evidence ${h.evidence.join(', ')})`}`
      )
  }
  // Cited evidence: the conclusion's first, then that of the hypotheses that are not refuted.
  const cited = [
    ...(s.conclusion?.evidence ?? []),
    ...[...s.hypotheses.values()].filter((h) => h.status !== 'refuted').flatMap((h) => h.evidence)
  ].filter((id, i, all) => all.indexOf(id) === i)
  const lines: string[] = []
  for (const id of cited) {
    const c = captures.get(id)
    if (c === undefined || c === null) continue
    const windows = sourceWindows(c)
    for (const w of windows.slice(0, MAX_WINDOWS))
      lines.push(
        `- ${id}: ${webView === null ? codeSpan(windowText(w)) : `[${linkText(windowText(w))}](${permalink(webView, w)})`} at \`${w.commit.slice(0, 12)}\``
      )
    if (windows.length > MAX_WINDOWS) lines.push(`- ${id}: and ${windows.length - MAX_WINDOWS} more window(s)`)
  }
  if (lines.length > 0) out.push('', '**Cited source**', '', ...lines)
  const total = budgetTotal(s)
  out.push(
    '',
    `**Budget**: ${s.research.consumed} of ${total} unit(s) spent on ${s.research.evidence.size} piece(s) of evidence; ${s.tokens.total} model token(s).`,
    '',
    `**Verification**: case \`${input.caseId}\` ${verified}.`
  )
  return `${out.join('\n')}\n`
}
