import type { ObjectRefLite } from '../../domain/case-state.js'
import type { CaseDeclaration } from '../../events/envelope.js'
import type { AnyProjection } from '../../projections/projection.js'
import { coded } from '../../failures/error.js'
import type { Env } from '../env.js'
import { locate } from './directory-store.js'
import type { CaseHandle } from './open.js'
import type { ReplayResult } from './replay.js'
import type { CaseAt } from './store.js'
import type { VerifyOptions, VerifyReport } from './verify.js'

/** Opens a case wherever it is (chain and rules checked, state folded). */
export const openCaseAt = (at: CaseAt): Promise<CaseHandle> =>
  coded('open case', () => {
    const { store, ref } = locate(at)
    return store.open(ref)
  })

/** Verifies a case wherever it is; problems of the case are findings. */
export const verifyAt = (at: CaseAt, options: VerifyOptions = {}): Promise<VerifyReport> =>
  coded('verify', () => {
    const { store, ref } = locate(at)
    return store.verify(ref, options)
  })

/** Replays a case wherever it is. */
export const replayAt = (at: CaseAt, projections: readonly AnyProjection[]): Promise<ReplayResult> =>
  coded('replay', () => {
    const { store, ref } = locate(at)
    return store.replay(ref, projections)
  })

/** Reads an object of a case, checked against its reference. */
export const readObjectAt = (at: CaseAt, object: ObjectRefLite): Promise<Buffer> =>
  coded('read object', () => {
    const { store, ref } = locate(at)
    return store.readObject(ref, object)
  })

/** Creates an empty case: a directory (which must not exist or be empty), or a case id in a store. */
export const createCaseAt = (
  at: CaseAt,
  options: { readonly caseId?: string; readonly title?: string; readonly env?: Env } = {}
): Promise<CaseDeclaration> =>
  coded('create case', () => {
    const { store, ref } = locate(at)
    return store.create(ref, store.kind === 'directory' ? options : { ...options, caseId: options.caseId ?? ref })
  })
