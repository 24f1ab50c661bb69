/**
 * OpenSSH's signature formats, as pure computation over node:crypto: the SSH wire encoding of an
 * Ed25519 public key, its `SHA256:` fingerprint as `ssh-keygen -l` prints it, and SSHSIG
 * (OpenSSH's PROTOCOL.sshsig, what `ssh-keygen -Y sign` writes and `-Y verify` checks), so a
 * signature made here verifies with OpenSSH's own binary and one made there verifies here.
 */
import { createPublicKey, hash, verify as cryptoVerify, type KeyObject } from 'node:crypto'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'

/** The one key type a signer may have. */
export const ED25519 = 'ssh-ed25519'
/** The namespace of a signed command (`ssh-keygen -Y verify -n vba-case`). */
export const CASE_NAMESPACE = 'vba-case'

const MAGIC = Buffer.from('SSHSIG', 'ascii')
const ARMOR_BEGIN = '-----BEGIN SSH SIGNATURE-----'
const ARMOR_END = '-----END SSH SIGNATURE-----'

/** An SSH `string`: a uint32 length, then the bytes. */
export const sshString = (value: Uint8Array | string): Buffer => {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value)
  const len = Buffer.alloc(4)
  len.writeUInt32BE(bytes.length)
  return Buffer.concat([len, bytes])
}

const uint32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}

/** Reads SSH wire values one after another; every read past the end is a Left. */
export class WireReader {
  private at = 0
  constructor(private readonly bytes: Buffer) {}
  get done(): boolean {
    return this.at === this.bytes.length
  }
  get rest(): Buffer {
    return this.bytes.subarray(this.at)
  }
  raw(n: number): Buffer | undefined {
    if (this.at + n > this.bytes.length) return undefined
    const out = this.bytes.subarray(this.at, this.at + n)
    this.at += n
    return out
  }
  u32(): number | undefined {
    const b = this.raw(4)
    return b === undefined ? undefined : b.readUInt32BE(0)
  }
  string(): Buffer | undefined {
    const n = this.u32()
    return n === undefined ? undefined : this.raw(n)
  }
}

/** An Ed25519 public key: its 32 raw bytes. */
export interface SshPublicKey {
  readonly raw: Buffer
}

/** The SSH wire blob of a public key (`string "ssh-ed25519", string key`). */
export const publicKeyBlob = (key: SshPublicKey): Buffer => Buffer.concat([sshString(ED25519), sshString(key.raw)])

/** `SHA256:` and the unpadded base64 of the blob's SHA-256, exactly as `ssh-keygen -l` prints it. */
export const fingerprintOf = (key: SshPublicKey): string =>
  `SHA256:${hash('sha256', publicKeyBlob(key), 'base64').replace(/=+$/, '')}`

/** The public key line of an authorized_keys or allowed_signers file: `ssh-ed25519 BASE64`. */
export const publicKeyLine = (key: SshPublicKey): string => `${ED25519} ${publicKeyBlob(key).toString('base64')}`

type KeyFailure = Failure<'KEY_INVALID'>
const keyInvalid = (message: string): E.Either<KeyFailure, never> => E.left(failure('KEY_INVALID', message))

/** A public key from its wire blob; other key types are KEY_INVALID with the type named. */
export const publicKeyFromBlob = (blob: Buffer): E.Either<KeyFailure, SshPublicKey> => {
  const r = new WireReader(blob)
  const type = r.string()?.toString('latin1')
  if (type === undefined) return keyInvalid('the public key is truncated')
  if (type !== ED25519)
    return keyInvalid(`the key is of type ${type}; signers are Ed25519 keys (ssh-keygen -t ed25519)`)
  const raw = r.string()
  if (raw === undefined || raw.length !== 32 || !r.done) return keyInvalid('the Ed25519 public key is not 32 bytes')
  return E.right({ raw: Buffer.from(raw) })
}

/** A public key from `ssh-ed25519 BASE64 [comment]`. */
export const parsePublicKeyLine = (line: string): E.Either<KeyFailure, SshPublicKey> => {
  const [type, b64] = line.trim().split(/\s+/)
  if (type === undefined || b64 === undefined) return keyInvalid('a public key line is "ssh-ed25519 BASE64 [comment]"')
  if (type !== ED25519)
    return keyInvalid(`the key is of type ${type}; signers are Ed25519 keys (ssh-keygen -t ed25519)`)
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return keyInvalid('the public key is not base64')
  return publicKeyFromBlob(Buffer.from(b64, 'base64'))
}

/** node:crypto's form of a public key. */
export const publicKeyObject = (key: SshPublicKey): KeyObject =>
  createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.raw.toString('base64url') }, format: 'jwk' })

/** The fields SSHSIG signs before the message's hash: the magic, the namespace, reserved, the hash algorithm. */
const dataFields = (namespace: string): Buffer[] => [MAGIC, sshString(namespace), sshString(''), sshString('sha512')]

/** What SSHSIG signs: the magic, the namespace, the hash algorithm and the message's SHA-512. */
export const signedData = (namespace: string, message: Uint8Array): Buffer =>
  Buffer.concat([...dataFields(namespace), sshString(hash('sha512', message, 'buffer'))])

/** The fields of an SSHSIG blob before its signature: the magic, the version, the key, namespace, reserved, hash algorithm. */
const blobFields = (key: SshPublicKey, namespace: string): Buffer[] => [
  MAGIC,
  uint32(1),
  sshString(publicKeyBlob(key)),
  sshString(namespace),
  sshString(''),
  sshString('sha512')
]

/** The SSHSIG blob around an Ed25519 signature (64 bytes) of {@link signedData}. */
export const sshsigBlob = (key: SshPublicKey, namespace: string, signature: Uint8Array): Buffer =>
  Buffer.concat([...blobFields(key, namespace), sshString(Buffer.concat([sshString(ED25519), sshString(signature)]))])

