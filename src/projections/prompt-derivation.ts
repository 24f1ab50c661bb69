/**
 * Prompts derive from the log (rule `turn.prompt`): the prompt object a ModelRequested records
 * must be byte for byte what the renderer of its `prompt_version` makes of the case state before
 * it and the objects that state references (the report, the facts, the captures of the evidence).
 * A prompt telling the model what to conclude, or one of a version this library does not know, is
 * a finding, never accepted. Pure: objects come through `read`.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { CaseState, ObjectRefLite } from '../domain/case-state.js'
import { FactsDocument } from '../domain/facts-document.js'
import { decodeCaptureOnce, type CaptureDecodes, type Obligation, type RuleViolation } from '../domain/rules.js'
import type { Capture } from '../events/capture.js'
import { utf8OfLines } from '../events/canonical.js'
import { renderPrompt, type PromptInputs } from './prompt.js'
import { renderMemoV2, type RenderMemoV2 } from './prompt-v2/render.js'
import { parseBoundedBytes } from '../events/bounds.js'

/** The prompt versions this library renders. */
export const KNOWN_PROMPT_VERSIONS: readonly string[] = ['investigation_project_v1', 'investigation_project_v2']

const parse = parseBoundedBytes

/** The objects the renderer reads for state `s`: its report, its facts, every capture of its evidence. */
export const promptObjectRefs = (s: CaseState): ObjectRefLite[] => [
  ...(s.report === null ? [] : [s.report]),
  ...(s.facts === null ? [] : [s.facts]),
  ...s.research.evidenceRefs.values()
]

/**
 * What the prompts of one case read once: each object decoded once by digest (a capture stays in
 * every later prompt's state), and the captures of each set of evidence references (a snapshot of
 * the state shares that set with the states after it until new evidence is recorded).
 */
export interface PromptMemo {
  readonly reports: Map<string, string>
  readonly facts: Map<string, E.Either<unknown, FactsDocument>>
  readonly captures: WeakMap<ReadonlyMap<string, ObjectRefLite>, ReadonlyMap<string, Capture> | null>
  /** What the renderer made for the prompts before (payloads, the report's runs). */
  readonly render: RenderMemoV2
  /** Capture objects parsed and decoded, shared with the object checks of the same verification. */
  readonly captureDecodes: CaptureDecodes
}

export const promptMemo = (captureDecodes: CaptureDecodes = new Map()): PromptMemo => ({
  reports: new Map(),
  facts: new Map(),
  captures: new WeakMap(),
  render: renderMemoV2(),
  captureDecodes
})

/**
 * The renderer's inputs for state `s`, from objects read by reference (null when one is missing:
 * reported elsewhere as a missing object).
 */
export const promptInputsFrom = (
  s: CaseState,
  read: (ref: ObjectRefLite) => Uint8Array | undefined,
  memo: PromptMemo = promptMemo()
): PromptInputs | null => {
  // The report and the facts decoded once for all the prompts of a case, by digest.
  let report = ''
  if (s.report !== null) {
    let text = memo.reports.get(s.report.digest)
    if (text === undefined) {
      const b = read(s.report)
      if (b === undefined) return null
      text = Buffer.from(b).toString('utf8')
      memo.reports.set(s.report.digest, text)
    }
    report = text
  }
  let facts: PromptInputs['facts'] = []
  if (s.facts !== null) {
    let doc = memo.facts.get(s.facts.digest)
    if (doc === undefined) {
      const b = read(s.facts)
      if (b === undefined) return null
      doc = FactsDocument.decode(parse(b))
      memo.facts.set(s.facts.digest, doc)
    }
    facts = E.isRight(doc) ? doc.right.facts : []
  }
  const refs = s.research.evidenceRefs
  let captures = memo.captures.get(refs)
  if (captures === undefined) {
    const found = new Map<string, Capture>()
    captures = found
    for (const [digest, ref] of refs) {
      const once = decodeCaptureOnce(read, memo.captureDecodes, ref)
      if (once === undefined) {
        captures = null
        break
      }
      if (E.isRight(once.decoded)) found.set(digest, once.decoded.right)
    }
    memo.captures.set(refs, captures)
  }
  return captures === null ? null : { report, facts, captures }
}

/** The violations of the prompt obligations: prompts that are not what the renderer makes of their state; `captureDecodes`: captures decoded by the object checks. */
export const checkPrompts = (
  obligations: readonly Obligation[],
  read: (ref: ObjectRefLite) => Uint8Array | undefined,
  captureDecodes?: CaptureDecodes
): RuleViolation[] => {
  const out: RuleViolation[] = []
  const memo = promptMemo(captureDecodes)
  for (const ob of obligations) {
    if (ob.kind !== 'prompt') continue
    const bad = (message: string): void => {
      out.push({ code: 'RULE_TURN', rule: 'turn.prompt', message, seq: ob.seq })
    }
    if (!KNOWN_PROMPT_VERSIONS.includes(ob.version)) {
      bad(
        `prompt version ${ob.version} is not one this library renders (${KNOWN_PROMPT_VERSIONS.join(', ')}): the prompt cannot be derived, so it is not accepted`
      )
      continue
    }
    // The recorded prompt, whose bytes the object walk checked against their digest (a missing
    // or damaged object is reported as such, and there is nothing to compare with).
    const recorded = read(ob.ref)
    if (recorded === undefined) continue
    const inputs = promptInputsFrom(ob.state, read, memo)
    if (inputs === null) continue
    const rendered = renderPrompt(ob.state, inputs, memo.render)
    if (rendered.version !== ob.version) {
      bad(`the prompt says version ${ob.version}, but the investigation renders ${rendered.version}`)
      continue
    }
    // The rendered prompt's bytes against the recorded ones, without joining its runs: a compare
    // of ~20 KB where hashing them was most of the cost of a prompt's check after rendering.
    if (Buffer.compare(utf8OfLines(rendered.pieces ?? [rendered.text]), recorded) !== 0) {
      const text = Buffer.from(recorded).toString('utf8')
      let at = 0
      while (at < text.length && at < rendered.text.length && text[at] === rendered.text[at]) at++
      const line = rendered.text.slice(0, at).split('\n').length
      bad(
        `the prompt of turn ${ob.turn} is not what the renderer makes of the case before it: they differ from line ${line} (${JSON.stringify(text.slice(at, at + 60))} recorded, ${JSON.stringify(rendered.text.slice(at, at + 60))} rendered)`
      )
    }
  }
  return out
}
