/**
 * A case's head as a C2SP signed note (https://c2sp.org/signed-note), the format of transparency
 * log checkpoints: the text `CASE_ID\nSEQ\nHASH\n`, a blank line, then one line per signer,
 * `— NAME BASE64(key id || Ed25519 signature of the text)`, the key id being the first 4 bytes of
 * SHA-256(NAME || 0x0A || 0x01 || public key). A witness cosigns by adding its own line. Pure:
 * parsing, the lines, and the judgement of a note against a case and an allowed_signers file.
 */
import { hash, verify as cryptoVerify } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { signerRefusal, type AllowedSigner } from './allowed-signers.js'
import { finding, type Finding } from './findings.js'
import { CASE_NAMESPACE, fingerprintOf, publicKeyObject, type SshPublicKey } from './ssh-sig.js'

/** The dash a signature line starts with (U+2014 and a space). */
const DASH = '\u2014 '
/** The signature type of an Ed25519 key in a key id. */
const ED25519_TYPE = 0x01
const HEAD_LINES = /^([^\s]{1,128})\n(\d{1,15})\n(sha256:[0-9a-f]{64})\n$/

/** One signature line of a note. */
export interface NoteSignature {
  readonly name: string
  readonly keyId: Buffer
  readonly signature: Buffer
}

/** A parsed note: its text (what is signed), the head it names and its signatures. */
export interface SignedHead {
  readonly text: string
  readonly caseId: string
  readonly seq: number
  readonly hash: string
  readonly signatures: readonly NoteSignature[]
}

type NoteFailure = Failure<'INVALID_ARGUMENT'>
const invalid = (why: string): E.Either<NoteFailure, never> =>
  E.left(failure('INVALID_ARGUMENT', `not a signed head (a C2SP signed note as vba head --sign-key prints it): ${why}`))

/** The text a note signs: the case id, the seq and the hash, one a line. */
export const headText = (caseId: string, seq: number, hash: string): string => `${caseId}\n${seq}\n${hash}\n`

/** The key id of `name`'s Ed25519 key: SHA-256(name || 0x0A || 0x01 || key)[0..4]. */
export const noteKeyId = (name: string, key: SshPublicKey): Buffer =>
  hash(
    'sha256',
    Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([ED25519_TYPE]), key.raw]),
    'buffer'
  ).subarray(0, 4)

/** A signature line: `— NAME BASE64(key id || signature)`, with its newline. */
export const renderSignature = (s: NoteSignature): string =>
  `${DASH}${s.name} ${Buffer.concat([s.keyId, s.signature]).toString('base64')}\n`

/** The signature line of `name`'s key over a text. */
export const signatureLine = (name: string, key: SshPublicKey, signature: Uint8Array): string =>
  renderSignature({ name, keyId: noteKeyId(name, key), signature: Buffer.from(signature) })

/** The whole note of a text and its signature lines. */
export const noteOf = (text: string, lines: readonly string[]): string => `${text}\n${lines.join('')}`

/** Whether `text` looks like a note rather than a bare `SEQ:HASH` receipt. */
export const isNoteText = (text: string): boolean => text.includes('\n')

/** Parses a note; every signature line must be an Ed25519 one (4-byte key id, 64-byte signature). */
export const parseSignedHead = (note: string): E.Either<NoteFailure, SignedHead> => {
  const at = note.indexOf('\n\n')
  if (at < 0) return invalid('no blank line between the text and the signatures')
  const text = note.slice(0, at + 1)
  const m = HEAD_LINES.exec(text)
  if (m === null) return invalid('its text is not three lines: the case id, the seq and the sha256: hash')
  const rest = note.slice(at + 2)
  if (!rest.endsWith('\n')) return invalid('its last signature line does not end in a newline')
  const signatures: NoteSignature[] = []
  // Refusals name the line, never its text: the note may be a file that is not one at all.
  const first = text.split('\n').length + 1
  for (const [i, line] of rest.slice(0, -1).split('\n').entries()) {
    const s = /^\u2014 ([^\s+]+) ([A-Za-z0-9+/]+={0,2})$/.exec(line)
    if (s === null) return invalid(`line ${first + i} is not a signature line (— NAME BASE64)`)
    const bytes = Buffer.from(s[2] as string, 'base64')
    if (bytes.length !== 68) return invalid(`the signature on line ${first + i} is not an Ed25519 one (4 + 64 bytes)`)
    signatures.push({ name: s[1] as string, keyId: bytes.subarray(0, 4), signature: bytes.subarray(4) })
  }
  if (signatures.length === 0) return invalid('it has no signature line')
  return E.right({ text, caseId: m[1] as string, seq: Number(m[2]), hash: m[3] as string, signatures })
}

