/**
 * `vba keys new PATH --principal NAME` writes an Ed25519 signing key in OpenSSH's format (PATH,
 * mode 0600, and PATH.pub) and prints the allowed_signers line that trusts it for cases;
 * `vba keys show PATH` prints a key's principal and fingerprint. No private key is ever printed.
 */
import { readSigner, writeNewKey } from '../adapters/ssh-keys.js'
import { fail } from '../failures/error.js'
import type { Out } from './case-verbs.js'
import { terminalText } from './io.js'

const PRINCIPAL = /^[^\s,"]{1,128}$/

export const keysNew = async (io: Out, path: string, o: { principal: string; json?: boolean }): Promise<void> => {
  if (!PRINCIPAL.test(o.principal))
    fail('INVALID_ARGUMENT', '--principal is 1-128 characters without spaces, commas or quotes (alice@example.org)')
  const { signer, allowedSigners } = await writeNewKey(path, o.principal)
  if (o.json === true) {
    io.out(
      JSON.stringify({
        path,
        public_path: `${path}.pub`,
        principal: signer.principal,
        fingerprint: signer.fingerprint,
        allowed_signers: allowedSigners
      })
    )
    return
  }
  io.out(terminalText(`wrote ${path} (private, mode 0600) and ${path}.pub`))
  io.out(`principal ${signer.principal}, key ${signer.fingerprint}`)
  io.out('its allowed_signers line (add it to the trust file of whoever verifies):')
  io.out(allowedSigners)
}

export const keysShow = async (io: Out, path: string, o: { json?: boolean }): Promise<void> => {
  const signer = await readSigner(path)
  if (o.json === true) {
    io.out(
      JSON.stringify({ principal: signer.principal, fingerprint: signer.fingerprint, public_key: signer.publicKey })
    )
    return
  }
  io.out(`principal ${signer.principal}, key ${signer.fingerprint}`)
  io.out(`${signer.principal} namespaces="vba-case" ${signer.publicKey}`)
}
