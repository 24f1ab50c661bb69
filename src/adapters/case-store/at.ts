/**
 * The case operations over a case address ({@link CaseAt}: a directory, or a case id in a store),
 * as TaskEither values: what the CLI and the clients call, whichever store holds the case.
 */
import * as TE from 'fp-ts/lib/TaskEither.js'
import type { Failure } from '../../failures/failure.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import type { CaseDeclaration } from '../../events/envelope.js'
import type { AnyProjection } from '../../projections/projection.js'
import { toFailure } from '../../failures/error.js'
import type { Env } from '../env.js'
import { locate } from './directory-store.js'
import type { CaseHandle } from './open.js'
import type { ReplayResult } from './replay.js'
import type { CaseAt } from './store.js'
import type { VerifyOptions, VerifyReport } from './verify.js'

/** Opens a case wherever it is (chain and rules checked, state folded). */
export const openCaseAt = (at: CaseAt): TE.TaskEither<Failure, CaseHandle> =>
  TE.tryCatch(
    () => {
      const { store, ref } = locate(at)
      return store.open(ref)
    },
    (e) => toFailure(e, 'open case')
  )

/** Verifies a case wherever it is; problems of the case are findings. */
export const verifyAt = (at: CaseAt, options: VerifyOptions = {}): TE.TaskEither<Failure, VerifyReport> =>
  TE.tryCatch(
    () => {
      const { store, ref } = locate(at)
      return store.verify(ref, options)
    },
    (e) => toFailure(e, 'verify')
  )

/** Replays a case wherever it is. */
export const replayAt = (at: CaseAt, projections: readonly AnyProjection[]): TE.TaskEither<Failure, ReplayResult> =>
  TE.tryCatch(
    () => {
      const { store, ref } = locate(at)
      return store.replay(ref, projections)
    },
    (e) => toFailure(e, 'replay')
  )

/** Reads an object of a case, checked against its reference. */
export const readObjectAt = (at: CaseAt, object: ObjectRefLite): TE.TaskEither<Failure, Buffer> =>
  TE.tryCatch(
    () => {
      const { store, ref } = locate(at)
      return store.readObject(ref, object)
    },
    (e) => toFailure(e, 'read object')
  )

/** Creates an empty case: a directory (which must not exist or be empty), or a case id in a store. */
export const createCaseAt = (
  at: CaseAt,
  options: { readonly caseId?: string; readonly title?: string; readonly env?: Env } = {}
): TE.TaskEither<Failure, CaseDeclaration> =>
  TE.tryCatch(
    () => {
      const { store, ref } = locate(at)
      return store.create(ref, store.kind === 'directory' ? options : { ...options, caseId: options.caseId ?? ref })
    },
    (e) => toFailure(e, 'create case')
  )
