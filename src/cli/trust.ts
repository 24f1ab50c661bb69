/** The CLI's words for whom to trust: `--trust FILE`, `--trust-actor PRINCIPAL=ACTORS`, `--require-signed`; and how signers are shown. */
import { readNamedFile } from '../adapters/regular-file.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import { coded, fail } from '../failures/error.js'
import type { TrustOptions } from './options.js'
import { terminalText } from './io.js'

/** The most a trust file may hold. */
const MAX_TRUST_BYTES = 1 << 20

/** The client's trust and requireSigned options from the CLI's. */
export const trustOf = async (
  o: TrustOptions
): Promise<{
  trust?: { allowedSigners: string; actors?: Record<string, string[]> }
  requireSigned?: boolean
}> => {
  const actors: Record<string, string[]> = {}
  for (const binding of o.trustActor ?? []) {
    const m = /^([^\s,"=]{1,128})=([a-z,]+)$/.exec(binding)
    if (m === null)
      fail('INVALID_ARGUMENT', `--trust-actor ${binding}: write PRINCIPAL=ACTOR[,ACTOR] (op@example.org=operator)`)
    actors[m[1] as string] = (m[2] as string).split(',').filter((a) => a !== '')
  }
  if (o.trust === undefined && Object.keys(actors).length > 0)
    fail('INVALID_ARGUMENT', '--trust-actor binds principals of a trust file: give --trust FILE too')
  const file = o.trust
  // An allowed_signers file: a line per key, so 1 MiB is thousands of signers; a pipe (`--trust <(git show …)`) is read up to that.
  const text =
    file === undefined
      ? undefined
      : (
          await coded(`reading the trust file ${file}`, () =>
            readNamedFile(file, {
              maxBytes: MAX_TRUST_BYTES,
              pipe: true,
              shown: `the trust file ${file}`,
              code: 'TRUST_INVALID'
            })
          )
        ).toString('utf8')
  return {
    ...(text === undefined
      ? {}
      : { trust: { allowedSigners: text, ...(Object.keys(actors).length > 0 ? { actors } : {}) } }),
    ...(o.requireSigned === true ? { requireSigned: true } : {})
  }
}

/** The signers lines of a verify report: one per key, trusted or not (nothing when the case has no signature and none was asked for). */
export const signerLines = (report: VerifyReport): string[] => {
  const s = report.signatures
  if (s === undefined) return headSignerLines(report)
  const lines = s.signers.map((x) =>
    terminalText(
      `signed by ${x.principal} ${x.fingerprint}: ${x.commands} command${x.commands === 1 ? '' : 's'}${x.trusted === null ? ' (no trust file given)' : x.trusted ? ', trusted' : ', NOT trusted'}`
    )
  )
  lines.push(`unsigned commands: ${s.unsigned_commands}`)
  return [...lines, ...headSignerLines(report)]
}

/** Who signed the head a signed receipt names, as verify judged each line. */
const headSignerLines = (report: VerifyReport): string[] =>
  (report.signed_head?.signers ?? []).map((x) =>
    terminalText(
      `head signed by ${x.principal}${x.fingerprint === null ? '' : ` ${x.fingerprint}`}: ${x.trusted === null ? 'key not in the trust file (ignored)' : x.trusted ? 'trusted' : 'NOT trusted'}`
    )
  )
