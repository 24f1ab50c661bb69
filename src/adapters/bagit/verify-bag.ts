/**
 * A BagIt bag verifier (RFC 8493 for version 1.0, and the 0.97 drafts), checked against the
 * Library of Congress conformance suite. It reads a bag directory and reports coded findings:
 * errors make a bag invalid, warnings describe a valid bag that deviates from good practice.
 */
import { promises as fsp, createReadStream, readFileSync, statSync } from 'node:fs'
import { createHash, getHashes, type Hash } from 'node:crypto'
import * as path from 'node:path'
import { decodeManifestPath, unsafeBagPath } from '../../domain/bag-paths.js'
import { errnoOf } from '../fs-util.js'

export type BagSeverity = 'error' | 'warning'

export interface BagFinding {
  readonly code: string
  readonly severity: BagSeverity
  readonly message: string
  readonly path?: string
}

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

const ALGORITHMS = new Set(['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'].filter((a) => getHashes().includes(a)))
const SYSTEM_FILES = new Set(['.ds_store', 'thumbs.db', 'desktop.ini'])

const splitLines = (text: string): string[] => {
  const lines = text.split(/\r\n|\r|\n/)
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** Every regular file under `root` (bag-relative, '/'-separated); links and specials are findings. */
const listFiles = async (root: string, findings: BagFinding[]): Promise<Map<string, number>> => {
  const out = new Map<string, number>()
  const walk = async (rel: string): Promise<void> => {
    for (const ent of await fsp.readdir(path.join(root, rel), { withFileTypes: true })) {
      const r = rel === '' ? ent.name : `${rel}/${ent.name}`
      if (ent.isDirectory()) await walk(r)
      else if (ent.isFile()) out.set(r, statSync(path.join(root, r)).size)
      else findings.push({ code: 'SPECIAL_FILE', severity: 'error', message: `${r} is not a regular file or directory`, path: r })
    }
  }
  await walk('')
  return out
}

interface Entry {
  readonly checksum: string
  readonly path: string
  readonly line: number
}

const parseManifest = (text: string, name: string, findings: BagFinding[], warn: (code: string, message: string, p?: string) => void): Entry[] => {
  const entries: Entry[] = []
  splitLines(text).forEach((line, i) => {
    if (line.trim() === '') return
    const m = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line)
    if (m === null || m[1] === undefined || m[2] === undefined) {
      findings.push({ code: 'MANIFEST_LINE_INVALID', severity: 'error', message: `${name} line ${i + 1} is not "checksum path"`, path: name })
      return
    }
    let p = m[2]
    if (p.startsWith('*')) {
      warn('MD5SUM_STYLE_PATH', `${name} line ${i + 1} marks the path binary ("*"), as md5sum does`, name)
      p = p.slice(1)
    }
    if (p.startsWith('./')) {
      warn('RELATIVE_PATH_PREFIX', `${name} line ${i + 1} starts its path with "./"`, name)
      p = p.slice(2)
    }
    entries.push({ checksum: m[1].toLowerCase(), path: decodeManifestPath(p), line: i + 1 })
  })
  return entries
}

/** Hashes a file with several algorithms in one read (small files in one call). */
const hashFile = async (file: string, algorithms: readonly string[], size: number): Promise<Map<string, string>> => {
  const hashes: Array<[string, Hash]> = algorithms.map((a) => [a, createHash(a)])
  if (size <= 4 << 20) {
    const bytes = readFileSync(file)
    return new Map(hashes.map(([a, h]) => [a, h.update(bytes).digest('hex')]))
  }
  await new Promise<void>((resolve, reject) => {
    const s = createReadStream(file, { highWaterMark: 1 << 20 })
    s.on('data', (chunk) => {
      for (const [, h] of hashes) h.update(chunk)
    })
    s.on('end', () => resolve())
    s.on('error', reject)
  })
  return new Map(hashes.map(([a, h]) => [a, h.digest('hex')]))
}