/**
 * {@link signedData} and {@link sshsigBlob} for one key and namespace with their fixed parts
 * encoded once: each signature then only writes its SHA-512 or its 64 bytes into a buffer of the
 * right size (the bytes are the same; a test compares them).
 */
export interface SshsigFrame {
  readonly data: (message: Uint8Array) => Buffer
  readonly blob: (signature: Uint8Array) => Buffer
}

/** The frame of SSHSIG blobs by `key` in `namespace`. */
export const sshsigFrame = (key: SshPublicKey, namespace: string): SshsigFrame => {
  const dataHead = Buffer.concat([...dataFields(namespace), uint32(64)])
  const blobHead = Buffer.concat([
    ...blobFields(key, namespace),
    uint32(4 + ED25519.length + 4 + 64),
    sshString(ED25519),
    uint32(64)
  ])
  return {
    data: (message) => {
      const out = Buffer.allocUnsafe(dataHead.length + 64)
      dataHead.copy(out, 0)
      hash('sha512', message, 'buffer').copy(out, dataHead.length)
      return out
    },
    blob: (signature) => {
      if (signature.length !== 64) return sshsigBlob(key, namespace, signature)
      const out = Buffer.allocUnsafe(blobHead.length + 64)
      blobHead.copy(out, 0)
      out.set(signature, blobHead.length)
      return out
    }
  }
}

/** The armored form `ssh-keygen -Y sign` writes (base64 in lines of 70). */
export const armor = (blob: Buffer): string => {
  const b64 = blob.toString('base64')
  const lines: string[] = []
  for (let i = 0; i < b64.length; i += 70) lines.push(b64.slice(i, i + 70))
  return `${ARMOR_BEGIN}\n${lines.join('\n')}\n${ARMOR_END}\n`
}

/** A decoded SSHSIG: who signed, for which namespace, the raw Ed25519 signature. */
export interface SshSig {
  readonly key: SshPublicKey
  readonly namespace: string
  readonly signature: Buffer
}

type SigFailure = Failure<'SIGNATURE_INVALID'>
const sigInvalid = (message: string): E.Either<SigFailure, never> => E.left(failure('SIGNATURE_INVALID', message))

/** Decodes an SSHSIG blob (version 1, sha512 or sha256, an Ed25519 key). */
export const decodeSshsig = (blob: Buffer): E.Either<SigFailure, SshSig & { readonly hashAlg: string }> => {
  const r = new WireReader(blob)
  if (!MAGIC.equals(r.raw(6) ?? Buffer.alloc(0))) return sigInvalid('not an SSHSIG signature (no SSHSIG magic)')
  if (r.u32() !== 1) return sigInvalid('SSHSIG version is not 1')
  const pk = r.string()
  const namespace = r.string()?.toString('utf8')
  const reserved = r.string()
  const hashAlg = r.string()?.toString('latin1')
  const sig = r.string()
  if (pk === undefined || namespace === undefined || reserved === undefined || hashAlg === undefined || !sig)
    return sigInvalid('the SSHSIG signature is truncated')
  if (!r.done) return sigInvalid('the SSHSIG signature has bytes after its end')
  if (hashAlg !== 'sha512' && hashAlg !== 'sha256') return sigInvalid(`unknown SSHSIG hash algorithm ${hashAlg}`)
  const key = publicKeyFromBlob(pk)
  if (E.isLeft(key)) return sigInvalid(key.left.message)
  const s = new WireReader(sig)
  const sigType = s.string()?.toString('latin1')
  const raw = s.string()
  if (sigType !== ED25519 || raw === undefined || raw.length !== 64 || !s.done)
    return sigInvalid('the SSHSIG signature is not an Ed25519 signature')
  return E.right({ key: key.right, namespace, signature: Buffer.from(raw), hashAlg })
}

/** Reads the armored form (any line width, surrounding whitespace allowed). */
export const dearmor = (text: string): E.Either<SigFailure, Buffer> => {
  const t = text.trim()
  if (!t.startsWith(ARMOR_BEGIN) || !t.endsWith(ARMOR_END))
    return sigInvalid(
      'an SSH signature is armored between -----BEGIN SSH SIGNATURE----- and -----END SSH SIGNATURE-----'
    )
  const body = t.slice(ARMOR_BEGIN.length, t.length - ARMOR_END.length).replace(/\s+/g, '')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return sigInvalid('the SSH signature is not base64')
  return E.right(Buffer.from(body, 'base64'))
}

/**
 * Checks an SSHSIG blob over `message` in `namespace`: the decoded signature with its key when the
 * Ed25519 signature holds, else SIGNATURE_INVALID saying why.
 */
export const verifySshsig = (blob: Buffer, namespace: string, message: Uint8Array): E.Either<SigFailure, SshSig> => {
  const d = decodeSshsig(blob)
  if (E.isLeft(d)) return d
  if (d.right.namespace !== namespace)
    return sigInvalid(`the signature is for namespace ${d.right.namespace}, not ${namespace}`)
  const digest = hash(d.right.hashAlg, message, 'buffer')
  const data = Buffer.concat([
    MAGIC,
    sshString(namespace),
    sshString(''),
    sshString(d.right.hashAlg),
    sshString(digest)
  ])
  let ok = false
  try {
    ok = cryptoVerify(null, data, publicKeyObject(d.right.key), d.right.signature)
  } catch {
    ok = false
  }
  if (!ok) return sigInvalid('the Ed25519 signature does not match the signed data')
  return E.right({ key: d.right.key, namespace: d.right.namespace, signature: d.right.signature })
}
