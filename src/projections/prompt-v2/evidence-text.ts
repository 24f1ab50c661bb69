/**
 * The evidence of a version-2 prompt in words (working-set.ts): a capture's view, size and query
 * in a few words (made once per capture), why a piece of evidence is in the working set, and the
 * one line of a piece of evidence outside it. Pure.
 */
import type { CaseState, Evidence } from '../../domain/case-state.js'
import type { Capture } from '../../events/capture.js'
import type { Requester } from '../../events/requester.js'
import { captureView, viewLines, type CaptureView } from '../capture-text.js'
import type { Wording } from '../query-kinds/parts.js'
import { requestText } from '../request-text.js'

/** The number in an id (E12: 12; 0 without one): `Number(id.replace(/^\D+/, '')) || 0` without a regular expression. */
export const idNumber = (id: string): number => {
  let k = 0
  while (k < id.length && !isDigit(id.charCodeAt(k))) k++
  return Number(k === 0 ? id : id.slice(k)) || 0
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57

/** The query in a few words: a page of rows without its column list (the payload shows the columns). */
const request = (c: Capture): string => {
  if (c.kind !== 'database.rows') return requestText(c.kind, c.request)
  const text = requestText(c.kind, { ...c.request, columns: [] }).replace(' [] ', ' ')
  return text.replace(/ offset 0 limit \d+$/, '')
}

const sizeOf = (v: CaptureView): number => viewLines(v).reduce((n, l) => n + l.length + 1, 0)

/** The wording of the investigation's prompts: exact for starts that record `exact_wording`. */
export const wordingOf = (s: CaseState): Wording => (s.settings?.exact_wording === true ? 'exact' : 'legacy')

interface Described {
  readonly view: CaptureView
  readonly size: number
  readonly request: string
  /** Its older-evidence lines, by evidence id and origin. */
  readonly older: Map<string, string>
}

/**
 * A capture's view, its size and its request in words, made once per capture object and wording:
 * verify renders every prompt of a case again, and a capture stays in every later prompt's state.
 */
const described: { readonly [W in Wording]: WeakMap<Capture, Described> } = {
  exact: new WeakMap(),
  legacy: new WeakMap()
}
export const describe = (c: Capture, w: Wording): Described => {
  let d = described[w].get(c)
  if (d === undefined) {
    const view = captureView(c, w)
    d = { view, size: sizeOf(view), request: request(c), older: new Map() }
    described[w].set(c, d)
  }
  return d
}

/**
 * Who asked for a query that is no plan: an operator, or (exact wording) the MCP client that
 * recorded it, by the name and version it gave (quoted: its own claim).
 */
export const askerText = (w: Wording, requester: Requester | undefined): string =>
  w === 'exact' && requester !== undefined
    ? `the ${requester.protocol.toUpperCase()} client ${JSON.stringify(`${requester.name} ${requester.version}`.trim())}`
    : 'an operator'

/** Why a piece of evidence is in the working set, in words. */
export const reasons = (s: CaseState, e: Evidence, citedBy: readonly string[], latest: boolean): string[] => {
  const out: string[] = []
  const last = s.lastResult
  if (latest && last?.kind === 'capture') {
    const asker = askerText(wordingOf(s), last.requester)
    const whose =
      last.plan_id !== null
        ? `plan ${last.plan_id}`
        : asker === 'an operator'
          ? "an operator's query"
          : `a query of ${asker}`
    out.push(
      last.from_case
        ? `answers ${whose} from the case: an identical query was asked before; a repeat, no budget used, not new evidence`
        : `answers ${whose}${last.repeat ? '; identical to earlier evidence, not new evidence' : ''}`
    )
  } else if (e.last_result_seq !== null && citedBy.length === 0)
    out.push(e.last_plan === null ? 'an earlier result' : `result of plan ${e.last_plan}`)
  if (citedBy.length > 0) out.push(`cited by ${citedBy.join(', ')}`)
  if (e.origin === 'enrichment') out.push('from the case preparation')
  return out
}

/** The line of a piece of evidence outside the payloads. */
export const olderLine = (e: Evidence, c: Capture | undefined, w: Wording): string => {
  if (c === undefined) return `  ${e.id} ${e.kind} (its capture cannot be read)`
  const d = describe(c, w)
  const key = `${e.origin === 'enrichment' ? 'p' : 'r'}${e.id}`
  let line = d.older.get(key)
  if (line === undefined) {
    line = `  ${e.id} ${d.request}: ${d.view.summary} (${e.origin === 'enrichment' ? 'preparation, ' : ''}${d.size} chars)`
    d.older.set(key, line)
  }
  return line
}
