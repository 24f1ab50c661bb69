/** Actors (family RULE_ACTOR): every event type is written by the actors its definition names. */
import { EVENT_TYPES } from '../../events/catalog.js'
import type { RuleContext } from './context.js'

/** actor.allowed */
export const checkActor = (c: RuleContext): void => {
  const allowed: readonly string[] = EVENT_TYPES[c.e.type].actors
  if (!allowed.includes(c.e.actor))
    c.bad('actor.allowed', `${c.e.type} is written by ${allowed.join(' or ')}, not by ${c.e.actor}`)
}
