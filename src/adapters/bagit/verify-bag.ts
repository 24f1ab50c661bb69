/**
 * A BagIt bag verifier (RFC 8493 for version 1.0, and the 0.97 drafts), checked against the
 * Library of Congress conformance suite. It reads a bag directory and reports coded findings:
 * errors make a bag invalid, warnings describe a valid bag that deviates from good practice.
 *
 * Hostile bags: only regular files are read (never through a link, never a FIFO or device), tag
 * files are read up to a bound, and every lookup is a map or set keyed by the path (or its
 * Unicode-normalized or lower-case form), so the time is linear in the number of files and lines.
 */
import { promises as fsp, statSync } from 'node:fs'
import { createHash, getHashes, type Hash } from 'node:crypto'
import * as path from 'node:path'
import { errnoOf } from '../fs-util.js'
import { isFileRefusal, openRegular, readRegular } from '../regular-file.js'
import {
  TAG_LIMITS,
  parseBagInfo,
  parseDeclaration,
  parseFetch,
  parseManifest,
  type BagFinding,
  type Report
} from './bag-tags.js'
import { fetchNotListed, matchManifests, type ParsedManifest } from './match-manifests.js'
import { optional } from '../../optional.js'

export type { BagFinding, BagSeverity } from './bag-tags.js'

/**
 * What verifying a bag as BagIt 1.0 found: its version and encoding, bag-info.txt's labels, the payload, and every finding.
 * @category transport
 */
export interface BagReport {
  readonly valid: boolean
  readonly version: string | null
  readonly encoding: string | null
  readonly info: ReadonlyArray<readonly [string, string]>
  readonly payload: { readonly files: number; readonly bytes: number }
  readonly findings: readonly BagFinding[]
  /** Checksums computed, by algorithm then bag-relative path (payload and tag files). */
  readonly checksums: ReadonlyMap<string, ReadonlyMap<string, string>>
}

/** Checksums already computed for files of the bag (by an extraction that hashed as it wrote). */
export type KnownChecksums = ReadonlyMap<string, ReadonlyMap<string, string>>

const ALGORITHMS = new Set(
  ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'].filter((a) => getHashes().includes(a))
)

