/**
 * git's and OpenSSH's `allowed_signers` file (ssh-keygen(1), "ALLOWED SIGNERS"): one signer a
 * line, `principals [options] keytype base64-key [comment]`, with the options `namespaces=`,
 * `valid-after=` and `valid-before=`; and the question a verifier asks of it: may this key sign as
 * this principal, in this namespace, at this time? Pure: the caller reads the file.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import { fingerprintOf, parsePublicKeyLine, type SshPublicKey } from './ssh-sig.js'

/** One line of an allowed_signers file. */
export interface AllowedSigner {
  /** Its line number (1-based), for messages. */
  readonly line: number
  /** The principal patterns (`*` and `?` wildcards, `!` negation). */
  readonly principals: readonly string[]
  /** The namespace patterns the key may sign in; all namespaces when absent. */
  readonly namespaces?: readonly string[]
  /** Milliseconds since the epoch before which the key is not valid. */
  readonly validAfter?: number
  /** Milliseconds since the epoch after which the key is no longer valid. */
  readonly validBefore?: number
  /** The key's `SHA256:` fingerprint; null for a key type signers cannot have (kept, never matched). */
  readonly fingerprint: string | null
  readonly key: SshPublicKey | null
}

type TrustFailure = Failure<'TRUST_INVALID'>
const bad = (line: number, message: string): TrustFailure =>
  failure('TRUST_INVALID', `allowed_signers line ${line}: ${message}`, { line })

/** Splits at every character `sep` accepts outside double quotes (the pieces between, empty ones too). */
const splitUnquoted = (text: string, sep: (ch: string) => boolean): string[] => {
  const out: string[] = []
  let cur = ''
  let quoted = false
  for (const ch of text) {
    if (ch === '"') quoted = !quoted
    if (!quoted && sep(ch)) {
      out.push(cur)
      cur = ''
    } else cur += ch
  }
  out.push(cur)
  return out
}

/** Splits at whitespace outside double quotes. */
const tokens = (text: string): string[] => splitUnquoted(text, (ch) => /\s/.test(ch)).filter((x) => x !== '')

const unquote = (s: string): string => (s.length >= 2 && s.startsWith('"') && s.endsWith('"') ? s.slice(1, -1) : s)

/** Splits at commas outside double quotes. */
const options = (text: string): string[] => splitUnquoted(text, (ch) => ch === ',')

/**
 * `YYYYMMDD[Z]` or `YYYYMMDDHHMM[SS][Z]`: UTC with a trailing Z, else the system's time zone, as
 * OpenSSH reads it.
 */
export const parseSignerTime = (text: string): number | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2})?)?(Z?)$/.exec(text)
  if (m === null) return undefined
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4] ?? '0', m[5] ?? '0', m[6] ?? '0'].map(Number) as number[]
  const ms =
    m[7] === 'Z'
      ? Date.UTC(y as number, (mo as number) - 1, d, h, mi, s)
      : new Date(y as number, (mo as number) - 1, d, h, mi, s).getTime()
  return Number.isFinite(ms) ? ms : undefined
}

const KEY_TYPE = /^(ssh-|ecdsa-|sk-|rsa-)/

const parseLine = (text: string, n: number): E.Either<TrustFailure, AllowedSigner | null> => {
  const trimmed = text.trim()
  if (trimmed === '' || trimmed.startsWith('#')) return E.right(null)
  const t = tokens(trimmed)
  const principals = unquote(t[0] ?? '')
    .split(',')
    .filter((p) => p !== '')
  if (principals.length === 0) return E.left(bad(n, 'no principals'))
  const hasOptions = t[1] !== undefined && !KEY_TYPE.test(t[1])
  const [type, b64] = hasOptions ? [t[2], t[3]] : [t[1], t[2]]
  if (type === undefined || b64 === undefined) return E.left(bad(n, 'expected "principals [options] keytype key"'))
  let signer: { -readonly [K in keyof AllowedSigner]: AllowedSigner[K] } = {
    line: n,
    principals,
    fingerprint: null,
    key: null
  }
  for (const opt of hasOptions ? options(t[1] as string) : []) {
    const eq = opt.indexOf('=')
    const name = (eq < 0 ? opt : opt.slice(0, eq)).toLowerCase()
    const value = eq < 0 ? '' : unquote(opt.slice(eq + 1))
    if (name === 'cert-authority')
      return E.left(
        bad(n, 'cert-authority (a certificate authority) is not supported: list each signer with its own key')
      )
    if (name === 'namespaces') signer = { ...signer, namespaces: value.split(',').filter((x) => x !== '') }
    else if (name === 'valid-after' || name === 'valid-before') {
      const ms = parseSignerTime(value)
      if (ms === undefined) return E.left(bad(n, `${name}="${value}" is not YYYYMMDD[HHMM[SS]][Z]`))
      signer = name === 'valid-after' ? { ...signer, validAfter: ms } : { ...signer, validBefore: ms }
    } else return E.left(bad(n, `unknown option ${name}`))
  }
  if (type !== 'ssh-ed25519') return E.right(signer)
  const key = parsePublicKeyLine(`${type} ${b64}`)
  if (E.isLeft(key)) return E.left(bad(n, key.left.message))
  return E.right({ ...signer, key: key.right, fingerprint: fingerprintOf(key.right) })
}

/** Parses an allowed_signers file; a line it cannot read is TRUST_INVALID naming the line. */
export const parseAllowedSigners = (text: string): E.Either<TrustFailure, readonly AllowedSigner[]> => {
  const out: AllowedSigner[] = []
  const lines = text.split(/\r?\n/)
  for (let i = 0; i < lines.length; i++) {
    const r = parseLine(lines[i] as string, i + 1)
    if (E.isLeft(r)) return r
    if (r.right !== null) out.push(r.right)
  }
  return E.right(out)
}

const glob = (pattern: string, value: string): boolean => {
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.')
  return new RegExp(`^${re}$`, 's').test(value)
}

/** OpenSSH's pattern-list match: some pattern matches and no negated (`!`) pattern does. */
export const matchPatternList = (patterns: readonly string[], value: string): boolean => {
  let matched = false
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (glob(p.slice(1), value)) return false
    } else if (glob(p, value)) matched = true
  }
  return matched
}

/** Why a key may not sign, in words for a finding; null when it may. */
export const signerRefusal = (
  signers: readonly AllowedSigner[],
  query: { readonly fingerprint: string; readonly principal: string; readonly namespace: string; readonly at: number }
): string | null => {
  const lines = signers.filter((s) => s.fingerprint === query.fingerprint)
  if (lines.length === 0) return `key ${query.fingerprint} is not in the trust file`
  const named = lines.filter((s) => matchPatternList(s.principals, query.principal))
  if (named.length === 0) return `key ${query.fingerprint} is not listed for principal ${query.principal}`
  const reasons: string[] = []
  for (const s of named) {
    if (s.namespaces !== undefined && !matchPatternList(s.namespaces, query.namespace))
      reasons.push(`line ${s.line} does not allow namespace ${query.namespace}`)
    else if (s.validAfter !== undefined && query.at < s.validAfter)
      reasons.push(`line ${s.line}: signed before valid-after ${new Date(s.validAfter).toISOString()}`)
    else if (s.validBefore !== undefined && query.at > s.validBefore)
      reasons.push(`line ${s.line}: signed after valid-before ${new Date(s.validBefore).toISOString()}`)
    else return null
  }
  return reasons.join('; ')
}
