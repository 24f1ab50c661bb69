/**
 * Re-deriving a case's evidence (`vba verify CASE --against PROFILE`): every capture of the log
 * (research in the investigation and the revisions' enrichment) is asked again, with the settings
 * it records, of the world the profile reaches: source captures at the commit they name, read from
 * git objects (never from the snapshot index), database captures when the profile's snapshot id is
 * the one they name. The canonical capture bytes must be identical; a difference is an
 * EVIDENCE_MISMATCH finding naming the first difference (a file and line, or a table, row and
 * column), and so is a permanent refusal of the request there (a file, table or column that is not
 * there: the capture cannot have been recorded there); a capture that could not be asked again (an
 * outage, a timeout, another snapshot) is an EVIDENCE_NOT_RECHECKED notice saying why.
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Profile } from '../adapters/config/profile.js'
import type { ProjectLimits } from '../domain/limits.js'
import { Capture } from '../events/capture.js'
import { causeFirst, finding, type Finding } from '../events/findings.js'
import type { RecordedEvent } from '../events/chain.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { readObjectAt, replayAt } from '../adapters/case-store/at.js'
import { attempt } from '../failures/error.js'
import { captureBytes } from './capture.js'
import { createProjectResearch, type ProjectResearch } from './project-research.js'
import { openSourceResearch } from './source/open.js'
import { firstDifference } from './capture-diff.js'
import type { EvidenceSummary, VerifyReport } from '../adapters/case-store/verify.js'
import { optional } from '../optional.js'
import { parseBoundedBytes } from '../events/bounds.js'
import { QUERY_KIND_DEFINITIONS } from '../projections/query-kinds/catalog.js'

/** One capture the log records (a repeat names the same object once). */
interface Recorded {
  readonly seq: number
  readonly evidence: string
  readonly ref: { readonly digest: string; readonly size: number }
}

/** What re-deriving found: the evidence summary and the findings of every mismatch. */
export interface RederiveReport extends EvidenceSummary {
  readonly findings: readonly Finding[]
}

export interface RederiveOptions {
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Called after every capture: captures done and the total. */
  readonly onProgress?: (done: number, total: number) => void
}

const recordedCaptures = async (at: CaseAt): Promise<Recorded[]> => {
  const out: Recorded[] = []
  const seen = new Set<string>()
  const collect = (s: Recorded[], e: RecordedEvent): Recorded[] => {
    if ((e.type === 'CaptureRecorded' || e.type === 'EnrichmentCaptured') && !seen.has(e.data.capture.digest)) {
      seen.add(e.data.capture.digest)
      s.push({
        seq: e.seq,
        evidence: e.data.evidence_id,
        ref: { digest: e.data.capture.digest, size: e.data.capture.size }
      })
    }
    return s
  }
  await replayAt(at, [{ name: 'captures', version: 1, init: () => out, evolve: collect, view: () => null }])
  return out
}

const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}

/**
 * The profile a capture was asked under: the operator's world (repository, database connection),
 * with the commit, URL, limits, extensions, allowlist and analysis settings the capture records.
 */
const profileFor = (base: Profile, c: Capture): Profile => {
  const settings = rec(c.settings)
  const limits = { ...base.limits, ...rec(settings['limits']) } as ProjectLimits
  if (c.origin.type === 'git') {
    const extensions = Array.isArray(settings['extensions'])
      ? settings['extensions'].map(String)
      : base.source?.extensions
    const analysis = rec(settings['source_analysis'])
    return {
      ...base,
      limits,
      ...(Object.keys(analysis).length === 0
        ? {}
        : {
            sourceAnalysis: {
              ...base.sourceAnalysis,
              ...analysis,
              // captures asked before whole numbers were recorded matched digits anywhere
              whole_numbers: settings['whole_numbers'] === true,
              enabled: true
            }
          }),
      ...(base.source === undefined
        ? {}
        : {
            source: {
              ...base.source,
              url: c.origin.url,
              commit: c.origin.commit,
              cache: false,
              // captures asked before queries said what they missed record no missed_matches
              missed_matches: settings['missed_matches'] !== undefined,
              ...optional('extensions', extensions)
            }
          })
    } as Profile
  }
  const db = c.origin.database
  const allowed = Array.isArray(settings['allowed_tables'])
    ? settings['allowed_tables'].map(String)
    : (base.database?.allowed_tables[db] ?? [])
  return {
    ...base,
    limits,
    ...(base.database === undefined
      ? {}
      : { database: { ...base.database, databases: [db], allowed_tables: { [db]: allowed } } })
  } as Profile
}

