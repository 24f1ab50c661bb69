/** Shared parts of the source executors: settings, origins, the scan engine and its limits. */
import { failure } from '../../failures/failure.js'
import type { ProjectLimits } from '../../domain/limits.js'
import { extensionOf, underPrefix } from '../../domain/source-paths.js'
import { cutLine } from '../../domain/text-scan.js'
import { FailureError } from '../../failures/error.js'
import { isBinaryBytes, needleHashes, type GitSnapshot, type TreeEntry } from '../../adapters/git/snapshot.js'
import type { Origin } from '../capture.js'

export interface SourceAnalysis {
  readonly enabled: boolean
  readonly context_lines: number
  readonly max_searches: number
  readonly max_matches: number
  readonly max_files: number
  readonly max_blocks: number
  readonly max_total_lines: number
  readonly registration_prefixes: readonly string[]
  /** Path prefixes that hold code: source.context searches and ranks them before the rest (data dumps). */
  readonly code_path_prefixes: readonly string[]
  /** A term of digits only is matched as a whole number (recorded in the captures it applies to). */
  readonly whole_numbers: boolean
}

/**
 * The analysis settings an investigation records as its `source_context` settings, which every
 * source.context capture records again as its `source_analysis` (and verify compares).
 */
export const recordedAnalysis = (a: SourceAnalysis) => ({
  context_lines: a.context_lines,
  max_searches: a.max_searches,
  max_matches: a.max_matches,
  max_files: a.max_files,
  max_blocks: a.max_blocks,
  max_total_lines: a.max_total_lines,
  registration_prefixes: [...a.registration_prefixes],
  code_path_prefixes: [...a.code_path_prefixes]
})

export interface SourceResearch {
  readonly snap: GitSnapshot
  readonly url: string
  readonly extensions: readonly string[]
  readonly limits: ProjectLimits
  readonly analysis: SourceAnalysis
  /** The clock a query's time limit is read from (ms since the epoch). */
  readonly now: () => number
  /** Queries with few hits say what they missed (missed.ts); off to re-derive captures asked before it. */
  readonly missedMatches: boolean
  /** A query whose path_prefix holds no file says so (missed.ts); off to re-derive captures asked before it. */
  readonly emptyScope: boolean
}

export interface OriginFile {
  readonly path: string
  readonly blob: string
  readonly sha256: string
  readonly size: number
}

/** The kept bytes of a scanned file (scan with keepBytes). */
export const bytesOf = (f: ScannedFile): Buffer => {
  if (f.bytes === undefined) throw new TypeError(`the scan did not keep the bytes of ${f.entry.path}`)
  return f.bytes
}

/** The origin of a file a capture shows: path, blob, SHA-256 (remembered by the snapshot), size. */
export const originFileOf = (r: SourceResearch, entry: TreeEntry, bytes: Buffer): OriginFile => ({
  path: entry.path,
  blob: entry.oid,
  sha256: r.snap.sha256(entry.oid, bytes),
  size: bytes.length
})

