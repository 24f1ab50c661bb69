/** Opening the source half from a profile: the bound repository and commit, settings, limits. */
import * as os from 'node:os'
import * as path from 'node:path'
import { failure } from '../../failures/failure.js'
import { DEFAULT_TEXT_EXTENSIONS } from '../../domain/source-paths.js'
import type { Profile } from '../../adapters/config/profile.js'
import { openSnapshot, type BuildProgress, type SnapshotNotice } from '../../adapters/git/snapshot.js'
import { FailureError } from '../../failures/error.js'
import type { SourceRunner } from '../project-research.js'
import type { SourceAnalysis, SourceResearch } from './common.js'
import { runSourceQuery } from './run.js'
import { optional } from '../../optional.js'

/** Defaults of [source_analysis] (TrinityCore-family adapter settings, not built-in knowledge). */
export const DEFAULT_ANALYSIS: SourceAnalysis = {
  enabled: false,
  context_lines: 8,
  max_searches: 4,
  max_matches: 12,
  max_files: 8,
  max_blocks: 12,
  max_total_lines: 160,
  registration_prefixes: ['AddSC_'],
  // TrinityCore keeps code in src/ (data dumps in sql/), AzerothCore in src/ and modules/ (dumps in data/sql/)
  code_path_prefixes: ['src/', 'modules/'],
  whole_numbers: true
}

const positive = (name: string, n: number): number => {
  if (!Number.isInteger(n) || n < 0 || (n === 0 && name !== 'context_lines'))
    throw new FailureError(failure('CONFIG_INVALID', `[source_analysis].${name} must be a positive integer`))
  return n
}

export const analysisOf = (profile: Profile): SourceAnalysis => {
  const a = { ...DEFAULT_ANALYSIS, ...profile.sourceAnalysis }
  for (const k of [
    'context_lines',
    'max_searches',
    'max_matches',
    'max_files',
    'max_blocks',
    'max_total_lines'
  ] as const)
    positive(k, a[k])
  return a
}

/** The environment research reads its settings from (its cache directory: XDG_CACHE_HOME, HOME). */
export type ResearchEnvironment = Readonly<Record<string, string | undefined>>

/**
 * Where persisted snapshot indexes live: `[source] cache_dir`, else `$XDG_CACHE_HOME/vba`, else
 * `~/.cache/vba`; undefined when the profile turns the index off (`cache = false`).
 */
export const snapshotIndexRoot = (profile: Profile, env: ResearchEnvironment = process.env): string | undefined => {
  const source = profile.source
  if (source === undefined || source.cache === false) return undefined
  if (source.cache_dir !== undefined) return source.cache_dir
  const xdg = env['XDG_CACHE_HOME']
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'vba')
  const home = env['HOME'] ?? os.homedir()
  return path.join(home, '.cache', 'vba')
}

/** @category research */
export interface SourceOpenOptions {
  readonly env?: ResearchEnvironment
  /** Told when a snapshot index is built, found damaged (and rebuilt) or cannot be written. */
  readonly onNotice?: (n: SnapshotNotice) => void
  readonly onProgress?: (p: BuildProgress) => void
  /** The clock a query's time limit (`[limits] time_ms`) is read from (default Date.now; a test passes its own). */
  readonly now?: () => number
  /** See ResearchOptions.emptyScope (default true). */
  readonly emptyScope?: boolean
}

/** @category research */
export const openSourceResearch = async (profile: Profile, options: SourceOpenOptions = {}): Promise<SourceRunner> => {
  const source = profile.source
  if (source === undefined)
    throw new FailureError(failure('SOURCE_NOT_CONFIGURED', 'the profile has no [source] section'))
  const index = snapshotIndexRoot(profile, options.env)
  const snap = await openSnapshot(source.repository, source.commit, {
    ...optional('index', index),
    ...optional('onNotice', options.onNotice),
    ...optional('onProgress', options.onProgress)
  })
  // The listing (and, on the first use of a commit, its persisted index) is ready before any query's
  // time limit starts: building the index is a one-time preparation, not part of a query.
  try {
    await snap.entries()
  } catch (e) {
    snap.close()
    throw e
  }
  const extensions = (source.extensions ?? DEFAULT_TEXT_EXTENSIONS).map((e) =>
    (e.startsWith('.') ? e : `.${e}`).toLowerCase()
  )
  const research: SourceResearch = {
    snap,
    url: source.url,
    extensions,
    limits: profile.limits,
    analysis: analysisOf(profile),
    now: options.now ?? Date.now,
    missedMatches: source.missed_matches !== false,
    emptyScope: source.missed_matches !== false && options.emptyScope !== false
  }
  return { run: (q) => runSourceQuery(research, q), close: async () => snap.close() }
}
