/**
 * What the prompt renderer reads besides the case state: the objects the log references (the
 * latest revision's report, its facts object, every capture the evidence points to), read through
 * their recorded references (digest and size). Decoded from bytes, never trusted by shape.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure } from '../domain/failure.js'
import { FactsDocument } from '../domain/facts.js'
import type { CaseState } from '../domain/case-state.js'
import { Capture } from '../events/capture.js'
import { describeErrors } from '../events/decode.js'
import type { PromptInputs } from '../projections/prompt.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { FailureError } from '../adapters/fs-util.js'

const parse = (bytes: Buffer): unknown => {
  try {
    return JSON.parse(bytes.toString('utf8'))
  } catch {
    return undefined
  }
}

/** Reads the report, the facts and the captures of the case state `s` from the case's objects. */
export const promptInputs = async (handle: CaseHandle, s: CaseState): Promise<PromptInputs> => {
  const read = (ref: { digest: string; size: number }): Promise<Buffer> => handle.store.readObject(handle.ref, ref)
  const report = s.report === null ? '' : (await read(s.report)).toString('utf8')
  let facts: PromptInputs['facts'] = []
  if (s.facts !== null) {
    const doc = FactsDocument.decode(parse(await read(s.facts)))
    if (E.isLeft(doc)) throw new FailureError(failure('OBJECT_CORRUPT', `the facts object ${s.facts.digest} is not a facts document: ${describeErrors(doc.left)}`, { digest: s.facts.digest }))
    facts = doc.right.facts
  }
  const captures = new Map<string, Capture>()
  for (const [digest, ref] of s.research.evidenceRefs) {
    const decoded = Capture.decode(parse(await read(ref)))
    if (E.isRight(decoded)) captures.set(digest, decoded.right)
  }
  return { report, facts, captures }
}