/** Why a capture cannot be asked again of this profile's world, or null. */
const notRecheckable = (base: Profile, c: Capture): string | null => {
  const byKind = QUERY_KIND_DEFINITIONS[c.kind].notRecheckable(c)
  if (byKind !== null) return byKind
  if (c.origin.type === 'git') return base.source === undefined ? 'the profile has no [source]' : null
  if (base.database === undefined) return 'the profile has no [database]'
  if (base.database.client !== c.origin.client)
    return `the capture was answered by ${c.origin.client}, the profile's database is ${String(base.database.client)}`
  if (base.database.snapshot_id !== c.origin.snapshot_id)
    return `the capture is of snapshot ${c.origin.snapshot_id}, the profile's database is ${base.database.snapshot_id}`
  return null
}

/**
 * Refusals that are the world's answer about the question at the capture's commit and snapshot (a
 * file, table, column that is not there; a request its recorded settings refuse): the capture
 * cannot have been recorded there. Everything else (an outage, a timeout, access the operator's
 * profile lacks, a provider not configured) only means it could not be asked again.
 */
export const PERMANENT_REFUSALS: ReadonlySet<string> = new Set([
  'SOURCE_FILE_NOT_FOUND',
  'SOURCE_NOT_TEXT',
  'SOURCE_NOT_READABLE',
  'SOURCE_FILE_TOO_LARGE',
  'SOURCE_LINES_PAST_END',
  'SOURCE_TREE_UNSAFE',
  'TABLE_NOT_FOUND',
  'TABLE_NOT_ALLOWED',
  'DATABASE_NOT_ALLOWED',
  'COLUMN_UNKNOWN',
  'RESULT_TOO_LARGE',
  'QUERY_INVALID',
  'QUERY_UNKNOWN_KIND',
  'PATH_INVALID',
  'IDENTIFIER_INVALID',
  'FILTER_INVALID'
])

const isPermanentRefusal = (f: { readonly code: string }): boolean => PERMANENT_REFUSALS.has(f.code)

/** What a mismatch of a database capture may also mean, and what the operator does about it. */
const reimportHint = (c: Capture): string =>
  c.origin.type === 'database'
    ? `; a database re-imported under the unchanged snapshot id ${c.origin.snapshot_id} has the same effect: give every import its own snapshot_id in the profile, and re-derive against the database that snapshot id named`
    : ''

/** The recorded bytes of a capture and the capture they decode to, or why they cannot be had. */
const loadCapture = async (
  at: CaseAt,
  r: Recorded
): Promise<E.Either<string, { readonly bytes: Buffer; readonly capture: Capture }>> => {
  const bytes = await attempt(readObjectAt(at, r.ref))
  if (E.isLeft(bytes)) return E.left(`its object cannot be read (${bytes.left.code})`)
  const decoded = Capture.decode(parseBoundedBytes(bytes.right))
  if (E.isLeft(decoded)) return E.left('its object is not a capture')
  return E.right({ bytes: bytes.right, capture: decoded.right })
}

/** The research session for a capture: one per distinct settings (and commit or snapshot), opened on first use. */
const sessionFor = (
  sessions: Map<string, ProjectResearch>,
  profile: Profile,
  c: Capture,
  options: RederiveOptions
): ProjectResearch => {
  const key = `${c.origin.type === 'git' ? `git:${c.origin.commit}:${c.origin.url}` : `db:${c.origin.database}`}:${c.settings_hash}`
  const open = sessions.get(key)
  if (open !== undefined) return open
  const research = createProjectResearch(profileFor(profile, c), {
    openSource: openSourceResearch,
    ...optional('env', options.env),
    // captures recorded before sqlite_types reported an SQLite world's types as declared
    sqliteTypes: rec(c.settings)['sqlite_types'] === 'mysql' ? 'mysql' : 'declared',
    // captures recorded before a path_prefix without files was said name no empty_scope
    emptyScope: rec(rec(c.settings)['missed_matches'])['empty_scope'] === true
  })
  sessions.set(key, research)
  return research
}