/** One signer of a note as a verifier judged it. @category cases */
export interface HeadSigner {
  readonly principal: string
  /** The key's fingerprint when the trust file holds a key of that name and id; null otherwise. */
  readonly fingerprint: string | null
  /** Whether its signature holds and the trust file allows it; null when the trust file has no such key (ignored). */
  readonly trusted: boolean | null
}

/**
 * Judges a signed head against the case it is checked with and the trust file's lines: a note for
 * another case is SIGNED_HEAD_OTHER_CASE; a signature line whose key the trust file holds (same name
 * and key id) but that does not hold over the text is SIGNED_HEAD_SIGNATURE_INVALID; a note without
 * one signature that holds by a key the file allows (principal, namespace vba-case, time `at`) is
 * SIGNED_HEAD_UNTRUSTED. Lines by keys the file does not know are ignored, as the spec asks.
 */
export const judgeSignedHead = (
  note: SignedHead,
  caseId: string | null,
  trusted: readonly AllowedSigner[],
  at: number
): { readonly findings: Finding[]; readonly signers: HeadSigner[] } => {
  if (caseId !== null && note.caseId !== caseId)
    return {
      findings: [
        finding('SIGNED_HEAD_OTHER_CASE', `the signed head is of case ${note.caseId}, not of this case (${caseId})`, {
          data: { note_case_id: note.caseId }
        })
      ],
      signers: []
    }
  const findings: Finding[] = []
  const signers: HeadSigner[] = []
  const refusals: string[] = []
  for (const s of note.signatures) {
    const lines = trusted.filter((t) => t.key !== null && noteKeyId(s.name, t.key).equals(s.keyId))
    const line = lines[0]
    if (line?.key == null) {
      signers.push({ principal: s.name, fingerprint: null, trusted: null })
      refusals.push(`no key of ${s.name} with its key id is in the trust file`)
      continue
    }
    const fingerprint = fingerprintOf(line.key)
    if (!holds(note.text, line.key, s.signature)) {
      findings.push(
        finding(
          'SIGNED_HEAD_SIGNATURE_INVALID',
          `the signature of ${s.name} (${fingerprint}) does not hold over the head`,
          {
            seq: note.seq,
            data: { principal: s.name, fingerprint }
          }
        )
      )
      signers.push({ principal: s.name, fingerprint, trusted: false })
      continue
    }
    const refusal = signerRefusal(trusted, { fingerprint, principal: s.name, namespace: CASE_NAMESPACE, at })
    signers.push({ principal: s.name, fingerprint, trusted: refusal === null })
    if (refusal !== null) refusals.push(refusal)
  }
  if (findings.length === 0 && !signers.some((s) => s.trusted === true))
    findings.push(
      finding(
        'SIGNED_HEAD_UNTRUSTED',
        `no signature of the head is by a key the trust file allows: ${refusals.join('; ')}`,
        {
          seq: note.seq,
          data: { principals: note.signatures.map((s) => s.name) }
        }
      )
    )
  return { findings, signers }
}

const holds = (text: string, key: SshPublicKey, signature: Buffer): boolean => {
  try {
    return cryptoVerify(null, Buffer.from(text, 'utf8'), publicKeyObject(key), signature)
  } catch {
    return false
  }
}