/** Verifies the bag at `root`. Never throws for a bad bag; IO errors other than missing files propagate. */
export const verifyBagDir = async (root: string): Promise<BagReport> => {
  const findings: BagFinding[] = []
  const error = (code: string, message: string, p?: string): void => {
    findings.push({ code, severity: 'error', message, ...(p === undefined ? {} : { path: p }) })
  }
  const warn = (code: string, message: string, p?: string): void => {
    findings.push({ code, severity: 'warning', message, ...(p === undefined ? {} : { path: p }) })
  }
  const empty = (version: string | null, encoding: string | null): BagReport => ({ valid: false, version, encoding, info: [], payload: { files: 0, bytes: 0 }, findings, checksums: new Map() })

  // bagit.txt: exactly the version and encoding declarations, UTF-8 without a BOM.
  let declaration: Buffer
  try {
    declaration = await fsp.readFile(path.join(root, 'bagit.txt'))
  } catch (e) {
    if (errnoOf(e) === 'ENOENT' || errnoOf(e) === 'ENOTDIR') {
      error('BAGIT_TXT_MISSING', 'bagit.txt is missing')
      return empty(null, null)
    }
    throw e
  }
  if (declaration[0] === 0xef && declaration[1] === 0xbb && declaration[2] === 0xbf) {
    error('BAGIT_TXT_INVALID', 'bagit.txt starts with a byte order mark', 'bagit.txt')
    return empty(null, null)
  }
  let version: string | null = null
  let encoding: string | null = null
  for (const line of splitLines(declaration.toString('utf8'))) {
    const m = /^(BagIt-Version|Tag-File-Character-Encoding): (.*?)\s*$/.exec(line)
    if (m === null) {
      error('BAGIT_TXT_INVALID', `bagit.txt has an invalid line: ${JSON.stringify(line.slice(0, 80))}`, 'bagit.txt')
      continue
    }
    if (m[1] === 'BagIt-Version') version = m[2] ?? null
    else encoding = m[2] ?? null
  }
  if (version === null || !/^\d+\.\d+$/.test(version)) error('BAGIT_TXT_INVALID', `BagIt-Version is missing or not "major.minor": ${JSON.stringify(version)}`, 'bagit.txt')
  if (encoding === null) error('BAGIT_TXT_INVALID', 'Tag-File-Character-Encoding is missing', 'bagit.txt')
  if (findings.some((f) => f.severity === 'error')) return empty(version, encoding)
  const isV1 = Number((version ?? '0').split('.')[0]) >= 1
  const label = (encoding ?? 'utf-8').toLowerCase()
  try {
    new TextDecoder(label)
  } catch {
    error('TAG_ENCODING_UNSUPPORTED', `tag file encoding ${JSON.stringify(encoding)} is not supported`, 'bagit.txt')
    return empty(version, encoding)
  }
  /** Decodes tag file bytes; plain "UTF-16" follows the byte order mark (big-endian without one). */
  const decode = (bytes: Buffer): string => {
    let l = label
    if (l === 'utf-16' || l === 'utf16') l = bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : 'utf-16be'
    return new TextDecoder(l, { fatal: true }).decode(bytes)
  }
  const readTag = async (name: string): Promise<string | null> => {
    try {
      return decode(await fsp.readFile(path.join(root, name)))
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return null
      if (e instanceof TypeError) {
        error('TAG_FILE_UNDECODABLE', `${name} is not valid ${encoding ?? ''}`, name)
        return null
      }
      throw e
    }
  }

  const files = await listFiles(root, findings)
  const payloadFiles = [...files.keys()].filter((f) => f.startsWith('data/'))
  const payloadBytes = payloadFiles.reduce((s, f) => s + (files.get(f) ?? 0), 0)
  const topLevel = [...files.keys()].filter((f) => !f.includes('/'))
  const manifests = topLevel.map((f) => /^(tag)?manifest-([A-Za-z0-9]+)\.txt$/.exec(f)).filter((m): m is RegExpExecArray => m !== null)

  // fetch.txt: entries to be fetched must name safe paths under data/.
  const toFetch = new Set<string>()
  const fetchText = await readTag('fetch.txt')
  if (fetchText !== null) {
    splitLines(fetchText).forEach((line, i) => {
      if (line.trim() === '') return
      const m = /^(\S+)[ \t]+(\d+|-)[ \t]+(.+)$/.exec(line)
      if (m === null || m[3] === undefined) return error('FETCH_LINE_INVALID', `fetch.txt line ${i + 1} is not "url length path"`, 'fetch.txt')
      const p = decodeManifestPath(m[3])
      const unsafe = unsafeBagPath(p)
      if (unsafe !== null || !p.startsWith('data/')) return error('FETCH_PATH_OUT_OF_SCOPE', `fetch.txt line ${i + 1} names a path outside data/ (${unsafe ?? 'not under data/'})`, 'fetch.txt')
      toFetch.add(p)
    })
  }

  // Parse every manifest, then hash each listed or payload file once with all needed algorithms.
  const parsed: Array<{ name: string; algorithm: string; tag: boolean; entries: Entry[] }> = []
  for (const m of manifests) {
    const name = m[0]
    const algorithm = (m[2] ?? '').toLowerCase()
    const tag = m[1] !== undefined
    if (!ALGORITHMS.has(algorithm)) {
      warn('UNSUPPORTED_ALGORITHM', `${name} uses ${algorithm}, which this verifier cannot compute; it was not checked`, name)
      continue
    }
    const text = await readTag(name)
    if (text === null) continue
    parsed.push({ name, algorithm, tag, entries: parseManifest(text, name, findings, warn) })
  }
  if (!parsed.some((p) => !p.tag)) error('MANIFEST_MISSING', 'the bag has no payload manifest with a supported algorithm')

  const needed = new Map<string, Set<string>>()
  const need = (p: string, algorithm: string): void => {
    const s = needed.get(p) ?? new Set<string>()
    s.add(algorithm)
    needed.set(p, s)
  }
  const nfc = new Map<string, string>()
  const lower = new Map<string, string>()
  for (const f of files.keys()) {
    nfc.set(f.normalize('NFC'), f)
    lower.set(f.toLowerCase(), f)
  }
  const checks: Array<{ manifest: string; algorithm: string; entry: Entry; file: string }> = []
  /** Payload paths the first payload manifest lists, present or tolerably absent. */
  const listedPayload = new Set<string>()
  for (const m of parsed) {
    const seen = new Map<string, string>()
    const seenNfc = new Map<string, string>()
    for (const e of m.entries) {
      const unsafe = unsafeBagPath(e.path)
      if (unsafe !== null) {
        error('MANIFEST_PATH_OUT_OF_SCOPE', `${m.name} line ${e.line}: ${unsafe} (${JSON.stringify(e.path.slice(0, 80))})`, m.name)
        continue
      }
      if (!m.tag && !e.path.startsWith('data/')) {
        error('MANIFEST_PATH_OUT_OF_SCOPE', `${m.name} line ${e.line} lists ${e.path}, which is not in data/`, m.name)
        continue
      }
      if (m.tag && e.path.startsWith('data/')) {
        error('MANIFEST_PATH_OUT_OF_SCOPE', `${m.name} line ${e.line} lists payload file ${e.path}`, m.name)
        continue
      }
      const before = seen.get(e.path)
      if (before !== undefined) {
        if (before !== e.checksum) error('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice with different checksums`, m.name)
        else if (isV1) error('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice (not allowed in BagIt 1.0)`, m.name)
        else warn('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice with the same checksum`, m.name)
        continue
      }
      seen.set(e.path, e.checksum)
      if (!m.tag && m === parsed.find((x) => !x.tag)) listedPayload.add(e.path.normalize('NFC').toLowerCase())
      const normalized = e.path.normalize('NFC')
      const sameNfc = seenNfc.get(normalized)
      if (sameNfc !== undefined && sameNfc !== e.path) warn('NORMALIZATION_DUPLICATE', `${m.name} lists one name in two Unicode normalizations: ${e.path}`, m.name)
      seenNfc.set(normalized, e.path)
      let file: string | undefined = files.has(e.path) ? e.path : undefined
      if (file === undefined) {
        const byNfc = nfc.get(normalized)
        const byCase = lower.get(e.path.toLowerCase())
        const base = e.path.slice(e.path.lastIndexOf('/') + 1).toLowerCase()
        if (byNfc !== undefined) warn('NORMALIZATION_ONLY_MATCH', `${e.path} exists only in another Unicode normalization`, e.path)
        else if (byCase !== undefined) warn('CASE_ONLY_MATCH', `${e.path} exists only with different letter case (${byCase})`, e.path)
        else if (SYSTEM_FILES.has(base)) warn('SYSTEM_FILE_LISTED', `${e.path} is an operating system file listed in ${m.name} but absent`, e.path)
        else if (toFetch.has(e.path)) warn('FILE_TO_BE_FETCHED', `${e.path} is not present; fetch.txt says where to fetch it`, e.path)
        else error(m.tag ? 'TAG_FILE_MISSING' : 'PAYLOAD_FILE_MISSING', `${m.name} lists ${e.path}, which does not exist`, e.path)
        continue
      }
      need(file, m.algorithm)
      checks.push({ manifest: m.name, algorithm: m.algorithm, entry: e, file })
    }
    if (!m.tag) {
      for (const f of payloadFiles) {
        if (!seen.has(f) && ![...seen.keys()].some((k) => k.normalize('NFC') === f.normalize('NFC') || k.toLowerCase() === f.toLowerCase())) {
          error('PAYLOAD_FILE_NOT_IN_MANIFEST', `${f} is in data/ but not listed in ${m.name}`, f)
        }
      }
    }
  }
  const checksums = new Map<string, Map<string, string>>()
  for (const [file, algorithms] of [...needed.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const sums = await hashFile(path.join(root, file), [...algorithms], files.get(file) ?? 0)
    for (const [a, sum] of sums) {
      const byAlgo = checksums.get(a) ?? new Map<string, string>()
      byAlgo.set(file, sum)
      checksums.set(a, byAlgo)
    }
  }
  for (const c of checks) {
    if (checksums.get(c.algorithm)?.get(c.file) !== c.entry.checksum) {
      error(c.manifest.startsWith('tag') ? 'TAG_CHECKSUM_MISMATCH' : 'CHECKSUM_MISMATCH', `${c.file} does not match its ${c.algorithm} checksum in ${c.manifest}`, c.file)
    }
  }

  // bag-info.txt (optional): labels, continuation lines, and Payload-Oxum.
  const info: Array<[string, string]> = []
  const infoText = await readTag('bag-info.txt')
  if (infoText !== null) {
    for (const line of splitLines(infoText)) {
      if (/^[ \t]/.test(line) && info.length > 0) {
        const last = info[info.length - 1]
        if (last !== undefined) last[1] = `${last[1]} ${line.trim()}`
        continue
      }
      const m = /^([^:]+?)\s*:\s*(.*)$/.exec(line)
      if (m !== null && m[1] !== undefined) info.push([m[1].trim(), (m[2] ?? '').trim()])
      else if (line.trim() !== '') warn('BAG_INFO_LINE_INVALID', `bag-info.txt has a line without a label: ${JSON.stringify(line.slice(0, 60))}`, 'bag-info.txt')
    }
    const oxum = info.find(([k]) => k === 'Payload-Oxum')?.[1]
    if (oxum !== undefined && toFetch.size === 0) {
      const m = /^(\d+)\.(\d+)$/.exec(oxum)
      if (m === null) error('PAYLOAD_OXUM_INVALID', `Payload-Oxum ${JSON.stringify(oxum)} is not "octets.files"`, 'bag-info.txt')
      else if (Number(m[1]) === payloadBytes && Number(m[2]) === listedPayload.size && findings.some((f) => f.code === 'SYSTEM_FILE_LISTED')) {
        warn('PAYLOAD_OXUM_COUNTS_ABSENT_FILES', `Payload-Oxum ${oxum} counts listed system files that are absent`, 'bag-info.txt')
      } else if (Number(m[1]) !== payloadBytes || Number(m[2]) !== payloadFiles.length) {
        error('PAYLOAD_OXUM_MISMATCH', `Payload-Oxum says ${oxum}, the payload is ${payloadBytes}.${payloadFiles.length}`, 'bag-info.txt')
      }
    }
  }
  return {
    valid: !findings.some((f) => f.severity === 'error'),
    version,
    encoding,
    info,
    payload: { files: payloadFiles.length, bytes: payloadBytes },
    findings,
    checksums
  }
}
