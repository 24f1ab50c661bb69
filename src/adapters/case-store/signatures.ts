/**
 * Who signed each command, checked by verify in both stores: every CommandSigned's SSHSIG against
 * the key it names and the place it stands (SIGNATURE_INVALID), with a trust file against git's
 * allowed_signers lines and the principals' actors (SIGNER_UNTRUSTED), and, when every command
 * must be signed, the commands without one (UNSIGNED_COMMAND).
 */
import * as E from 'fp-ts/lib/Either.js'
import { parseAllowedSigners, signerRefusal, type AllowedSigner } from '../../events/allowed-signers.js'
import type { RecordedEvent } from '../../events/chain.js'
import { Actor } from '../../events/codecs.js'
import { fail } from '../../failures/error.js'
import { actorsOf, signedMessage, type CommandSigned } from '../../events/command-signature.js'
import { finding, type Finding } from '../../events/findings.js'
import { CASE_NAMESPACE, fingerprintOf, publicKeyLine, verifySshsig } from '../../events/ssh-sig.js'

/** Whom a verifier trusts: allowed_signers lines, and optionally the actors each principal may sign for. @category Signing */
export interface TrustPolicy {
  readonly signers: readonly AllowedSigner[]
  /** A principal listed here may sign only commands of these actors (an operator key, operator commands). */
  readonly actors?: Readonly<Record<string, readonly Actor[]>>
}

/** One signer of a verified case, and what it signed. @category cases */
export interface SignerSummary {
  readonly principal: string
  readonly fingerprint: string
  /** Commands it signed whose signature holds. */
  readonly commands: number
  /** Whether the trust file allows every one of them; null when verified without one. */
  readonly trusted: boolean | null
}

/** A command's signature as its check reads it (not the event: a checked line's event holds its piece). */
type SignatureSeen = Pick<RecordedEvent, 'seq' | 'at'> & { readonly data: CommandSigned }

interface CommandSeen {
  commandId: string
  firstSeq: number
  lastSeq: number
  lastHash: string
  /** Each actor of the command's events once. */
  readonly actors: Array<{ readonly actor: Actor }>
  signature: SignatureSeen | null
}

const ACTOR_ENTRIES = new Map(
  (Object.keys(Actor.keys) as Actor[]).map((actor): [Actor, { readonly actor: Actor }] => [actor, { actor }])
)

/** An actor as a command's list holds it (one shared record per actor). */
const actorEntry = (actor: Actor): { readonly actor: Actor } => ACTOR_ENTRIES.get(actor) ?? { actor }

/** The record of the command `e` begins: `done`'s when that command was unsigned (only counted, not kept). */
const commandSeen = (done: CommandSeen | undefined, e: RecordedEvent): CommandSeen => {
  if (done === undefined || done.signature !== null)
    return { commandId: e.command_id, firstSeq: e.seq, lastSeq: e.seq, lastHash: e.hash, actors: [], signature: null }
  done.commandId = e.command_id
  done.firstSeq = e.seq
  done.lastSeq = e.seq
  done.lastHash = e.hash
  done.actors.length = 0
  return done
}

/**
 * Collects the commands of a log as the scan feeds it, then judges their signatures. Only signed
 * commands are kept until the judgement (and, when every command must be signed, the findings of
 * the others): an unsigned command is counted when the next one begins, so memory follows the
 * signatures, not the commands.
 */
