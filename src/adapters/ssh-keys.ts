/**
 * Signers: Ed25519 keys in OpenSSH's own file format (`ssh-keygen -t ed25519` files work
 * unchanged), read from a file (unencrypted openssh-key-v1) and never from the command line; and
 * the key files `vba keys new` writes. A signer signs SSHSIG blobs (src/events/ssh-sig.ts). The
 * private key stays inside node:crypto's KeyObject: no message, log or failure carries it.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto'
import { open } from 'node:fs/promises'
import {
  ED25519,
  WireReader,
  fingerprintOf,
  publicKeyBlob,
  publicKeyFromBlob,
  publicKeyLine,
  signedData,
  sshString,
  sshsigBlob,
  sshsigFrame,
  type SshPublicKey,
  type SshsigFrame
} from '../events/ssh-sig.js'
import * as E from 'fp-ts/lib/Either.js'
import { coded, fail } from '../failures/error.js'
import { agentIdentities, agentSign } from './ssh-agent.js'
import { readNamedFile } from './regular-file.js'

/** Who signs: a principal (a name in an allowed_signers file), its key and a way to sign. @category Signing */
export interface Signer {
  /** The name the trust file lists the key under (`alice@example.org`, `worker-a`). */
  readonly principal: string
  /** The key's `SHA256:` fingerprint, as `ssh-keygen -l` prints it. */
  readonly fingerprint: string
  /** The public key line, `ssh-ed25519 BASE64`. */
  readonly publicKey: string
  /** The SSHSIG blob of `message` in `namespace`. */
  readonly sign: (namespace: string, message: Uint8Array) => Promise<Uint8Array>
  /** The plain Ed25519 signature (64 bytes) of `data`: what a signed head's lines hold. */
  readonly signBytes: (data: Uint8Array) => Promise<Uint8Array>
}

const BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----'
const END = '-----END OPENSSH PRIVATE KEY-----'
const AUTH_MAGIC = Buffer.from('openssh-key-v1\0', 'latin1')

/** An unencrypted Ed25519 key as it was read: its public half, the private KeyObject and the comment. */
export interface KeyFile {
  readonly key: SshPublicKey
  readonly privateKey: KeyObject
  readonly comment: string
}

const invalid = (where: string, why: string): never =>
  fail('KEY_INVALID', `${where} is not an OpenSSH Ed25519 private key: ${why}`, { path: where })

/**
 * A key file as read: unencrypted (the key), or protected by a passphrase (its public half only,
 * which such files keep in the clear: enough to ask an SSH agent for it).
 */
export type ParsedKeyFile =
  | { readonly encrypted: false; readonly file: KeyFile }
  | { readonly encrypted: true; readonly cipher: string; readonly key: SshPublicKey }

/** Parses an unencrypted openssh-key-v1 file's text (`where` names it in messages); a protected one is KEY_ENCRYPTED. */
export const parsePrivateKeyFile = (text: string, where: string): KeyFile => {
  const parsed = parseKeyFile(text, where)
  if (parsed.encrypted) return encrypted(where, parsed.cipher, 'vba reads it only through an SSH agent that holds it')
  return parsed.file
}

const encrypted = (where: string, cipher: string, why: string): never =>
  fail(
    'KEY_ENCRYPTED',
    `${where} is protected by a passphrase (${cipher}): ${why}; add it to an agent (ssh-add ${where}, with SSH_AUTH_SOCK set), make a signing key with vba keys new, or remove the passphrase from a copy with ssh-keygen -p -N '' -f COPY`,
    { path: where }
  )

