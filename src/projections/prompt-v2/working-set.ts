/**
 * The working set of a version-2 prompt: what the model sees of its evidence. Payloads, each
 * capture once (deduplicated by capture):
 *
 * 1. the evidence cited by hypotheses that are not refuted (open or supported), in hypothesis
 *    order and citation order;
 * 2. the latest RECENT_RESULTS results (captures that answered a plan or a query an operator or an MCP client asked,
 *    repeats and answers from the case included), newest first.
 *
 * Every other piece of evidence (older results, the enrichment's captures) is one line: its id,
 * its query in a few words, what it held and its size (citing it, or asking its query again,
 * which is answered from the case at no cost, shows it again). Pure: selected from the case state and the captures.
 */
import type { CaseState, Evidence } from '../../domain/case-state.js'
import type { Capture } from '../../events/capture.js'
import type { Requester } from '../../events/requester.js'
import { captureView, viewLines, type CaptureView } from '../capture-text.js'
import type { Wording } from '../query-kinds/parts.js'
import { requestText } from '../request-text.js'

/** Results shown with their payload besides the cited evidence. */
export const RECENT_RESULTS = 3

export interface Payload {
  readonly id: string
  readonly header: string
  readonly view: CaptureView
  /** The one line it becomes when the guard drops its payload. */
  readonly summary: string
  readonly cited: boolean
  readonly latest: boolean
  /** Seq of its last result (or its recording): lower is older. */
  readonly age: number
}

export interface OlderLine {
  readonly id: string
  readonly text: string
}

export interface WorkingSet {
  /** Payloads in priority order: cited first, then recent results newest first. */
  readonly payloads: readonly Payload[]
  /** One line per other piece of evidence, oldest first. */
  readonly older: readonly OlderLine[]
}

/** The number in an id (E12: 12; 0 without one): `Number(id.replace(/^\D+/, '')) || 0` without a regular expression. */
const idNumber = (id: string): number => {
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
const describe = (c: Capture, w: Wording): Described => {
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
const reasons = (s: CaseState, e: Evidence, citedBy: readonly string[], latest: boolean): string[] => {
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

/** The latest RECENT_RESULTS results, newest first (in one pass: a stable sort by last result, cut). */
const recentResults = (evidence: Iterable<Evidence>): string[] => {
  const top: Evidence[] = []
  for (const e of evidence) {
    const at = e.last_result_seq
    if (at === null) continue
    // after every entry as new or newer: the order a stable sort gives among equals
    let k = top.length
    while (k > 0 && (top[k - 1]?.last_result_seq ?? 0) < at) k--
    if (k < RECENT_RESULTS) {
      top.splice(k, 0, e)
      if (top.length > RECENT_RESULTS) top.pop()
    }
  }
  return top.map((e) => e.id)
}

/**
 * Payloads made before, by what they are made of (a payload other than the latest result reads
 * nothing else: its evidence's fields, its citations, its capture and the wording). Verify renders
 * every prompt of a case again, and a payload recurs in the prompts after it until its evidence
 * answers again or its citations change: one memo per case keeps the payload (and what the guard
 * derives from it) the same object across them.
 */
export type PayloadMemo = WeakMap<Evidence, PayloadMade>

/** A payload with what it was made of (checked on every use: a state folded on may change an entry in place). */
interface PayloadMade {
  readonly payload: Payload
  readonly wording: Wording
  readonly capture: Capture
  readonly digest: string
  readonly firstSeq: number
  readonly lastResultSeq: number | null
  readonly lastPlan: string | null
  readonly origin: Evidence['origin']
  readonly citedBy: readonly string[] | undefined
}

const sameCitations = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean => {
  if (a === undefined || b === undefined) return a === b
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}

/** Selects the working set (see the module comment); `memo`: payloads made before for the same case. */
export const selectWorkingSet = (
  s: CaseState,
  captures: ReadonlyMap<string, Capture>,
  memo?: PayloadMemo
): WorkingSet => {
  const w = wordingOf(s)
  // evidence by id: the research state keys its evidence by id
  const byId = s.research.evidence
  const citedBy = new Map<string, string[]>()
  const order: string[] = []
  for (const h of [...s.hypotheses.values()].sort((a, b) => idNumber(a.id) - idNumber(b.id))) {
    if (h.status === 'refuted') continue
    for (const id of h.evidence) {
      if (!byId.has(id)) continue
      const by = citedBy.get(id)
      if (by === undefined) {
        order.push(id)
        citedBy.set(id, [h.id])
      } else if (!by.includes(h.id)) by.push(h.id)
    }
  }
  const recent = recentResults(byId.values())
  const last = s.lastResult
  const latestId = last?.kind === 'capture' ? last.evidence_id : null
  const payloads: Payload[] = []
  const shown = new Set<string>()
  for (const id of [...order, ...recent.filter((x) => !citedBy.has(x))]) {
    const e = byId.get(id)
    const c = e === undefined ? undefined : captures.get(e.digest)
    if (e === undefined || c === undefined || shown.has(id)) continue
    shown.add(id)
    const latest = id === latestId
    const by = citedBy.get(id)
    // A payload made before from the same fields, citations, capture and wording (never the
    // latest result: its header reads the last result too).
    const known = memo === undefined || latest ? undefined : memo.get(e)
    if (
      known !== undefined &&
      known.wording === w &&
      known.capture === c &&
      known.digest === e.digest &&
      known.firstSeq === e.first_seq &&
      known.lastResultSeq === e.last_result_seq &&
      known.lastPlan === e.last_plan &&
      known.origin === e.origin &&
      known.payload.id === id &&
      sameCitations(known.citedBy, by)
    ) {
      payloads.push(known.payload)
      continue
    }
    const { view, size, request: asked } = describe(c, w)
    const header = `${latest ? 'Latest result ' : ''}${id} (${reasons(s, e, by ?? [], latest).join('; ')})`
    const made: Payload = {
      id,
      header: `${header}:`,
      view,
      summary: `${header}: ${asked} → ${view.summary} [its payload is not shown: the prompt limit; ${size} characters]`,
      cited: by !== undefined,
      latest,
      age: e.last_result_seq ?? e.first_seq
    }
    if (memo !== undefined && !latest)
      memo.set(e, {
        payload: made,
        wording: w,
        capture: c,
        digest: e.digest,
        firstSeq: e.first_seq,
        lastResultSeq: e.last_result_seq,
        lastPlan: e.last_plan,
        origin: e.origin,
        citedBy: by === undefined ? undefined : [...by]
      })
    payloads.push(made)
  }
  const rest: Array<readonly [number, Evidence]> = []
  for (const e of byId.values()) if (!shown.has(e.id)) rest.push([idNumber(e.id), e])
  const older = rest
    .sort((a, b) => a[0] - b[0])
    .map(([, e]) => ({ id: e.id, text: olderLine(e, captures.get(e.digest), w) }))
  return { payloads, older }
}