export const signatureCheck = (
  o: { readonly requireSigned?: boolean } = {}
): {
  readonly feed: (e: RecordedEvent) => void
  readonly judge: (
    caseId: string | null,
    options: { readonly trust?: TrustPolicy }
  ) => { findings: Finding[]; signers: SignerSummary[]; unsigned: number }
} => {
  /** In log order: the signed commands, and the UNSIGNED_COMMAND findings. */
  const seen: Array<CommandSeen | Finding> = []
  let unsigned = 0
  let cur: CommandSeen | undefined
  const close = (c: CommandSeen): void => {
    if (c.signature !== null) {
      seen.push(c)
      return
    }
    unsigned++
    if (o.requireSigned === true)
      seen.push(
        finding('UNSIGNED_COMMAND', `command ${c.commandId} (events ${c.firstSeq}–${c.lastSeq}) is not signed`, {
          seq: c.firstSeq,
          data: { command_id: c.commandId }
        })
      )
  }
  const feed = (e: RecordedEvent): void => {
    if (cur === undefined || cur.commandId !== e.command_id) {
      if (cur !== undefined) close(cur)
      cur = commandSeen(cur, e)
    }
    if (e.type === 'CommandSigned') {
      cur.signature ??= { seq: e.seq, at: e.at, data: e.data as CommandSigned }
      return
    }
    if (cur.signature !== null) return
    cur.lastSeq = e.seq
    cur.lastHash = e.hash
    if (!cur.actors.some((a) => a.actor === e.actor)) cur.actors.push(actorEntry(e.actor))
  }
  const judge = (
    caseId: string | null,
    options: { readonly trust?: TrustPolicy }
  ): { findings: Finding[]; signers: SignerSummary[]; unsigned: number } => {
    if (cur !== undefined) close(cur)
    cur = undefined
    const findings: Finding[] = []
    const signers = new Map<string, { principal: string; fingerprint: string; commands: number; trusted: boolean }>()
    for (const c of seen) {
      if (!('commandId' in c)) {
        findings.push(c)
        continue
      }
      const s = c.signature as SignatureSeen
      const invalid = signatureProblem(s, c, caseId)
      if (invalid !== null) {
        findings.push(
          finding('SIGNATURE_INVALID', `the signature of command ${c.commandId} ${invalid}`, {
            seq: s.seq,
            data: { command_id: c.commandId, principal: s.data.principal, fingerprint: s.data.fingerprint }
          })
        )
        continue
      }
      const refusal = options.trust === undefined ? null : trustProblem(options.trust, s, c)
      if (refusal !== null)
        findings.push(
          finding('SIGNER_UNTRUSTED', `command ${c.commandId} is signed by ${s.data.principal}: ${refusal}`, {
            seq: s.seq,
            data: { command_id: c.commandId, principal: s.data.principal, fingerprint: s.data.fingerprint }
          })
        )
      const key = `${s.data.principal}\u0000${s.data.fingerprint}`
      const known = signers.get(key) ?? {
        principal: s.data.principal,
        fingerprint: s.data.fingerprint,
        commands: 0,
        trusted: true
      }
      known.commands++
      if (refusal !== null) known.trusted = false
      signers.set(key, known)
    }
    return {
      findings,
      signers: [...signers.values()].map((x) => ({ ...x, trusted: options.trust === undefined ? null : x.trusted })),
      unsigned
    }
  }
  return { feed, judge }
}

/** Why a signature does not hold where it stands, or null. */
const signatureProblem = (s: SignatureSeen, c: CommandSeen, caseId: string | null) => {
  const d = s.data
  const blob = Buffer.from(d.signature, 'base64')
  const v = verifySshsig(blob, CASE_NAMESPACE, signedMessage(d))
  if (E.isLeft(v)) return `does not hold: ${v.left.message}`
  if (fingerprintOf(v.right.key) !== d.fingerprint || publicKeyLine(v.right.key) !== d.key)
    return `was made by key ${fingerprintOf(v.right.key)}, not the ${d.fingerprint} it names`
  if (caseId !== null && d.case_id !== caseId) return `was made for case ${d.case_id}, not this case (${caseId})`
  if (d.first_seq !== c.firstSeq || d.last_seq !== c.lastSeq || d.last_hash !== c.lastHash)
    return `was made for events ${d.first_seq}–${d.last_seq} ending in ${d.last_hash}, not the command's ${c.firstSeq}–${c.lastSeq} ending in ${c.lastHash}`
  const actors = actorsOf(c.actors)
  if (d.actors.join(',') !== actors.join(','))
    return `was made for actors ${d.actors.join(',')}, not the command's ${actors.join(',')}`
  return null
}

/** Why the trust policy does not allow a (valid) signature, or null. */
const trustProblem = (trust: TrustPolicy, s: SignatureSeen, c: CommandSeen) => {
  const refusal = signerRefusal(trust.signers, {
    fingerprint: s.data.fingerprint,
    principal: s.data.principal,
    namespace: CASE_NAMESPACE,
    at: Date.parse(s.at)
  })
  if (refusal !== null) return refusal
  const allowed = trust.actors?.[s.data.principal]
  if (allowed === undefined) return null
  const foreign = actorsOf(c.actors).filter((a) => !allowed.includes(a))
  return foreign.length === 0
    ? null
    : `${s.data.principal} may sign ${allowed.join(', ')} commands only, and this one is written by ${foreign.join(', ')}`
}

/** A trust policy from an allowed_signers file's text and principal-to-actor bindings; TRUST_INVALID names what is wrong. */
export const trustPolicy = (
  allowedSigners: string,
  actors?: Readonly<Record<string, readonly string[]>>
): TrustPolicy => {
  const signers = parseAllowedSigners(allowedSigners)
  if (E.isLeft(signers)) return fail(signers.left.code, signers.left.message, signers.left.data)
  if (actors === undefined) return { signers: signers.right }
  for (const [principal, list] of Object.entries(actors))
    for (const a of list)
      if (!Actor.is(a))
        fail(
          'TRUST_INVALID',
          `principal ${principal} is bound to "${a}", which is not an actor (operator, controller, model, system)`
        )
  return { signers: signers.right, actors: actors as Readonly<Record<string, readonly Actor[]>> }
}