/** Re-derives every capture of the case at `at` from the world `profile` reaches (see the module comment). */
export const rederiveEvidence = async (
  at: CaseAt,
  profile: Profile,
  options: RederiveOptions = {}
): Promise<RederiveReport> => {
  const recorded = await recordedCaptures(at)
  const findings: Finding[] = []
  const sessions = new Map<string, ProjectResearch>()
  const commits = new Set<string>()
  const snapshots = new Set<string>()
  let checked = 0
  let matched = 0
  let mismatched = 0
  let skipped = 0
  const skip = (r: Recorded, why: string): void => {
    skipped++
    findings.push(
      finding('EVIDENCE_NOT_RECHECKED', `${r.evidence} (seq ${r.seq}) was not asked again: ${why}`, {
        seq: r.seq,
        data: { evidence_id: r.evidence, reason: why }
      })
    )
  }
  try {
    for (const [i, r] of recorded.entries()) {
      options.onProgress?.(i, recorded.length)
      const loaded = await loadCapture(at, r)
      if (E.isLeft(loaded)) {
        skip(r, loaded.left)
        continue
      }
      const { bytes, capture: c } = loaded.right
      const why = notRecheckable(profile, c)
      if (why !== null) {
        skip(r, why)
        continue
      }
      const again = await sessionFor(sessions, profile, c, options).query(c.request)()
      const where =
        c.origin.type === 'git' ? `commit ${c.origin.commit.slice(0, 12)}` : `snapshot ${c.origin.snapshot_id}`
      if (E.isLeft(again) && !isPermanentRefusal(again.left)) {
        skip(r, `asking again failed: ${again.left.code}: ${again.left.message}`)
        continue
      }
      checked++
      if (c.origin.type === 'git') commits.add(c.origin.commit)
      else snapshots.add(c.origin.snapshot_id)
      if (E.isLeft(again)) {
        // The world says no: the capture cannot have been recorded there.
        mismatched++
        findings.push(
          finding(
            'EVIDENCE_MISMATCH',
            `${r.evidence} (seq ${r.seq}, ${c.kind}) cannot have been recorded at ${where}: asking again is refused there with ${again.left.code}: ${again.left.message}${reimportHint(c)}`,
            { seq: r.seq, data: { evidence_id: r.evidence, kind: c.kind, refusal: again.left.code } }
          )
        )
        continue
      }
      const fresh = captureBytes(again.right)
      if (fresh.equals(bytes)) {
        matched++
        continue
      }
      mismatched++
      const d = firstDifference(c, again.right)
      findings.push(
        finding(
          'EVIDENCE_MISMATCH',
          `${r.evidence} (seq ${r.seq}, ${c.kind}) differs from what ${where} answers now: ${d.where}: recorded ${d.recorded}, re-derived ${d.rederived}${reimportHint(c)}`,
          { seq: r.seq, data: { evidence_id: r.evidence, kind: c.kind, pointer: d.pointer, where: d.where } }
        )
      )
    }
    options.onProgress?.(recorded.length, recorded.length)
  } finally {
    for (const s of sessions.values()) await s.close()
  }
  return {
    captures: recorded.length,
    checked,
    matched,
    mismatched,
    not_rechecked: skipped,
    commits: [...commits].sort(),
    snapshots: [...snapshots].sort(),
    findings
  }
}

/** A verify report with the re-derived evidence: its findings added, valid only without a mismatch. */
export const withEvidence = (report: VerifyReport, ev: RederiveReport): VerifyReport => {
  const { findings, ...summary } = ev
  return {
    ...report,
    valid: report.valid && ev.mismatched === 0,
    // In their layer, before the signatures' (causes first, as verify lists them).
    findings: causeFirst([...report.findings, ...findings]),
    evidence: summary
  }
}
