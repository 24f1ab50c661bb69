/** What a decider returns: the events a command produces in a state, or why it is refused. */
import type * as E from 'fp-ts/lib/Either.js'
import type { EventDraft } from '../events/chain.js'
import type { Failure } from '../failures/failure.js'

export type Decision = E.Either<Failure, EventDraft[]>
