/**
 * The check of one event: its actor, its version (versions.ts), its belonging to its command, and
 * the rules of its type (its `check` in `EVENT_HANDLING`, src/domain/event-handling.ts: one entry
 * per type of the catalog, so a type without one does not compile).
 */
import type { RecordedEvent } from '../../events/chain.js'
import { checkActor } from './actor.js'
import { checkVersion } from './versions.js'
import { memberProblem } from './members.js'
import type { RuleContext } from './context.js'
import { afterSignature } from './signature.js'
import { EVENT_HANDLING } from '../event-handling.js'

/** Checks one event in its context: its actor, its command membership, and the rules of its type. */
export const checkEvent = (c: RuleContext): void => {
  checkActor(c)
  checkVersion(c)
  const leader = c.cmd.events[0]
  const foreign = leader === undefined ? null : (memberProblem(leader.type, c.e.type) ?? afterSignature(c))
  if (foreign !== null) c.bad('command.members', foreign)
  const check = EVENT_HANDLING[c.e.type].check as (c: RuleContext<RecordedEvent>) => void
  check(c)
}
