/**
 * `vba head CASE` prints the case's head as a receipt, `SEQ:HASH`; with a signing key (--sign-key,
 * VBA_SIGN_KEY, the profile's [signing]) as a signed head, a C2SP signed note that `vba verify
 * --expect-head FILE --trust FILE` checks. `--cosign NOTE` is a witness's step: it verifies its own
 * copy of the case holds the head the note names, then adds its signature line.
 */
import * as E from 'fp-ts/lib/Either.js'
import { signerOf, systemEnv } from '../adapters/env.js'
import type { Signer } from '../adapters/ssh-keys.js'
import { noteKeyId, noteOf, renderSignature } from '../events/signed-note.js'
import { parsePublicKeyLine } from '../events/ssh-sig.js'
import { lineOf, readSignedHeadFile, signedHeadOf } from './signed-head.js'
import { fail } from '../failures/error.js'
import type { Out } from './case-verbs.js'
import { renderVerifyReport } from './case-verbs.js'
import { CliExit, EXIT } from './io.js'
import { jsonLine } from './json-line.js'
import { cliClient, storeUrl, type StoreOption } from './stores.js'

const print = (io: Out, o: { json?: boolean }, head: { case_id: string; seq: number; hash: string }, note?: string) => {
  if (o.json === true) io.out(jsonLine({ ...head, ...(note === undefined ? {} : { signed_head: note }) }))
  else if (note === undefined) io.out(`${head.seq}:${head.hash}`)
  else io.out(note.replace(/\n$/, ''))
}

export const headVerb = async (
  io: Out,
  ref: string,
  o: { cosign?: string; json?: boolean } & StoreOption
): Promise<void> => {
  const vba = await cliClient(storeUrl(o))
  const signer = await signerOf(systemEnv)
  if (o.cosign !== undefined) return cosign(io, ref, o.cosign, signer, o)
  const status = await vba.cases.status(ref)
  const head = { case_id: status.case_id, seq: status.head.seq, hash: status.head.hash }
  if (signer === undefined) return print(io, o, head)
  print(io, o, head, await signedHeadOf(signer, head.case_id, head))
}

const cosign = async (
  io: Out,
  ref: string,
  file: string,
  signer: Signer | undefined,
  o: { json?: boolean } & StoreOption
): Promise<void> => {
  if (signer === undefined)
    fail('INVALID_ARGUMENT', '--cosign signs: give the witness key (--sign-key PATH, VBA_SIGN_KEY or the profile)')
  const { note } = await readSignedHeadFile(file, '--cosign')
  const vba = await cliClient(storeUrl(o))
  const report = await vba.cases.verify(ref, { expectHead: { seq: note.seq, hash: note.hash } })
  if (report.case_id !== note.caseId)
    fail('INVALID_ARGUMENT', `the signed head is of case ${note.caseId}, and ${ref} is case ${report.case_id ?? '?'}`)
  if (!report.valid) {
    for (const line of renderVerifyReport(report)) io.err(`vba: ${line}`)
    io.err('vba: not cosigned: this copy of the case does not verify with the head the note names')
    throw new CliExit(EXIT.FINDINGS)
  }
  const key = parsePublicKeyLine(signer.publicKey)
  if (E.isLeft(key)) return fail(key.left.code, key.left.message)
  const id = noteKeyId(signer.principal, key.right)
  const lines = note.signatures.map(renderSignature)
  const signed = note.signatures.some((s) => s.name === signer.principal && s.keyId.equals(id))
  const all = signed ? lines : [...lines, await lineOf(signer, note.text)]
  print(io, o, { case_id: note.caseId, seq: note.seq, hash: note.hash }, noteOf(note.text, all))
}