export const gitOrigin = (r: SourceResearch, files: readonly OriginFile[]): Origin => ({
  type: 'git',
  url: r.url,
  commit: r.snap.commit,
  files: [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
})

/** The settings every source capture records (and hashes). */
export const sourceSettings = (r: SourceResearch, extra: Record<string, unknown> = {}): Record<string, unknown> => {
  const l = r.limits
  return {
    extensions: [...r.extensions].sort(),
    limits: {
      time_ms: l.time_ms,
      max_lines: l.max_lines,
      max_files: l.max_files,
      max_file_bytes: l.max_file_bytes,
      max_search_bytes: l.max_search_bytes,
      max_result_bytes: l.max_result_bytes,
      max_matches: l.max_matches,
      max_line_chars: l.max_line_chars
    },
    ...extra
  }
}

export type SkipReason = 'binary' | 'too_large' | 'missing_object' | 'symlink' | 'submodule'

export interface Skipped {
  readonly path: string
  readonly reason: SkipReason
}

/** Throws SOURCE_TIMEOUT once `deadline` (ms since epoch, by the research's clock) has passed. */
export const checkDeadline = (r: SourceResearch, deadline: number): void => {
  if (r.now() > deadline)
    throw new FailureError(
      failure('SOURCE_TIMEOUT', `the source query did not finish within ${r.limits.time_ms} ms`, {
        time_ms: r.limits.time_ms
      })
    )
}

/** Git's heuristic: a NUL byte in the first 8000 bytes makes a blob binary. */
export const isBinary = isBinaryBytes

export interface Hit {
  readonly path: string
  readonly line: number
  readonly text: string
  /** Present (true) when the line was cut at max_line_chars; `length` is the original length. */
  readonly text_truncated?: true
  readonly length?: number
}

export interface SourceScanOptions {
  readonly prefix?: string
  /** Restrict to these extensions (default: the configured text extensions). */
  readonly extensions?: readonly string[]
  readonly needle: string
  readonly wholeWord: boolean
  /** ASCII letters of either case match (the snapshot index's case-folded filter rules files out). */
  readonly ignoreCase?: boolean
  /** Matches only where no digit, nor a decimal point followed or preceded by one, adjoins the needle. */
  readonly wholeNumber?: boolean
  readonly maxMatches: number
  readonly maxBytes: number
  readonly deadline: number
  /** Only these paths (follow-up searches inside matching files). */
  readonly onlyPaths?: ReadonlySet<string>
  /** Keep the bytes of files with hits in the result (registration and context read them again). */
  readonly keepBytes?: boolean
  /** Files with hits a scan reports at most (`[limits] max_files`); one more stops it with the limit `files`. */
  readonly maxFiles?: number
  /** Scan order: files of a lower rank first (stable, path order within a rank); default path order. */
  readonly rank?: (path: string) => number
}

export interface ScannedFile {
  readonly entry: TreeEntry
  readonly origin: OriginFile
  /** Present when the scan was asked to keep bytes. */
  readonly bytes?: Buffer
}

export interface SourceScanResult {
  readonly hits: Hit[]
  readonly files: Map<string, ScannedFile>
  readonly filesScanned: number
  readonly bytesScanned: number
  readonly skipped: Skipped[]
  /** Names of the limits that stopped the scan early. */
  readonly limitsReached: string[]
  /** Every in-scope text file was searched and no limit stopped the scan. */
  readonly complete: boolean
}

const isWordByte = (b: number | undefined): boolean =>
  b !== undefined && ((b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b === 95)

const isDigit = (b: number | undefined): boolean => b !== undefined && b >= 48 && b <= 57

/** Whether the match at `at` of `length` bytes is a whole number: no digit (or `.` and a digit) on either side. */
const wholeNumberAt = (bytes: Buffer, at: number, length: number): boolean => {
  const before = bytes[at - 1]
  const after = bytes[at + length]
  return (
    !isDigit(before) &&
    !(before === 46 && isDigit(bytes[at - 2])) &&
    !isDigit(after) &&
    !(after === 46 && isDigit(bytes[at + length + 1]))
  )
}

/** The bytes with ASCII capitals lowered (same length, so offsets stay those of the original). */
export const lowerAscii = (bytes: Buffer): Buffer => {
  const out = Buffer.from(bytes)
  for (let i = 0; i < out.length; i++) {
    const b = out[i] as number
    if (b >= 65 && b <= 90) out[i] = b + 32
  }
  return out
}

/**
 * Literal, case-sensitive search over the text files of the snapshot in path order. Files are
 * tested with a native byte search first; lines are decoded only around hits.
 */
export const scan = async (r: SourceResearch, o: SourceScanOptions): Promise<SourceScanResult> => {
  const first = await scanOnce(r, o)
  // Blobs read again within a session are not hashed again while the index's data file is
  // unwritten; if it was written meanwhile, the scan runs again and checks every blob it reads.
  return r.snap.settled() ? first : scanOnce(r, o)
}

/** The listing in the order of `rank` (stable), or as it is. */
const ranked = <T extends { readonly path: string }>(
  listing: readonly T[],
  rank: ((p: string) => number) | undefined
): readonly T[] =>
  rank === undefined
    ? listing
    : listing
        .map((entry, i) => ({ entry, i, k: rank(entry.path) }))
        .sort((a, b) => a.k - b.k || a.i - b.i)
        .map((x) => x.entry)

/** The hits of one file's bytes (one per line, within the scan's match and file limits); whether it had any. */
const hitsInFile = (
  r: SourceResearch,
  o: SourceScanOptions,
  file: string,
  bytes: Buffer,
  hay: Buffer,
  needle: Buffer,
  first: number,
  found: { readonly hits: Hit[]; readonly files: Map<string, ScannedFile>; readonly limitsReached: Set<string> }
): boolean => {
  const { hits, files, limitsReached } = found
  let at = first
  let line = 1
  let counted = 0
  let lastLine = -1
  let fileHit = false
  while (at >= 0) {
    const whole =
      (!o.wholeWord || (!isWordByte(bytes[at - 1]) && !isWordByte(bytes[at + needle.length]))) &&
      (o.wholeNumber !== true || wholeNumberAt(bytes, at, needle.length))
    if (whole) {
      for (let nl = bytes.indexOf(10, counted); nl >= 0 && nl < at; nl = bytes.indexOf(10, nl + 1)) {
        line++
        counted = nl + 1
      }
      if (line !== lastLine) {
        if (hits.length >= o.maxMatches) {
          limitsReached.add('matches')
          break
        }
        if (!fileHit && o.maxFiles !== undefined && files.size >= o.maxFiles) {
          limitsReached.add('files')
          break
        }
        const start = bytes.lastIndexOf(10, at) + 1
        let end = bytes.indexOf(10, at)
        if (end < 0) end = bytes.length
        const raw = bytes.toString('utf8', start, end).replace(/\r$/, '')
        const c = cutLine(raw, r.limits.max_line_chars)
        hits.push(
          c.cut
            ? { path: file, line, text: c.text, text_truncated: true, length: c.length }
            : { path: file, line, text: c.text }
        )
        lastLine = line
        fileHit = true
      }
    }
    at = hay.indexOf(needle, at + 1)
  }
  return fileHit
}

const scanOnce = async (r: SourceResearch, o: SourceScanOptions): Promise<SourceScanResult> => {
  const exts = new Set(o.extensions ?? r.extensions)
  // a needle without letters matches the same in any case: the index's filter still applies
  const ignoreCase = o.ignoreCase === true && /[A-Za-z]/.test(o.needle)
  const needle = ignoreCase ? lowerAscii(Buffer.from(o.needle, 'utf8')) : Buffer.from(o.needle, 'utf8')
  const hashes = needleHashes(needle)
  const hits: Hit[] = []
  const files = new Map<string, ScannedFile>()
  const skipped: Skipped[] = []
  const limitsReached = new Set<string>()
  let filesScanned = 0
  let bytesScanned = 0
  let omissions = 0
  const ordered = ranked(await r.snap.entries(), o.rank)
  for (const entry of ordered) {
    if (!underPrefix(entry.path, o.prefix) || !exts.has(extensionOf(entry.path))) continue
    if (o.onlyPaths !== undefined && !o.onlyPaths.has(entry.path)) continue
    if (entry.kind !== 'blob') {
      skipped.push({ path: entry.path, reason: entry.kind })
      continue
    }
    checkDeadline(r, o.deadline)
    const known = r.snap.known(entry.oid)
    const info = known === undefined ? await r.snap.info(entry.oid) : known
    if (info === null) {
      skipped.push({ path: entry.path, reason: 'missing_object' })
      omissions++
      continue
    }
    if (info.size > r.limits.max_file_bytes) {
      skipped.push({ path: entry.path, reason: 'too_large' })
      omissions++
      continue
    }
    if (info.binary) {
      skipped.push({ path: entry.path, reason: 'binary' })
      continue
    }
    if (bytesScanned + info.size > o.maxBytes) {
      limitsReached.add('search_bytes')
      break
    }
    bytesScanned += info.size
    filesScanned++
    // The snapshot index's trigram filters (exact, or case-folded) rule out most files unread.
    if (!r.snap.mayContain(entry.oid, hashes, ignoreCase)) continue
    const bytes = o.keepBytes === true ? await r.snap.blob(entry.oid) : await r.snap.scanBlob(entry.oid)
    if (bytes === null)
      throw new FailureError(
        failure('SOURCE_UNAVAILABLE', `the blob of ${entry.path} vanished while it was searched`, { path: entry.path })
      )
    const hay = ignoreCase ? lowerAscii(bytes) : bytes
    const at = hay.indexOf(needle)
    if (at < 0) continue
    const fileHit = hitsInFile(r, o, entry.path, bytes, hay, needle, at, { hits, files, limitsReached })
    if (fileHit)
      files.set(entry.path, {
        entry,
        origin: originFileOf(r, entry, bytes),
        ...(o.keepBytes === true ? { bytes } : {})
      })
    if (limitsReached.has('matches') || limitsReached.has('files')) break
  }
  // A scan that ran past its time is refused even when it got to the end: the limit is a promise.
  checkDeadline(r, o.deadline)
  return {
    hits,
    files,
    filesScanned,
    bytesScanned,
    skipped,
    limitsReached: [...limitsReached].sort(),
    complete: limitsReached.size === 0 && omissions === 0
  }
}

/** Skips as reported in results: counts by reason and the first 100 paths. */
export const reportSkipped = (
  skipped: readonly Skipped[]
): { counts: Record<string, number>; files: Skipped[]; listed_all: boolean } => {
  const counts: Record<string, number> = {}
  for (const s of skipped) counts[s.reason] = (counts[s.reason] ?? 0) + 1
  return { counts, files: skipped.slice(0, 100), listed_all: skipped.length <= 100 }
}

/** Splits file bytes into lines (LF; a trailing CR is dropped; a final LF ends the last line). */
export const splitLines = (bytes: Buffer): string[] => {
  const text = bytes.toString('utf8')
  const lines = text.split('\n')
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
}
