import { unsafeBagPath } from '../../domain/bag-paths.js'
import type { ManifestEntry, Report } from './bag-tags.js'

const SYSTEM_FILES = new Set(['.ds_store', 'thumbs.db', 'desktop.ini'])

export interface ParsedManifest {
  readonly name: string
  readonly algorithm: string
  readonly tag: boolean
  readonly entries: readonly ManifestEntry[]
}

interface Matched {
  /** Per present file, the algorithms its manifests need. */
  readonly needed: Map<string, Set<string>>
  readonly checks: Array<{ manifest: string; algorithm: string; entry: ManifestEntry; file: string }>
  /** Payload paths the first payload manifest lists, present or tolerably absent. */
  readonly listedPayload: Set<string>
}

/**
 * Matches every manifest entry to a file of the bag, and every payload file to the payload
 * manifests: maps and sets keyed by the path, its NFC form and its lower-case form, so each entry
 * and each file costs one lookup (linear in files and lines).
 */
export const matchManifests = (
  parsed: readonly ParsedManifest[],
  files: ReadonlyMap<string, number>,
  specials: ReadonlySet<string>,
  toFetch: ReadonlySet<string>,
  isV1: boolean,
  error: Report,
  warn: Report
): Matched => {
  const firstPayload = parsed.find((p) => !p.tag)
  const payloadFiles = [...files.keys()].filter((f) => f.startsWith('data/'))
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
  const checks: Array<{ manifest: string; algorithm: string; entry: ManifestEntry; file: string }> = []
  /** Payload paths the first payload manifest lists, present or tolerably absent. */
  const listedPayload = new Set<string>()
  for (const m of parsed) {
    const seen = new Map<string, string>()
    const seenNfc = new Map<string, string>()
    const seenLower = new Set<string>()
    for (const e of m.entries) {
      const unsafe = unsafeBagPath(e.path)
      if (unsafe !== null) {
        error(
          'MANIFEST_PATH_OUT_OF_SCOPE',
          `${m.name} line ${e.line}: ${unsafe} (${JSON.stringify(e.path.slice(0, 80))})`,
          m.name
        )
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
        if (before !== e.checksum)
          error('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice with different checksums`, m.name)
        else if (isV1)
          error('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice (not allowed in BagIt 1.0)`, m.name)
        else warn('MANIFEST_DUPLICATE_ENTRY', `${m.name} lists ${e.path} twice with the same checksum`, m.name)
        continue
      }
      seen.set(e.path, e.checksum)
      const normalized = e.path.normalize('NFC')
      seenLower.add(e.path.toLowerCase())
      if (m === firstPayload) listedPayload.add(normalized.toLowerCase())
      const sameNfc = seenNfc.get(normalized)
      if (sameNfc !== undefined && sameNfc !== e.path)
        warn('NORMALIZATION_DUPLICATE', `${m.name} lists one name in two Unicode normalizations: ${e.path}`, m.name)
      seenNfc.set(normalized, e.path)
      const file: string | undefined = files.has(e.path) ? e.path : undefined
      if (file === undefined) {
        const byNfc = nfc.get(normalized)
        const byCase = lower.get(e.path.toLowerCase())
        const base = e.path.slice(e.path.lastIndexOf('/') + 1).toLowerCase()
        if (byNfc !== undefined)
          warn('NORMALIZATION_ONLY_MATCH', `${e.path} exists only in another Unicode normalization`, e.path)
        else if (byCase !== undefined)
          warn('CASE_ONLY_MATCH', `${e.path} exists only with different letter case (${byCase})`, e.path)
        else if (SYSTEM_FILES.has(base))
          warn('SYSTEM_FILE_LISTED', `${e.path} is an operating system file listed in ${m.name} but absent`, e.path)
        else if (toFetch.has(e.path))
          warn('FILE_TO_BE_FETCHED', `${e.path} is not present; fetch.txt says where to fetch it`, e.path)
        else if (!specials.has(e.path))
          error(
            m.tag ? 'TAG_FILE_MISSING' : 'PAYLOAD_FILE_MISSING',
            `${m.name} lists ${e.path}, which does not exist`,
            e.path
          )
        continue
      }
      need(file, m.algorithm)
      checks.push({ manifest: m.name, algorithm: m.algorithm, entry: e, file })
    }
    if (!m.tag) {
      // Sets keyed by the path, its NFC form and its lower-case form: one lookup per payload file.
      for (const f of payloadFiles) {
        if (!seen.has(f) && !seenNfc.has(f.normalize('NFC')) && !seenLower.has(f.toLowerCase())) {
          error('PAYLOAD_FILE_NOT_IN_MANIFEST', `${f} is in data/ but not listed in ${m.name}`, f)
        }
      }
    }
  }
  return { needed, checks, listedPayload }
}

/**
 * Every file fetch.txt names must be listed in every payload manifest (RFC 8493 2.2.3): one that
 * is not can be neither fetched into a complete bag nor checked.
 */
export const fetchNotListed = (
  parsed: readonly ParsedManifest[],
  toFetch: ReadonlySet<string>,
  error: Report
): void => {
  if (toFetch.size === 0) return
  for (const m of parsed) {
    if (m.tag) continue
    const listed = new Set(m.entries.map((e) => e.path))
    for (const f of toFetch)
      if (!listed.has(f))
        error(
          'FETCH_NOT_IN_MANIFEST',
          `fetch.txt names ${f}, which ${m.name} does not list (every file to fetch must be listed in every payload manifest)`,
          'fetch.txt'
        )
  }
}