/** Parses an openssh-key-v1 file's text, encrypted or not. */
export const parseKeyFile = (text: string, where: string): ParsedKeyFile => {
  const t = text.trim()
  if (!t.startsWith(BEGIN) || !t.endsWith(END))
    return invalid(where, `it does not start with ${BEGIN} (ssh-keygen -t ed25519 writes one)`)
  const body = Buffer.from(t.slice(BEGIN.length, t.length - END.length).replace(/\s+/g, ''), 'base64')
  if (!AUTH_MAGIC.equals(body.subarray(0, AUTH_MAGIC.length))) return invalid(where, 'no openssh-key-v1 magic')
  const r = new WireReader(body.subarray(AUTH_MAGIC.length))
  const cipher = r.string()?.toString('latin1')
  const kdf = r.string()?.toString('latin1')
  r.string()
  const count = r.u32()
  if (cipher === undefined || kdf === undefined || count === undefined) return invalid(where, 'the file is truncated')
  if (count !== 1) return invalid(where, `it holds ${count} keys, not 1`)
  const publicBlob = r.string()
  if (cipher !== 'none' || kdf !== 'none') {
    const key = publicBlob === undefined ? undefined : publicKeyFromBlob(publicBlob)
    if (key === undefined) return invalid(where, 'the file is truncated')
    if (E.isLeft(key)) return invalid(where, key.left.message)
    return { encrypted: true, cipher, key: key.right }
  }
  const section = r.string()
  if (section === undefined) return invalid(where, 'the file is truncated')
  const p = new WireReader(section)
  const [c1, c2] = [p.u32(), p.u32()]
  if (c1 === undefined || c1 !== c2) return invalid(where, 'its check numbers differ (a damaged file)')
  const type = p.string()?.toString('latin1')
  if (type !== ED25519) return invalid(where, `the key is of type ${type ?? '?'}; signers are Ed25519 keys`)
  const pub = p.string()
  const secret = p.string()
  const comment = p.string()?.toString('utf8')
  if (pub?.length !== 32 || secret?.length !== 64 || comment === undefined)
    return invalid(where, 'the Ed25519 key is truncated')
  if (!secret.subarray(32).equals(pub)) return invalid(where, 'its private and public halves differ')
  const privateKey = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: secret.subarray(0, 32).toString('base64url'), x: pub.toString('base64url') },
    format: 'jwk'
  })
  secret.fill(0)
  return { encrypted: false, file: { key: { raw: Buffer.from(pub) }, privateKey, comment } }
}

