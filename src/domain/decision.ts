/** What a decider returns: the events a command produces in a state, or why it is refused. */
import * as E from 'fp-ts/lib/Either.js'
import type { EventDraft } from '../events/chain.js'
import { failure, type Failure } from '../failures/failure.js'

/** @category Deciders */
export type Decision = E.Either<Failure, EventDraft[]>

/** Another writer moved the case on since the caller looked: retryable, never a rule violation. */
export const moved = (message: string): Decision =>
  E.left(
    failure('GENERATION_CONFLICT', `${message}: another writer advanced the case meanwhile; re-read it and retry`, {
      moved: true
    })
  )