/** Every regular file under `root` (bag-relative, '/'-separated) with its size; links and specials are findings. */
const listFiles = async (
  root: string,
  findings: BagFinding[]
): Promise<{ files: Map<string, number>; specials: Set<string> }> => {
  const files = new Map<string, number>()
  const specials = new Set<string>()
  const walk = async (rel: string): Promise<void> => {
    for (const ent of await fsp.readdir(path.join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? ent.name : `${rel}/${ent.name}`
      if (ent.isDirectory()) await walk(r)
      else if (ent.isFile()) files.set(r, statSync(path.join(root, r)).size)
      else {
        specials.add(r)
        findings.push({
          code: 'SPECIAL_FILE',
          severity: 'error',
          message: `${r} is not a regular file or directory`,
          path: r
        })
      }
    }
  }
  await walk('')
  return { files, specials }
}

/** Hashes a regular file with several algorithms in one read (small files in one call). */
const hashFile = async (file: string, shown: string, algorithms: readonly string[]): Promise<Map<string, string>> => {
  const hashes: Array<[string, Hash]> = algorithms.map((a) => [a, createHash(a)])
  const { fh, size } = await openRegular(file, { shown })
  try {
    const buf = Buffer.allocUnsafe(Math.min(Math.max(size, 1), 1 << 20))
    let pos = 0
    for (
      let n = (await fh.read(buf, 0, buf.length, pos)).bytesRead;
      n > 0;
      n = (await fh.read(buf, 0, buf.length, pos)).bytesRead
    ) {
      for (const [, h] of hashes) h.update(buf.subarray(0, n))
      pos += n
    }
  } finally {
    await fh.close()
  }
  return new Map(hashes.map(([a, h]) => [a, h.digest('hex')]))
}

/**
 * Verifies the bag at `root`. Never throws for a bad bag; IO errors other than missing files
 * propagate. `known` checksums (from an extraction that hashed every file as it wrote it) are
 * used instead of reading those files again.
 */
export const verifyBagDir = async (
  root: string,
  options: { readonly known?: KnownChecksums } = {}
): Promise<BagReport> => {
  const v = startVerification(root)
  const listing = await listBag(v)
  if (listing === null) return unreadable(v, null, null)
  const { files, specials } = listing
  const declaration = await readDeclaration(v, specials)
  if (declaration.decode === null) return unreadable(v, declaration.version, declaration.encoding)
  const { version, encoding } = declaration
  const readTag = tagReader(v, declaration.decode, encoding)
  const isV1 = Number((version ?? '0').split('.')[0]) >= 1
  const payloadFiles = [...files.keys()].filter((f) => f.startsWith('data/'))
  const payloadBytes = payloadFiles.reduce((s, f) => s + (files.get(f) ?? 0), 0)

  // fetch.txt: entries to be fetched must name safe paths under data/.
  const fetchText = await readTag('fetch.txt', TAG_LIMITS.listing)
  const toFetch = fetchText === null ? new Set<string>() : parseFetch(fetchText, v.error)

  // Parse every manifest, then hash each listed or payload file once with all needed algorithms.
  const parsed = await readManifests(v, files, readTag)
  const { needed, checks, listedPayload } = matchManifests(parsed, files, specials, toFetch, isV1, v.error, v.warn)
  fetchNotListed(parsed, toFetch, v.error)
  const checksums = await computeChecksums(v, needed, options.known)
  for (const c of checks) {
    const sum = checksums.get(c.algorithm)?.get(c.file)
    if (sum !== undefined && sum !== c.entry.checksum) {
      v.error(
        c.manifest.startsWith('tag') ? 'TAG_CHECKSUM_MISMATCH' : 'CHECKSUM_MISMATCH',
        `${c.file} does not match its ${c.algorithm} checksum in ${c.manifest}`,
        c.file
      )
    }
  }

  // bag-info.txt (optional): labels, continuation lines, and Payload-Oxum.
  const infoText = await readTag('bag-info.txt', TAG_LIMITS.info)
  const info = infoText === null ? [] : parseBagInfo(infoText, v.warn)
  if (toFetch.size === 0)
    checkOxum(v, info, { bytes: payloadBytes, files: payloadFiles.length, listed: listedPayload.size })
  return {
    valid: !v.findings.some((f) => f.severity === 'error'),
    version,
    encoding,
    info,
    payload: { files: payloadFiles.length, bytes: payloadBytes },
    findings: v.findings,
    checksums
  }
}

/** One verification: the bag's root and the findings reported so far. */
interface Verification {
  readonly root: string
  readonly findings: BagFinding[]
  readonly error: Report
  readonly warn: Report
}

const startVerification = (root: string): Verification => {
  const findings: BagFinding[] = []
  return {
    root,
    findings,
    error: (code, message, p) => {
      findings.push({ code, severity: 'error', message, ...optional('path', p) })
    },
    warn: (code, message, p) => {
      findings.push({ code, severity: 'warning', message, ...optional('path', p) })
    }
  }
}

/** The report of a bag that could not be read as far as its payload. */
const unreadable = (v: Verification, version: string | null, encoding: string | null): BagReport => ({
  valid: false,
  version,
  encoding,
  info: [],
  payload: { files: 0, bytes: 0 },
  findings: v.findings,
  checksums: new Map()
})

/** The bag's files, or null (reported as a missing bagit.txt) when `root` is not a directory. */
const listBag = async (v: Verification): Promise<{ files: Map<string, number>; specials: Set<string> } | null> => {
  try {
    return await listFiles(v.root, v.findings)
  } catch (e) {
    if (errnoOf(e) !== 'ENOENT' && errnoOf(e) !== 'ENOTDIR') throw e
    v.error('BAGIT_TXT_MISSING', 'bagit.txt is missing')
    return null
  }
}

/** A tag file's bytes: null when absent; a link, FIFO, device or oversized file is an error finding. */
const readBytes = async (v: Verification, name: string, maxBytes: number): Promise<Buffer | null> => {
  try {
    return await readRegular(path.join(v.root, name), { maxBytes, shown: name })
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') return null
    if (!isFileRefusal(e)) throw e
    if (!v.findings.some((f) => f.code === 'SPECIAL_FILE' && f.path === name)) {
      v.error(e.failure.code === 'FILE_TOO_LARGE' ? 'TAG_FILE_TOO_LARGE' : 'SPECIAL_FILE', e.failure.message, name)
    }
    return null
  }
}

/** The declared version and encoding, and how tag files decode (null: the bag cannot be read further). */
interface Declaration {
  readonly version: string | null
  readonly encoding: string | null
  readonly decode: ((bytes: Buffer) => string) | null
}

/** bagit.txt: exactly the version and encoding declarations, UTF-8 without a BOM. */
const readDeclaration = async (v: Verification, specials: ReadonlySet<string>): Promise<Declaration> => {
  const declaration = await readBytes(v, 'bagit.txt', TAG_LIMITS.declaration)
  if (declaration === null) {
    if (!specials.has('bagit.txt') && !v.findings.some((f) => f.path === 'bagit.txt'))
      v.error('BAGIT_TXT_MISSING', 'bagit.txt is missing')
    return { version: null, encoding: null, decode: null }
  }
  if (declaration[0] === 0xef && declaration[1] === 0xbb && declaration[2] === 0xbf) {
    v.error('BAGIT_TXT_INVALID', 'bagit.txt starts with a byte order mark', 'bagit.txt')
    return { version: null, encoding: null, decode: null }
  }
  const { version, encoding } = parseDeclaration(declaration.toString('utf8'), v.error)
  if (v.findings.some((f) => f.severity === 'error')) return { version, encoding, decode: null }
  const label = (encoding ?? 'utf-8').toLowerCase()
  try {
    new TextDecoder(label)
  } catch {
    v.error('TAG_ENCODING_UNSUPPORTED', 'the declared tag file encoding is not one this verifier knows', 'bagit.txt')
    return { version, encoding: null, decode: null }
  }
  /** Decodes tag file bytes; plain "UTF-16" follows the byte order mark (big-endian without one). */
  const decode = (bytes: Buffer): string => {
    let l = label
    if (l === 'utf-16' || l === 'utf16') l = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : 'utf-16be'
    return new TextDecoder(l, { fatal: true }).decode(bytes)
  }
  return { version, encoding, decode }
}

/** Reads a tag file as text: null when absent, refused or not in the declared encoding (a finding). */
type TagReader = (name: string, maxBytes: number) => Promise<string | null>

const tagReader =
  (v: Verification, decode: (bytes: Buffer) => string, encoding: string | null): TagReader =>
  async (name, maxBytes) => {
    const bytes = await readBytes(v, name, maxBytes)
    if (bytes === null) return null
    try {
      return decode(bytes)
    } catch {
      v.error('TAG_FILE_UNDECODABLE', `${name} is not valid ${encoding ?? ''}`, name)
      return null
    }
  }

/** Every top-level manifest with a supported algorithm, parsed; a bag needs a payload manifest. */
const readManifests = async (
  v: Verification,
  files: ReadonlyMap<string, number>,
  readTag: TagReader
): Promise<ParsedManifest[]> => {
  const topLevel = [...files.keys()].filter((f) => !f.includes('/'))
  const manifests = topLevel
    .map((f) => /^(tag)?manifest-([A-Za-z0-9]+)\.txt$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
  const parsed: ParsedManifest[] = []
  for (const m of manifests) {
    const name = m[0]
    const algorithm = (m[2] ?? '').toLowerCase()
    const tag = m[1] !== undefined
    if (!ALGORITHMS.has(algorithm)) {
      v.warn(
        'UNSUPPORTED_ALGORITHM',
        `${name} uses ${algorithm}, which this verifier cannot compute; it was not checked`,
        name
      )
      continue
    }
    const text = await readTag(name, TAG_LIMITS.listing)
    if (text === null) continue
    parsed.push({ name, algorithm, tag, entries: parseManifest(text, name, v.error, v.warn) })
  }
  if (!parsed.some((p) => !p.tag))
    v.error('MANIFEST_MISSING', 'the bag has no payload manifest with a supported algorithm')
  return parsed
}

/** The checksums the manifests need, by algorithm then path: each file hashed once, in path order (or taken from `known`). */
const computeChecksums = async (
  v: Verification,
  needed: ReadonlyMap<string, ReadonlySet<string>>,
  known: KnownChecksums | undefined
): Promise<Map<string, Map<string, string>>> => {
  const checksums = new Map<string, Map<string, string>>()
  for (const [file, algorithms] of [...needed.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const given = known?.get(file)
    const missing = [...algorithms].filter((a) => given?.get(a) === undefined)
    let sums: ReadonlyMap<string, string>
    try {
      sums =
        missing.length === 0 && given !== undefined
          ? given
          : await hashFile(path.join(v.root, file), file, [...algorithms])
    } catch (e) {
      // Replaced by a link or a FIFO after it was listed.
      if (!isFileRefusal(e)) throw e
      v.error('SPECIAL_FILE', e.failure.message, file)
      continue
    }
    for (const a of algorithms) {
      const sum = sums.get(a)
      if (sum === undefined) continue
      const byAlgo = checksums.get(a) ?? new Map<string, string>()
      byAlgo.set(file, sum)
      checksums.set(a, byAlgo)
    }
  }
  return checksums
}

/** Payload-Oxum against the payload: its bytes, its files, and the files the payload manifest lists. */
const checkOxum = (
  v: Verification,
  info: ReadonlyArray<readonly [string, string]>,
  payload: { readonly bytes: number; readonly files: number; readonly listed: number }
): void => {
  const oxum = info.find(([k]) => k === 'Payload-Oxum')?.[1]
  if (oxum === undefined) return
  const m = /^(\d+)\.(\d+)$/.exec(oxum)
  if (m === null) v.error('PAYLOAD_OXUM_INVALID', 'Payload-Oxum is not "octets.files"', 'bag-info.txt')
  else if (
    Number(m[1]) === payload.bytes &&
    Number(m[2]) === payload.listed &&
    v.findings.some((f) => f.code === 'SYSTEM_FILE_LISTED')
  ) {
    v.warn(
      'PAYLOAD_OXUM_COUNTS_ABSENT_FILES',
      `Payload-Oxum ${oxum} counts listed system files that are absent`,
      'bag-info.txt'
    )
  } else if (Number(m[1]) !== payload.bytes || Number(m[2]) !== payload.files) {
    v.error(
      'PAYLOAD_OXUM_MISMATCH',
      `Payload-Oxum says ${oxum}, the payload is ${payload.bytes}.${payload.files}`,
      'bag-info.txt'
    )
  }
}
