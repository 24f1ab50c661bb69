/**
 * A signed command (family RULE_COMMAND, rule `command.signature`): CommandSigned is the last event
 * of a command that has others, and names exactly what it follows (the case, the command's
 * sequence range, the hash of its last event, its actors). Whether the signature holds, and whose
 * key it is, is verify's question (src/adapters/case-store/signatures.ts): it needs the key, not
 * the state.
 */
import { actorsOf } from '../../events/command-signature.js'
import type { EventOf, RuleContext } from './context.js'

const placementProblem = (c: RuleContext<EventOf<'CommandSigned'>>): string | null => {
  const d = c.e.data
  const first = c.cmd.events[0]
  if (first === undefined) return 'is the first event of its command (it signs the events before it)'
  if (c.cmd.signed === true) return 'follows another CommandSigned in its command'
  if (c.s.caseId !== null && d.case_id !== c.s.caseId) return `names case ${d.case_id}, not ${c.s.caseId}`
  if (d.first_seq !== first.seq || d.last_seq !== c.e.seq - 1)
    return `names events ${d.first_seq}..${d.last_seq}, but its command holds ${first.seq}..${c.e.seq - 1}`
  if (d.last_hash !== c.e.prev) return `names last hash ${d.last_hash}, not the hash of event ${c.e.seq - 1}`
  const actors = actorsOf(c.cmd.events)
  if (d.actors.join(',') !== actors.join(',')) return `names actors ${d.actors.join(',')}, not ${actors.join(',')}`
  return null
}

/** command.signature */
export const checkSigned = (c: RuleContext<EventOf<'CommandSigned'>>): void => {
  const problem = placementProblem(c)
  if (problem !== null) c.bad('command.signature', `CommandSigned ${problem}`)
}

/** Why an event may not stand where it does after its command's signature (command.members), or null. */
export const afterSignature = (c: RuleContext): string | null =>
  c.e.type !== 'CommandSigned' && c.cmd.signed === true
    ? `${c.e.type} follows the command's CommandSigned (a signature ends its command)`
    : null
