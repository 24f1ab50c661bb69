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
import type { CaseState, Evidence, Hypothesis } from '../../domain/case-state.js'
import type { Capture } from '../../events/capture.js'
import type { CaptureView } from '../capture-text.js'
import type { Wording } from '../query-kinds/parts.js'
import { describe, idNumber, olderLine, reasons, wordingOf } from './evidence-text.js'

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
 * What the working sets of one case share, made before and kept by what they are made of. Verify
 * renders every prompt of a case again from snapshots of its state, which share every part the
 * log did not change between them: a payload recurs in the prompts after it until its evidence
 * answers again or its citations change, the hypotheses' citations until a hypothesis changes, an
 * older-evidence line until its evidence changes. Each is checked against what it was made of on
 * every use (a state folded on may change an entry in place), so a memo never changes what a
 * working set is: {@link selectWorkingSet} with one is what it is without (a property test holds them).
 */
export interface SelectionMemo {
  readonly payloads: WeakMap<Evidence, PayloadMade>
  readonly olderLines: WeakMap<Evidence, OlderMade>
  /** The citations of the hypotheses read last. */
  citations: Citations | undefined
  /** The selection made last, with what it read. */
  last: Selected | undefined
}

export const selectionMemo = (): SelectionMemo => ({
  payloads: new WeakMap(),
  olderLines: new WeakMap(),
  citations: undefined,
  last: undefined
})

/**
 * A selection with the parts of the state it read: a state's evidence map is the same object as
 * the one before only when no evidence changed (snapshots share what the log did not change).
 */
interface Selected {
  readonly evidence: ReadonlyMap<string, Evidence>
  readonly captures: ReadonlyMap<string, Capture>
  readonly wording: Wording
  /** The latest results among that evidence (recentResults). */
  readonly recent: readonly string[]
  /** The ids of its payloads, in order, and its older-evidence entries. */
  readonly shown: readonly string[]
  readonly older: readonly OlderLine[]
}

const sameIds = (a: readonly string[], b: readonly string[]): boolean => {
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}

/** A payload with what it was made of. */
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

/** An older-evidence entry with what it was made of. */
interface OlderMade {
  readonly line: OlderLine
  readonly wording: Wording
  readonly capture: Capture | undefined
  readonly id: string
  readonly origin: Evidence['origin']
}

/** A hypothesis as it was read: the object, its status and its evidence list with the list's length then (lists only grow). */
interface HypothesisRead {
  readonly h: Hypothesis
  readonly status: Hypothesis['status']
  readonly evidence: readonly string[]
  readonly length: number
}

/**
 * The evidence the hypotheses that are not refuted cite, in hypothesis order and citation order,
 * with the hypotheses citing each (ids the case does not hold included: the selection skips them).
 */
interface Citations {
  readonly read: readonly HypothesisRead[]
  readonly order: readonly string[]
  readonly citedBy: ReadonlyMap<string, readonly string[]>
}

const sameRead = (hypotheses: ReadonlyMap<string, Hypothesis>, read: readonly HypothesisRead[]): boolean => {
  if (hypotheses.size !== read.length) return false
  let k = 0
  for (const h of hypotheses.values()) {
    const r = read[k++]
    if (
      r === undefined ||
      r.h !== h ||
      r.status !== h.status ||
      r.evidence !== h.evidence ||
      r.length !== h.evidence.length
    )
      return false
  }
  return true
}

const citationsOf = (hypotheses: ReadonlyMap<string, Hypothesis>, memo: SelectionMemo | undefined): Citations => {
  const known = memo?.citations
  if (known !== undefined && sameRead(hypotheses, known.read)) return known
  const read: HypothesisRead[] = []
  for (const h of hypotheses.values())
    read.push({ h, status: h.status, evidence: h.evidence, length: h.evidence.length })
  const citedBy = new Map<string, string[]>()
  const order: string[] = []
  for (const { h } of [...read].sort((a, b) => idNumber(a.h.id) - idNumber(b.h.id))) {
    if (h.status === 'refuted') continue
    for (const id of h.evidence) {
      const by = citedBy.get(id)
      if (by === undefined) {
        order.push(id)
        citedBy.set(id, [h.id])
      } else if (!by.includes(h.id)) by.push(h.id)
    }
  }
  const made: Citations = { read, order, citedBy }
  if (memo !== undefined) memo.citations = made
  return made
}

const sameCitations = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean => {
  if (a === undefined || b === undefined) return a === b
  if (a.length !== b.length) return false
  for (let k = 0; k < a.length; k++) if (a[k] !== b[k]) return false
  return true
}

