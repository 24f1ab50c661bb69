/**
 * The prompt view, version investigation_project_v2: the next model prompt, rendered from the
 * folded case state and the objects the log references, and nothing else.
 *
 * Order: the stable part (contract.ts), then the case: phase and turn, the report, the facts
 * index, the interpretation, hypotheses and lab tests (notices.ts), the working set and the older
 * evidence (working-set.ts), the notices about the last step, what the guard left out, and the
 * closing instruction with the budget.
 *
 * Fixed parts (the contract, the report, the facts index, the state, the notices, the closing)
 * are never cut by the guard: they have their own documented bounds. The guard fits the working
 * set into the room they leave (guard.ts). Only when a limit is too small for the fixed parts
 * themselves does a last resort shorten them, by whole entries and each with a marker: the facts
 * index, then the report, then the state's texts; the contract, the phase line, the notices and
 * the closing are always whole.
 */
import type { CaseState } from '../../domain/case-state.js'
import { queryCost, remainingBudget } from '../../domain/budget.js'
import type { Fact } from '../../domain/facts-document.js'
import type { Capture } from '../../events/capture.js'
import { PROMPT_VERSION_V2, stablePartV2 } from './contract.js'
import { factsIndexRun, FACTS_MAX_CHARS, type LinesRun } from './facts-index.js'
import { sizingMemo, workingSetFitter, type Fitted, type SizingMemo } from './guard.js'
import { clip, noticeLines, stateLines, TEXT_BOUNDS, type TextBounds } from './notices.js'
import { wordingOf } from './evidence-text.js'
import { selectionMemo, selectWorkingSet, type SelectionMemo } from './working-set.js'

/** Characters of the report shown whole; a longer one ends in a marker with its length. */
export const REPORT_MAX_CHARS = 3000

export interface PromptInputsV2 {
  readonly report: string
  readonly facts: readonly Fact[]
  readonly captures: ReadonlyMap<string, Capture>
}

export interface RenderedPromptV2 {
  readonly text: string
  /** The text in runs: joined with LF they are `text` (joined when `text` is first read). */
  readonly pieces: readonly string[]
  readonly stable: string
  readonly version: typeof PROMPT_VERSION_V2
  readonly cut: readonly string[]
}

/**
 * What the prompts of one case share, for a caller that renders many of them from snapshots of
 * its state (verify): the working sets' payloads and older lines (working-set.ts), their sizings
 * (payload-fit.ts) and the report at each bound.
 */
export interface RenderMemoV2 {
  readonly selection: SelectionMemo
  readonly sizings: SizingMemo
  readonly reports: Map<string, Map<number, LinesRun>>
}

export const renderMemoV2 = (): RenderMemoV2 => ({
  selection: selectionMemo(),
  sizings: sizingMemo(),
  reports: new Map()
})

interface FixedBounds {
  readonly report: number
  readonly facts: number
  readonly texts: TextBounds
}

/** The last resort's steps, each smaller than the one before (see the module comment). */
const LAST_RESORT: readonly FixedBounds[] = [
  { report: REPORT_MAX_CHARS, facts: FACTS_MAX_CHARS, texts: TEXT_BOUNDS },
  { report: REPORT_MAX_CHARS, facts: 1500, texts: TEXT_BOUNDS },
  { report: REPORT_MAX_CHARS, facts: 0, texts: TEXT_BOUNDS },
  { report: 1000, facts: 0, texts: TEXT_BOUNDS },
  { report: 1000, facts: 0, texts: { interpretation: 400, statement: 120, description: 120, feedback: 300 } },
  { report: 300, facts: 0, texts: { interpretation: 160, statement: 60, description: 60, feedback: 120 } }
]

const RESORT_NOTE =
  'the limit is too small for the fixed parts: the facts, the report and the state texts were shortened (markers show where)'

const size = (parts: ReadonlyArray<readonly string[]>): number =>
  parts.reduce((n, p) => n + p.reduce((m, l) => m + l.length + 1, 0), 0)

/** Lines as one run (see LinesRun). */
const linesRun = (lines: readonly string[]): LinesRun => ({
  text: lines.length === 0 ? null : lines.join('\n'),
  size: size([lines])
})

/** The size of the guard line (with its LF) of `count` notes of `chars` characters in all; `frame`: its length without notes. */
const guardLineSize = (frame: number, count: number, chars: number): number =>
  count === 0 ? 0 : frame + chars + 2 * (count - 1) + 1

