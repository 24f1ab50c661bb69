/** Signed heads as the CLI makes them (`vba head --sign-key`, a worker's receipt): see src/events/signed-note.ts. */
import * as E from 'fp-ts/lib/Either.js'
import type { Signer } from '../adapters/ssh-keys.js'
import { errnoOf } from '../adapters/fs-util.js'
import { readNamedFile } from '../adapters/regular-file.js'
import { parseReceipt } from '../adapters/case-store/receipts.js'
import { headText, noteOf, parseSignedHead, signatureLine, type SignedHead } from '../events/signed-note.js'
import { parsePublicKeyLine } from '../events/ssh-sig.js'
import { fail, FailureError } from '../failures/error.js'
import { shellPath } from '../adapters/shell-word.js'

/** The most a signed head file may hold: three lines of text and a line per signer. */
export const MAX_SIGNED_HEAD_BYTES = 64 << 10

/**
 * The signed head in `file`, named by `option` (`--expect-head`, `--cosign`): its text and the note
 * parsed. The file must be a regular file of at most {@link MAX_SIGNED_HEAD_BYTES} (a directory,
 * device or FIFO is refused unread: a receipt is a file that is kept, not a stream), and every
 * refusal is INVALID_ARGUMENT naming the file, never quoting it: a file that is not a signed head
 * may hold anything the caller can read (a secret, /proc/self/environ).
 */
export const readSignedHeadFile = async (
  file: string,
  option: string
): Promise<{ readonly text: string; readonly note: SignedHead }> => {
  let bytes: Buffer
  try {
    bytes = await readNamedFile(file, {
      maxBytes: MAX_SIGNED_HEAD_BYTES,
      shown: `${option} ${file}`,
      code: 'INVALID_ARGUMENT'
    })
  } catch (e) {
    if (e instanceof FailureError) throw e
    return fail('INVALID_ARGUMENT', `${option} ${file} cannot be read (${errnoOf(e) ?? 'error'})`, { file })
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return fail('INVALID_ARGUMENT', `${option} ${file} is not a signed head: it is not UTF-8 text`, { file })
  }
  const note = parseSignedHead(text)
  if (E.isLeft(note) && parseReceipt(text) !== null)
    // A receipt kept in a file, as operations.md advises keeping it: say what it is and what works.
    return fail(
      'INVALID_ARGUMENT',
      option === '--expect-head'
        ? `${option} ${file} holds a bare receipt (SEQ:HASH), not a signed head: give the receipt itself, ${option} "$(cat ${shellPath(file)})"; a file must hold a signed head (vba head --sign-key)`
        : `${option} ${file} holds a bare receipt (SEQ:HASH), not a signed head: ${option} takes a signed head (vba head --sign-key prints one)`,
      { file }
    )
  if (E.isLeft(note)) return fail('INVALID_ARGUMENT', `${option} ${file}: ${note.left.message}`, { file })
  return { text, note: note.right }
}

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
