/**
 * Receipts kept outside a case: the bare `SEQ:HASH` every append prints, and the signed head (a
 * C2SP signed note, src/events/signed-note.ts) `vba head --sign-key` prints; what a verifier finds
 * when the case no longer holds the event a receipt names.
 */
import * as E from 'fp-ts/lib/Either.js'
import { genesisHash } from '../../events/chain.js'
import type { CaseDeclaration } from '../../events/envelope.js'
import { finding, type Finding } from '../../events/findings.js'
import { isNoteText, parseSignedHead, type SignedHead } from '../../events/signed-note.js'
import { fail } from '../../failures/error.js'
import type { Receipt } from './append.js'
import { HEAD_FILE, LOG_FILE } from './layout.js'

/** Parses `seq:hash` (as printed by every append and by `vba verify`). @category cases */
export const parseReceipt = (text: string): Receipt | null => {
  const m = /^(\d{1,15}):(sha256:[0-9a-f]{64})$/.exec(text.trim())
  return m === null ? null : { seq: Number(m[1]), hash: m[2] as string }
}

/**
 * What verify found of a receipt kept outside the case (`--expect-head`): its seq and hash, and
 * whether the case holds that event (`matched`; later events may extend it), does not (a
 * HEAD_ROLLBACK or HEAD_FORK finding says how), or was not compared (null: the log does not check
 * out, or a signed head names another case). @category cases
 */
export interface ReceiptCheck {
  readonly seq: number
  readonly hash: string
  readonly matched: boolean | null
}

/**
 * A receipt kept outside the case against a checked log: the check, and its findings, a rollback
 * (the case ends before the receipt's seq) or a fork (another event at that seq). `atReceipt` is
 * the hash the log has at the receipt's seq (null when it ends before). Nothing to check: undefined.
 */
export const checkReceipt = (
  expect: Receipt | undefined,
  scan: { readonly hash: string | null; readonly seq: number; readonly declaration: CaseDeclaration | null },
  atReceipt: string | null,
  compared = true
): { readonly receipt?: ReceiptCheck; readonly findings: Finding[] } => {
  if (expect === undefined) return { findings: [] }
  const given = { seq: expect.seq, hash: expect.hash }
  if (!compared || scan.hash === null) return { receipt: { ...given, matched: null }, findings: [] }
  const genesis = scan.declaration === null ? null : genesisHash(scan.declaration)
  const found = expect.seq === 0 ? (genesis !== null && E.isRight(genesis) ? genesis.right : null) : atReceipt
  const unmatched = (f: Finding) => ({ receipt: { ...given, matched: false }, findings: [f] })
  if (expect.seq > scan.seq)
    return unmatched(
      finding(
        'HEAD_ROLLBACK',
        `the receipt names seq ${expect.seq}, but the case ends at seq ${scan.seq}: events were removed (rolled back)`,
        { path: HEAD_FILE, data: { expected_seq: expect.seq, head_seq: scan.seq } }
      )
    )
  if (found !== expect.hash)
    return unmatched(
      finding(
        'HEAD_FORK',
        `the event at seq ${expect.seq} is not the one the receipt names: the history was rewritten (forked)`,
        { seq: expect.seq, path: LOG_FILE, data: { expected_hash: expect.hash, found_hash: found } }
      )
    )
  return { receipt: { ...given, matched: true }, findings: [] }
}

/**
 * A receipt given as a value, as `SEQ:HASH` text or as a signed head: the receipt it names, and the
 * parsed note when it is one (verify judges its signatures against the trust file, which a signed
 * head needs: `trusted` says whether one is given). Bad input is INVALID_ARGUMENT.
 */
export const expectedHead = (
  given: Receipt | string | undefined,
  trusted: boolean
): { readonly expectHead?: Receipt; readonly signedHead?: SignedHead } => {
  if (given === undefined) return {}
  if (typeof given !== 'string') return { expectHead: given }
  if (!isNoteText(given)) {
    const r = parseReceipt(given)
    if (r === null)
      return fail(
        'INVALID_ARGUMENT',
        `a receipt is SEQ:sha256:<64 hex> (as printed after every append) or a signed head, got ${JSON.stringify(given.slice(0, 100))}`
      )
    return { expectHead: r }
  }
  const note = parseSignedHead(given)
  if (E.isLeft(note)) return fail(note.left.code, note.left.message)
  if (!trusted)
    fail(
      'INVALID_ARGUMENT',
      "a signed head is checked against the signers' keys: give the trust file too (--trust FILE, the trust option)"
    )
  return { expectHead: { seq: note.right.seq, hash: note.right.hash }, signedHead: note.right }
}
