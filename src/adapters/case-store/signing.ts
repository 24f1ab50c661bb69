/**
 * The CommandSigned event a signer-configured writer ends every command with
 * (src/events/command-signature.ts): the signer's principal, key and fingerprint, and its SSHSIG
 * over the case id, the command's sequence range, its last hash and its actors.
 */
import type { EventDraft, SealedEvent } from '../../events/chain.js'
import { actorsOf, signedMessage, type SignedCommand } from '../../events/command-signature.js'
import { CASE_NAMESPACE } from '../../events/ssh-sig.js'
import { fail } from '../../failures/error.js'
import { signOffThread, type Signer } from '../ssh-keys.js'

/** The draft of the command's signature, after its sealed events (`ahead`: signed off the main thread, see signOffThread). */
export const signatureDraft = async (
  caseId: string,
  sealed: readonly SealedEvent[],
  signer: Signer,
  ahead = false
): Promise<EventDraft> => {
  const first = sealed[0]?.envelope
  const last = sealed[sealed.length - 1]?.envelope
  if (first === undefined || last === undefined) return fail('INTERNAL_ERROR', 'a signed command has events')
  const signed: SignedCommand = {
    principal: signer.principal,
    case_id: caseId,
    first_seq: first.seq,
    last_seq: last.seq,
    last_hash: last.hash,
    actors: actorsOf(sealed.map((s) => s.envelope))
  }
  const message = signedMessage(signed)
  const signature = await (ahead
    ? signOffThread(signer)(CASE_NAMESPACE, message)
    : signer.sign(CASE_NAMESPACE, message))
  return {
    type: 'CommandSigned',
    actor: last.actor,
    data: {
      ...signed,
      key: signer.publicKey,
      fingerprint: signer.fingerprint,
      signature: Buffer.from(signature.buffer, signature.byteOffset, signature.byteLength).toString('base64')
    }
  }
}
