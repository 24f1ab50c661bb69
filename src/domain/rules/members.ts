/**
 * What a command may hold (rule `command.members`): the events its decider writes after its
 * first one (the `members` of the first event's definition, src/events/catalog.ts), and nothing
 * else, so no foreign event (an operator's note, a budget top-up) rides inside the command that
 * records a model's answer or a capture. Pure.
 */
import { membersOf, type EventType } from '../../events/catalog.js'

/** Why `type` may not follow `first` in one command, or null. */
export const memberProblem = (first: EventType, type: EventType): string | null => {
  const members = membersOf(first)
  return type === 'CommandSigned' || members.includes(type)
    ? null
    : `${type} is not part of a command that begins with ${first}${members.length === 0 ? ' (which stands alone)' : ` (it holds ${members.join(', ')})`}`
}