const principalOf = (principal: string | undefined, comment: string): string => {
  const name = principal ?? comment
  if (name.trim() === '' || /[\s,"]/.test(name))
    fail(
      'KEY_INVALID',
      'a signer needs a principal without spaces, commas or quotes: the key has no such comment; give one (--sign-principal)'
    )
  return name
}

/** A signer over a key read from a file; its principal is `principal`, else the key's comment. */
export const signerOfKey = (file: KeyFile, principal?: string): Signer => {
  const name = principalOf(principal, file.comment)
  // The fixed parts of each namespace's SSHSIG are encoded once (a signer signs every command).
  const frames = new Map<string, SshsigFrame>()
  const frameOf = (namespace: string): SshsigFrame => {
    const known = frames.get(namespace)
    if (known !== undefined) return known
    const frame = sshsigFrame(file.key, namespace)
    frames.set(namespace, frame)
    return frame
  }
  const signer: Signer = {
    principal: name,
    fingerprint: fingerprintOf(file.key),
    publicKey: publicKeyLine(file.key),
    sign: async (namespace, message) => {
      const frame = frameOf(namespace)
      return frame.blob(cryptoSign(null, frame.data(message), file.privateKey))
    },
    signBytes: async (data) => cryptoSign(null, data, file.privateKey)
  }
  offThread.set(signer, (namespace, message) => {
    const frame = frameOf(namespace)
    return new Promise((resolve, reject) =>
      cryptoSign(null, frame.data(message), file.privateKey, (e, signature) =>
        e === null ? resolve(frame.blob(signature)) : reject(e)
      )
    )
  })
  return signer
}

/** The `sign` of the key-file signers, made on node:crypto's threadpool (the same bytes: Ed25519 is deterministic). */
const offThread = new WeakMap<Signer, Signer['sign']>()

/**
 * The signer's `sign` computed off the main thread, when it is a key file's: for a plan made while
 * the store's IO is in flight (plan-ahead.ts), where the main thread has that IO's callbacks to run
 * meanwhile. A plan with nothing in flight signs on the main thread: handing the signature to the
 * threadpool and back costs the process more CPU than the signature itself.
 */
export const signOffThread = (signer: Signer): Signer['sign'] =>
  offThread.get(signer) ?? ((namespace, message) => signer.sign(namespace, message))

/** The most a key file may hold (an OpenSSH Ed25519 key file is under 1 KiB; an RSA one under 4 KiB). */
const MAX_KEY_FILE_BYTES = 64 << 10

/**
 * Reads the key file at `path` (never printed beyond its path) into a signer: a regular file or a
 * pipe (`--sign-key <(…)`) of at most 64 KiB; anything else is KEY_INVALID before it is read. A
 * passphrase-protected key signs through the SSH agent SSH_AUTH_SOCK names, when that agent holds
 * it (`ssh-add PATH`); otherwise it is KEY_ENCRYPTED. @category Signing
 */
export const readSigner = async (path: string, principal?: string): Promise<Signer> => {
  const bytes = await coded(`reading the signing key ${path}`, () =>
    readNamedFile(path, {
      maxBytes: MAX_KEY_FILE_BYTES,
      pipe: true,
      shown: `the signing key ${path}`,
      code: 'KEY_INVALID'
    }).catch((e: unknown) => {
      // A key file that is not there (or is a directory, or not ours to read) is the operator's to fix.
      const code = (e as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'EACCES' || code === 'EPERM')
        fail('KEY_INVALID', `the signing key ${path} cannot be read (${code}): name an OpenSSH Ed25519 key file`, {
          file: path
        })
      throw e
    })
  )
  const parsed = parseKeyFile(bytes.toString('utf8'), path)
  if (!parsed.encrypted) return signerOfKey(parsed.file, principal)
  const socket = process.env['SSH_AUTH_SOCK']
  if (socket === undefined || socket === '')
    return encrypted(path, parsed.cipher, 'no SSH agent is set (SSH_AUTH_SOCK)')
  const blob = publicKeyBlob(parsed.key)
  const held = (await agentIdentities(socket)).find((id) => id.blob.equals(blob))
  if (held === undefined) return encrypted(path, parsed.cipher, `the SSH agent at ${socket} does not hold it`)
  const key = parsed.key
  return {
    principal: principalOf(principal, held.comment),
    fingerprint: fingerprintOf(key),
    publicKey: publicKeyLine(key),
    sign: async (namespace, message) =>
      sshsigBlob(key, namespace, await agentSign(socket, blob, signedData(namespace, message))),
    signBytes: (data) => agentSign(socket, blob, data)
  }
}

/** The openssh-key-v1 text of a new Ed25519 key and its public line, with `comment`. */
export const newKeyFile = (comment: string): { readonly privateText: string; readonly publicText: string } => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const d = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url')
  const x = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url')
  const key = { raw: x }
  const check = randomBytes(4)
  let section = Buffer.concat([
    check,
    check,
    sshString(ED25519),
    sshString(x),
    sshString(Buffer.concat([d, x])),
    sshString(comment)
  ])
  const pad = (8 - (section.length % 8)) % 8
  section = Buffer.concat([section, Buffer.from(Array.from({ length: pad }, (_, i) => i + 1))])
  const body = Buffer.concat([
    AUTH_MAGIC,
    sshString('none'),
    sshString('none'),
    sshString(''),
    Buffer.from([0, 0, 0, 1]),
    sshString(publicKeyBlob(key)),
    sshString(section)
  ])
  d.fill(0)
  const b64 = body.toString('base64')
  const lines: string[] = []
  for (let i = 0; i < b64.length; i += 70) lines.push(b64.slice(i, i + 70))
  return { privateText: `${BEGIN}\n${lines.join('\n')}\n${END}\n`, publicText: `${publicKeyLine(key)} ${comment}\n` }
}

/**
 * Writes a new key to `path` (mode 0600) and its public line to `path.pub`; an existing file is
 * OUTPUT_EXISTS. Returns the signer and the allowed_signers line that trusts it for cases.
 */
export const writeNewKey = async (
  path: string,
  principal: string
): Promise<{ readonly signer: Signer; readonly allowedSigners: string }> => {
  const { privateText, publicText } = newKeyFile(principal)
  const signer = signerOfKey(parsePrivateKeyFile(privateText, path), principal)
  for (const [file, text, mode] of [
    [path, privateText, 0o600],
    [`${path}.pub`, publicText, 0o644]
  ] as const) {
    const handle = await coded(`writing ${file}`, () => open(file, 'wx', mode)).catch((e: unknown) => {
      if ((e as { failure?: { data?: { errno?: string } } }).failure?.data?.errno === 'EEXIST')
        fail('OUTPUT_EXISTS', `${file} exists; choose another path (a key is never overwritten)`, { path: file })
      throw e
    })
    await coded(`writing ${file}`, async () => {
      await handle.writeFile(text)
      await handle.close()
    })
  }
  return { signer, allowedSigners: `${principal} namespaces="vba-case" ${signer.publicKey}` }
}
