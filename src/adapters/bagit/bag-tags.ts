/**
 * The tag files of a BagIt bag as text: the declaration (bagit.txt), bag-info.txt, fetch.txt and
 * manifests. Pure parsing: each function takes the decoded text and reports coded findings.
 * Findings name the file and the line, never quote what a line holds beyond the values the format
 * defines (a path, a checksum, a declared version), so a tag file that is something else (a
 * secret, say) is not echoed into a report.
 */
import { decodeManifestPath, unsafeBagPath } from '../../domain/bag-paths.js'

/** @category transport */
export type BagSeverity = 'error' | 'warning'

/**
 * Every code a bag check reports (a literal union, as failure and finding codes are). The
 * severity is the finding's own: some codes are an error in one BagIt version and a warning in
 * another (RFC 8493 section 2.1.3 and the Library of Congress suite's v0.97 bags).
 */
export const BAG_FINDING_CODES = [
  'BAGIT_TXT_MISSING',
  'BAGIT_TXT_INVALID',
  'TAG_ENCODING_UNSUPPORTED',
  'TAG_FILE_UNDECODABLE',
  'TAG_FILE_TOO_LARGE',
  'TAG_FILE_MISSING',
  'TAG_CHECKSUM_MISMATCH',
  'BAG_INFO_LINE_INVALID',
  'BAG_INFO_CASE_LABEL_MISSING',
  'BAG_INFO_MISMATCH',
  'FETCH_LINE_INVALID',
  'FETCH_PATH_OUT_OF_SCOPE',
  'FILE_TO_BE_FETCHED',
  'FETCH_NOT_IN_MANIFEST',
  'MANIFEST_MISSING',
  'MANIFEST_LINE_INVALID',
  'MANIFEST_DUPLICATE_ENTRY',
  'MANIFEST_PATH_OUT_OF_SCOPE',
  'MD5SUM_STYLE_PATH',
  'RELATIVE_PATH_PREFIX',
  'UNSUPPORTED_ALGORITHM',
  'CHECKSUM_MISMATCH',
  'PAYLOAD_FILE_MISSING',
  'PAYLOAD_FILE_NOT_IN_MANIFEST',
  'PAYLOAD_OXUM_INVALID',
  'PAYLOAD_OXUM_MISMATCH',
  'PAYLOAD_OXUM_COUNTS_ABSENT_FILES',
  'NORMALIZATION_DUPLICATE',
  'NORMALIZATION_ONLY_MATCH',
  'CASE_ONLY_MATCH',
  'SYSTEM_FILE_LISTED',
  'SPECIAL_FILE'
] as const

/** A bag finding's code. @category transport */
export type BagFindingCode = (typeof BAG_FINDING_CODES)[number]

/**
 * One finding of a bag check: a stable code, error or warning, a message, and the file it concerns.
 * @category transport
 */
export interface BagFinding {
  readonly code: BagFindingCode
  readonly severity: BagSeverity
  readonly message: string
  readonly path?: string
}

/** Adds a finding (error or warning) about `path`. */
export type Report = (code: BagFindingCode, message: string, path?: string) => void

/** One manifest line: the checksum (lower case), the decoded bag-relative path and its line number. */
export interface ManifestEntry {
  readonly checksum: string
  readonly path: string
  readonly line: number
}

/** Most bytes of each tag file read: bagit.txt is two lines; manifests grow with the payload. */
export const TAG_LIMITS = {
  declaration: 64 << 10,
  info: 4 << 20,
  listing: 512 << 20
} as const

export const splitLines = (text: string): string[] => {
  const lines = text.split(/\r\n|\r|\n/)
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}

/** bagit.txt: exactly the version and encoding declarations (the caller refuses a BOM). */
export const parseDeclaration = (text: string, error: Report): { version: string | null; encoding: string | null } => {
  let version: string | null = null
  let encoding: string | null = null
  splitLines(text).forEach((line, i) => {
    const m = /^(BagIt-Version|Tag-File-Character-Encoding): (.*?)\s*$/.exec(line)
    if (m === null) {
      error(
        'BAGIT_TXT_INVALID',
        `bagit.txt line ${i + 1} is not a BagIt-Version or Tag-File-Character-Encoding declaration`,
        'bagit.txt'
      )
      return
    }
    if (m[1] === 'BagIt-Version') version = m[2] ?? null
    else encoding = m[2] ?? null
  })
  // Only a well-formed version is passed on (and shown): the value of a malformed one is not.
  if (version === null || !/^\d{1,9}\.\d{1,9}$/.test(version)) {
    error('BAGIT_TXT_INVALID', 'BagIt-Version is missing or not "major.minor"', 'bagit.txt')
    version = null
  }
  if (encoding === null) error('BAGIT_TXT_INVALID', 'Tag-File-Character-Encoding is missing', 'bagit.txt')
  return { version, encoding }
}

/** A manifest's lines ("checksum path"); md5sum's "*" and "./" prefixes are tolerated with a warning. */
export const parseManifest = (text: string, name: string, error: Report, warn: Report): ManifestEntry[] => {
  const entries: ManifestEntry[] = []
  splitLines(text).forEach((line, i) => {
    if (line.trim() === '') return
    const m = /^([0-9A-Fa-f]+)[ \t]+(.+)$/.exec(line)
    if (m === null || m[1] === undefined || m[2] === undefined) {
      error('MANIFEST_LINE_INVALID', `${name} line ${i + 1} is not "checksum path"`, name)
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

/** fetch.txt: the payload paths it names (each must be a safe path under data/). */
export const parseFetch = (text: string, error: Report): Set<string> => {
  const toFetch = new Set<string>()
  splitLines(text).forEach((line, i) => {
    if (line.trim() === '') return
    const m = /^(\S+)[ \t]+(\d+|-)[ \t]+(.+)$/.exec(line)
    if (m === null || m[3] === undefined)
      return error('FETCH_LINE_INVALID', `fetch.txt line ${i + 1} is not "url length path"`, 'fetch.txt')
    const p = decodeManifestPath(m[3])
    const unsafe = unsafeBagPath(p)
    if (unsafe !== null || !p.startsWith('data/'))
      return error(
        'FETCH_PATH_OUT_OF_SCOPE',
        `fetch.txt line ${i + 1} names a path outside data/ (${unsafe ?? 'not under data/'})`,
        'fetch.txt'
      )
    toFetch.add(p)
  })
  return toFetch
}

/** bag-info.txt: labels with continuation lines. */
export const parseBagInfo = (text: string, warn: Report): Array<[string, string]> => {
  const info: Array<[string, string]> = []
  splitLines(text).forEach((line, i) => {
    if (/^[ \t]/.test(line) && info.length > 0) {
      const last = info[info.length - 1]
      if (last !== undefined) last[1] = `${last[1]} ${line.trim()}`
      return
    }
    const m = /^([^:]+?)\s*:\s*(.*)$/.exec(line)
    if (m !== null && m[1] !== undefined) info.push([m[1].trim(), (m[2] ?? '').trim()])
    else if (line.trim() !== '')
      warn('BAG_INFO_LINE_INVALID', `bag-info.txt line ${i + 1} has no label`, 'bag-info.txt')
  })
  return info
}