/** The payload of evidence `e` (see selectWorkingSet); `memo`: payloads made before for the same case. */
const payloadOf = (
  s: CaseState,
  e: Evidence,
  c: Capture,
  w: Wording,
  by: readonly string[] | undefined,
  latest: boolean,
  memo: SelectionMemo | undefined
): Payload => {
  // A payload made before from the same fields, citations, capture and wording (never the
  // latest result: its header reads the last result too).
  const known = memo === undefined || latest ? undefined : memo.payloads.get(e)
  if (
    known !== undefined &&
    known.wording === w &&
    known.capture === c &&
    known.digest === e.digest &&
    known.firstSeq === e.first_seq &&
    known.lastResultSeq === e.last_result_seq &&
    known.lastPlan === e.last_plan &&
    known.origin === e.origin &&
    known.payload.id === e.id &&
    sameCitations(known.citedBy, by)
  )
    return known.payload
  const { view, size, request: asked } = describe(c, w)
  const header = `${latest ? 'Latest result ' : ''}${e.id} (${reasons(s, e, by ?? [], latest).join('; ')})`
  const made: Payload = {
    id: e.id,
    header: `${header}:`,
    view,
    summary: `${header}: ${asked} → ${view.summary} [its payload is not shown: the prompt limit; ${size} characters]`,
    cited: by !== undefined,
    latest,
    age: e.last_result_seq ?? e.first_seq
  }
  if (memo !== undefined && !latest)
    memo.payloads.set(e, {
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
  return made
}

/** The older-evidence entry of `e` (once per evidence, capture and wording with a memo). */
const olderOf = (e: Evidence, c: Capture | undefined, w: Wording, memo: SelectionMemo | undefined): OlderLine => {
  const known = memo?.olderLines.get(e)
  if (
    known !== undefined &&
    known.wording === w &&
    known.capture === c &&
    known.id === e.id &&
    known.origin === e.origin
  )
    return known.line
  const line = { id: e.id, text: olderLine(e, c, w) }
  memo?.olderLines.set(e, { line, wording: w, capture: c, id: e.id, origin: e.origin })
  return line
}

/** The older-evidence entries: every piece of evidence not in `shown`, by id number (the order evidence is recorded in). */
const olderEntries = (
  byId: ReadonlyMap<string, Evidence>,
  shown: ReadonlySet<string>,
  captures: ReadonlyMap<string, Capture>,
  w: Wording,
  memo: SelectionMemo | undefined
): OlderLine[] => {
  const rest: Evidence[] = []
  const numbers: number[] = []
  let sorted = true
  for (const e of byId.values()) {
    if (shown.has(e.id)) continue
    const n = idNumber(e.id)
    if (numbers.length > 0 && n < (numbers[numbers.length - 1] ?? 0)) sorted = false
    rest.push(e)
    numbers.push(n)
  }
  // sorted only when it is not already
  if (!sorted) {
    const byNumber = rest.map((e, k) => [numbers[k] ?? 0, e] as const).sort((a, b) => a[0] - b[0])
    for (const [k, [, e]] of byNumber.entries()) rest[k] = e
  }
  const older: OlderLine[] = []
  for (let k = 0; k < rest.length; k++) {
    const e = rest[k] as Evidence
    older.push(olderOf(e, captures.get(e.digest), w, memo))
  }
  return older
}

/**
 * Selects the working set (see the module comment); `memo`: what the working sets of the same
 * case made before, for states that do not change once selected from (verify's snapshots).
 */
export const selectWorkingSet = (
  s: CaseState,
  captures: ReadonlyMap<string, Capture>,
  memo?: SelectionMemo
): WorkingSet => {
  const w = wordingOf(s)
  // evidence by id: the research state keys its evidence by id
  const byId = s.research.evidence
  const { order, citedBy } = citationsOf(s.hypotheses, memo)
  const before = memo?.last
  const recent = before !== undefined && before.evidence === byId ? before.recent : recentResults(byId.values())
  const last = s.lastResult
  const latestId = last?.kind === 'capture' ? last.evidence_id : null
  const payloads: Payload[] = []
  const ids: string[] = []
  for (let j = 0; j < order.length + recent.length; j++) {
    const cited = j < order.length
    const id = (cited ? order[j] : recent[j - order.length]) as string
    if (!cited && citedBy.has(id)) continue
    const e = byId.get(id)
    const c = e === undefined ? undefined : captures.get(e.digest)
    if (e === undefined || c === undefined) continue
    ids.push(id)
    payloads.push(payloadOf(s, e, c, w, cited ? citedBy.get(id) : undefined, id === latestId, memo))
  }
  let older = before?.older ?? []
  if (
    before === undefined ||
    before.evidence !== byId ||
    before.captures !== captures ||
    before.wording !== w ||
    !sameIds(before.shown, ids)
  ) {
    const made = olderEntries(byId, new Set(ids), captures, w, memo)
    // the same array while its entries are the same (the guard sizes it once)
    if (made.length !== older.length || made.some((line, k) => line !== older[k])) older = made
  }
  if (memo !== undefined) memo.last = { evidence: byId, captures, wording: w, recent, shown: ids, older }
  return { payloads, older }
}
