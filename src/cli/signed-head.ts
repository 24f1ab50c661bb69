/** Signed heads as the CLI makes them (`vba head --sign-key`, a worker's receipt): see src/events/signed-note.ts. */
import * as E from 'fp-ts/lib/Either.js'
import type { Signer } from '../adapters/ssh-keys.js'
import { headText, noteOf, signatureLine } from '../events/signed-note.js'
import { parsePublicKeyLine } from '../events/ssh-sig.js'
import { fail } from '../failures/error.js'

/** The signature line of `signer` over a head's text. */
export const lineOf = async (signer: Signer, text: string): Promise<string> => {
  const key = parsePublicKeyLine(signer.publicKey)
  if (E.isLeft(key)) return fail(key.left.code, key.left.message)
  return signatureLine(signer.principal, key.right, await signer.signBytes(Buffer.from(text, 'utf8')))
}

/** The signed head of a case at `head`, signed by `signer`: a note with one signature line. */
export const signedHeadOf = async (signer: Signer, caseId: string, head: { seq: number; hash: string }) => {
  const text = headText(caseId, head.seq, head.hash)
  return noteOf(text, [await lineOf(signer, text)])
}