/** Renders the prompt of state `s`; `memo`: what the prompts of the same case made before (see RenderMemoV2). */
export const renderPromptV2 = (s: CaseState, inputs: PromptInputsV2, memo?: RenderMemoV2): RenderedPromptV2 => {
  const max = s.settings?.prompt_max_chars ?? 20_000
  const stable = stablePartV2(s)
  const phase = s.state === 'INTERPRETING' ? 'interpretation' : 'investigation'
  const head = ['=== case ===', `Phase: ${phase}. Turn ${s.turn + 1}.`]
  const notices = noticeLines(s)
  const closing = [
    `Budget remaining: ${remainingBudget(s)} (a query costs ${queryCost(s)}${s.settings?.answer_repeats_from_case === true ? '; an identical query again costs nothing' : ''}).`,
    phase === 'interpretation' ? 'Answer with the interpretation.' : 'Answer with the next action.'
  ]
  const set = selectWorkingSet(s, inputs.captures, memo?.selection)
  // The fixed parts at a step's bounds as runs of lines with their sizes, each made once per
  // prompt (the steps share most of their bounds; the facts index is made once per case).
  const made = new Map<unknown, LinesRun>()
  const runOf = (key: unknown, make: () => string[] | LinesRun): LinesRun => {
    let run = made.get(key)
    if (run === undefined) {
      const got = make()
      run = Array.isArray(got) ? linesRun(got) : got
      made.set(key, run)
    }
    return run
  }
  const fixedOf = (b: FixedBounds): LinesRun[] => [
    runOf(`report ${b.report}`, () => reportRun(inputs.report, b.report, memo)),
    runOf(`facts ${b.facts}`, () =>
      b.facts === 0 && inputs.facts.length > 0
        ? [
            `[facts F1–F${inputs.facts.length} are not listed: the prompt limit of ${max} characters is too small for them; the case holds them]`
          ]
        : factsIndexRun(inputs.facts, b.facts, wordingOf(s))
    ),
    runOf(b.texts, () => stateLines(s, b.texts))
  ]
  const guardLine = (notes: readonly string[]): string[] =>
    notes.length === 0 ? [] : [`[prompt guard (limit ${max} characters): ${notes.join('; ')}]`]
  const frame = `[prompt guard (limit ${max} characters): ]`.length
  const fitter = workingSetFitter(
    set.payloads,
    set.older,
    { newestWhole: s.settings?.newest_result_whole === true },
    memo?.sizings
  )
  const around = size([[stable], head, notices, closing])
  let result: { fixed: LinesRun[]; fitted: Fitted; resort: boolean } | null = null
  for (let step = 0; step < LAST_RESORT.length; step++) {
    const fixed = fixedOf(LAST_RESORT[step] as FixedBounds)
    // past the first step, the guard line also says that the fixed parts were shortened
    const resort = step === 0 ? 0 : 1
    const resortChars = resort * RESORT_NOTE.length
    let base = around
    for (const r of fixed) base += r.size
    // Without a guard line when nothing needs to be left out; else with room for the longest one.
    const room = max - base - guardLineSize(frame, resort, resortChars)
    // With room for the longest guard line the fit can need (every payload and the older evidence
    // named): a prompt fitted so stays within the limit whatever the guard ends up saying.
    const { longestNotes } = fitter
    const fitted = fitter.fit(
      fitter.fitsWhole(room)
        ? room
        : max - base - guardLineSize(frame, longestNotes.count + resort, longestNotes.chars + resortChars)
    )
    result = { fixed, fitted, resort: resort === 1 }
    const count = fitted.notes.length + resort
    if (base + fitted.size + guardLineSize(frame, count, fitted.noteChars + resortChars) - 1 <= max) break
  }
  const fixed = result?.fixed ?? []
  const fitted = result?.fitted ?? { pieces: [], notes: [], noteChars: 0, size: 0 }
  const notes = result?.resort === true ? [...fitted.notes, RESORT_NOTE] : fitted.notes
  const pieces = [stable, ...head]
  for (const r of fixed) if (r.text !== null) pieces.push(r.text)
  pieces.push(...fitted.pieces, ...notices, ...guardLine(notes), ...closing)
  const cut =
    inputs.report.length > REPORT_MAX_CHARS
      ? [`report shown to ${REPORT_MAX_CHARS} of ${inputs.report.length} characters`, ...notes]
      : notes
  return new PromptOf(pieces, stable, cut)
}

/** A rendered prompt whose text is joined when first read (verify hashes its pieces; a class: no getter defined per prompt). */
class PromptOf implements RenderedPromptV2 {
  #text: string | undefined = undefined
  readonly version = PROMPT_VERSION_V2

  constructor(
    readonly pieces: readonly string[],
    readonly stable: string,
    readonly cut: readonly string[]
  ) {}

  get text(): string {
    this.#text ??= this.pieces.join('\n')
    return this.#text
  }
}

/** The report's lines at `bound` as a run (once per report and bound with a memo). */
const reportRun = (report: string, bound: number, memo: RenderMemoV2 | undefined): LinesRun => {
  const byBound = memo?.reports.get(report)
  let run = byBound?.get(bound)
  if (run === undefined) {
    run = linesRun(['Report:', ...clip(report, bound).split('\n')])
    if (memo !== undefined) {
      if (byBound === undefined) memo.reports.set(report, new Map([[bound, run]]))
      else byBound.set(bound, run)
    }
  }
  return run
}
