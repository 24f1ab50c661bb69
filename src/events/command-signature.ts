/**
 * CommandSigned: the last event of a command a signer-configured process appended. It names the
 * signer (principal, key, `SHA256:` fingerprint) and carries an SSHSIG signature (namespace
 * `vba-case`) over what the command is: the case id, its sequence range, the hash of its last
 * event before this one and its actors. The event is chain-covered like every other; the
 * signature is what ties the command to a key, checkable with `ssh-keygen -Y verify` and the same
 * allowed_signers line (the message is {@link signedMessage}, the signature {@link armor}ed).
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { Actor, Digest, Identifier, PositiveInt, patternString } from './codecs.js'
import { canonicalJson } from './canonical.js'
import { defineEventType } from './registry.js'

/** A principal of an allowed_signers file: no spaces, commas or quotes. */
export const Principal = patternString('Principal', /^[^\s,"]{1,128}$/)
/** An Ed25519 public key line, `ssh-ed25519 BASE64` (no comment). */
export const SshPublicKeyLine = patternString(
  'SshPublicKeyLine',
  /^ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI[A-Za-z0-9+/]{43}=?$/
)
/** A key's fingerprint as `ssh-keygen -l` prints it. */
export const SshFingerprint = patternString('SshFingerprint', /^SHA256:[A-Za-z0-9+/]{43}$/)
/** An SSHSIG blob in base64 (one line; `armor` gives ssh-keygen's form). */
export const SshSignature = patternString('SshSignature', /^[A-Za-z0-9+/]{16,1024}={0,2}$/)

// Written as the actor of the command's last event it signs (command.signature holds it to the command);
// it ends whatever command it signs, never first.
export const CommandSignedEvent = defineEventType(
  'CommandSigned',
  {
    principal: Principal,
    key: SshPublicKeyLine,
    fingerprint: SshFingerprint,
    case_id: Identifier,
    first_seq: PositiveInt,
    last_seq: PositiveInt,
    last_hash: Digest,
    actors: t.array(Actor),
    signature: SshSignature
  },
  { actors: ['operator', 'controller', 'model', 'system'], members: [], intent: null }
)
export type CommandSigned = t.TypeOf<typeof CommandSignedEvent.codec>

/** What a signature covers, as named in the event. */
export type SignedCommand = Pick<
  CommandSigned,
  'principal' | 'case_id' | 'first_seq' | 'last_seq' | 'last_hash' | 'actors'
>

/** The format tag of the signed message. */
export const SIGNED_COMMAND_FORMAT = 'vba-signed-command/1'

/** Printable ASCII: JSON.stringify writes such a string as RFC 8785 does. */
const PRINTABLE = /^[\x20-\x7e]*$/

/**
 * The bytes SSHSIG signs for a command: the canonical JSON of its case id, sequence range, last
 * hash, actors and principal, tagged with {@link SIGNED_COMMAND_FORMAT} (no trailing newline).
 * Spelled out in canonical member order when every string is printable ASCII (what a signer
 * signs every command), else through the RFC 8785 encoder; a test compares the two.
 */
export const signedMessage = (c: SignedCommand): Buffer => {
  const strings = [c.case_id, c.last_hash, c.principal, ...c.actors]
  if (Number.isSafeInteger(c.first_seq) && Number.isSafeInteger(c.last_seq) && strings.every((x) => PRINTABLE.test(x)))
    return Buffer.from(
      `{"actors":[${c.actors.map((a) => JSON.stringify(a)).join(',')}],"case_id":${JSON.stringify(c.case_id)},"first_seq":${c.first_seq},"format":"${SIGNED_COMMAND_FORMAT}","last_hash":${JSON.stringify(c.last_hash)},"last_seq":${c.last_seq},"principal":${JSON.stringify(c.principal)}}`,
      'utf8'
    )
  return canonicalMessage(c)
}

/** {@link signedMessage} through the RFC 8785 encoder. */
export const canonicalMessage = (c: SignedCommand): Buffer => {
  const text = canonicalJson({
    format: SIGNED_COMMAND_FORMAT,
    case_id: c.case_id,
    first_seq: c.first_seq,
    last_seq: c.last_seq,
    last_hash: c.last_hash,
    actors: c.actors,
    principal: c.principal
  })
  return Buffer.from(E.isRight(text) ? text.right : '', 'utf8')
}

/** The distinct actors of a command's events, sorted. */
export const actorsOf = (events: ReadonlyArray<{ readonly actor: Actor }>): Actor[] =>
  [...new Set(events.map((e) => e.actor))].sort()
