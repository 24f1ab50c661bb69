/**
 * Sealing a CommandSigned event without the generic encoder: a signer-configured writer seals one
 * after every command, and its members are all strings, integers and an array of actors, so its
 * canonical (RFC 8785) line can be spelled out in member order. Every value is checked with the
 * same codecs {@link sealEvent} decodes with; anything the spelled-out form does not cover (a
 * string beyond printable ASCII, an unknown member, a value the codecs refuse) returns undefined
 * and the caller seals it the generic way, which says what is wrong. A test compares both ways.
 */
import { sha256Digest } from './canonical.js'
import type { SealContext, SealedEvent, RecordedEvent } from './chain.js'
import { Actor, Digest, Identifier, PositiveInt, Timestamp } from './codecs.js'
import { CommandSignedEvent } from './command-signature.js'
import { EVENT_FORMAT, type EventEnvelope } from './envelope.js'

/** Printable ASCII: JSON.stringify writes such a string as RFC 8785 does. */
const PRINTABLE = /^[\x20-\x7e]*$/
const MEMBERS = 9
const q = (s: string): string => JSON.stringify(s)
/**
 * A string whose codec (checked first) admits only letters, digits, spaces and `+/=._:-` (keys,
 * fingerprints, signatures, identifiers, digests, timestamps, actors), quoted as JSON.stringify
 * and RFC 8785 quote it, without scanning it again for characters to escape.
 */
const plain = (s: string): string => `"${s}"`

/** The sealed CommandSigned of `data` at `ctx` (version `version`), or undefined to seal it the generic way. */
export const sealCommandSigned = (
  data: unknown,
  actor: string,
  version: number,
  ctx: SealContext
): SealedEvent | undefined => {
  if (!CommandSignedEvent.codec.is(data) || Object.keys(data).length !== MEMBERS) return undefined
  if (!Actor.is(actor) || !PositiveInt.is(version) || !PositiveInt.is(ctx.seq)) return undefined
  if (!Identifier.is(ctx.id) || !Identifier.is(ctx.commandId) || !Timestamp.is(ctx.at) || !Digest.is(ctx.prev))
    return undefined
  const d = data
  // The principal is the one string its codec lets hold quotes, backslashes or more than ASCII.
  if (!PRINTABLE.test(d.principal)) return undefined
  const dataText = `{"actors":[${d.actors.map(plain).join(',')}],"case_id":${plain(d.case_id)},"fingerprint":${plain(d.fingerprint)},"first_seq":${d.first_seq},"key":${plain(d.key)},"last_hash":${plain(d.last_hash)},"last_seq":${d.last_seq},"principal":${q(d.principal)},"signature":${plain(d.signature)}}`
  const head = `{"actor":${plain(actor)},"at":${plain(ctx.at)},"command_id":${plain(ctx.commandId)},"data":${dataText},"format":"${EVENT_FORMAT}",`
  const tail = `"id":${plain(ctx.id)},"prev":${plain(ctx.prev)},"seq":${ctx.seq},"type":"CommandSigned","version":${version}}`
  const hash = sha256Digest(head + tail)
  const event = {
    seq: ctx.seq,
    id: ctx.id,
    type: 'CommandSigned',
    version,
    at: ctx.at,
    actor,
    command_id: ctx.commandId,
    data: d,
    prev: ctx.prev,
    hash
  } as RecordedEvent
  const envelope: EventEnvelope = { format: EVENT_FORMAT, ...event }
  return { envelope, event, line: `${head}"hash":${plain(hash)},${tail}` }
}
