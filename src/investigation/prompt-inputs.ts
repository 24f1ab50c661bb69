/**
 * What the prompt renderer reads besides the case state: the objects the log references (the
 * latest revision's report, its facts object, every capture the evidence points to), read through
 * their recorded references (digest and size) and decoded by the same code verify renders them
 * again with (src/projections/prompt-derivation.ts).
 */
import { failure } from '../failures/failure.js'
import type { CaseState } from '../domain/case-state.js'
import type { PromptInputs } from '../projections/prompt.js'
import { promptInputsFrom, promptObjectRefs } from '../projections/prompt-derivation.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { FailureError } from '../failures/error.js'

/** Reads the report, the facts and the captures of the case state `s` from the case's objects. */
export const promptInputs = async (handle: CaseHandle, s: CaseState): Promise<PromptInputs> => {
  const objects = new Map<string, Buffer>()
  for (const ref of promptObjectRefs(s)) objects.set(ref.digest, await handle.store.readObject(handle.ref, ref))
  const inputs = promptInputsFrom(s, (ref) => objects.get(ref.digest))
  if (inputs === null) throw new FailureError(failure('OBJECT_MISSING', 'an object the prompt renders is missing'))
  return inputs
}
