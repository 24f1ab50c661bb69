/**
 * ProjectResearch: the one reading interface behind project.query. It decodes the request,
 * dispatches to the executor of its kind, and returns a capture. It never writes into a case, never
 * follows an answer up by itself, and never invents anything to fill a truncated or failed answer.
 */
import type * as TE from 'fp-ts/lib/TaskEither.js'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure, type FailureCode } from '../failures/failure.js'
import { decodeQuery, isDatabaseQuery, type DatabaseQuery, type SourceQuery } from '../domain/query.js'
import type { DatabaseScope } from '../domain/database-plan.js'
import type { Capture } from '../events/capture.js'
import { bindingOf, type Profile } from '../adapters/config/profile.js'
import type { Binding } from '../events/settings.js'
import type { WorldDb } from '../adapters/db/world-db.js'
import { FailureError, toFailure } from '../failures/error.js'
import type { SourceOpenOptions } from './source/open.js'
import type { SnapshotNotice } from '../adapters/git/snapshot.js'
import { optional } from '../optional.js'

/** Runs source queries (provided by the source half; absent when [source] is not configured). @category research */
export type SourceRunner = {
  readonly run: (q: SourceQuery) => Promise<Capture>
  readonly close: () => Promise<void>
}

/** @category research */
export interface ProjectResearch {
  /** Decodes `args` as project-query-v1 and answers it with a capture. */
  readonly query: (args: unknown) => TE.TaskEither<Failure, Capture>
  /** What its answers are bound to (the profile's repository and commit, database and snapshot). */
  readonly binding: Binding
  readonly close: () => Promise<void>
}

/** @category research */
export interface ResearchOptions {
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Factory for the source half (injected so the database half works without git). */
  readonly openSource?: (profile: Profile, options: SourceOpenOptions) => Promise<SourceRunner>
  /** Told when a snapshot index is built, found damaged (and rebuilt) or cannot be written. */
  readonly onNotice?: (n: SnapshotNotice) => void
  /**
   * How an SQLite world's column types are reported (SqliteTypes in world-db.ts): `mysql` (the
   * default) as the MariaDB/MySQL type a column declared `TEXT_<type>` stands for, `declared` as
   * SQLite declares them (captures recorded before their settings named sqlite_types).
   */
  readonly sqliteTypes?: 'mysql' | 'declared'
  /**
   * Whether a source query whose path_prefix holds no file says so, with the folders that match it
   * (default true; false re-derives captures asked before it: their settings' missed_matches name no empty_scope).
   */
  readonly emptyScope?: boolean
}

export const databaseScope = (profile: Profile): DatabaseScope | undefined =>
  profile.database === undefined
    ? undefined
    : { databases: profile.database.databases, allowedTables: profile.database.allowed_tables, limits: profile.limits }

/** @category research */
export const createProjectResearch = (profile: Profile, options: ResearchOptions = {}): ProjectResearch => {
  // The database half: the world database and what its session keeps (schemas, settings).
  let db: Promise<DatabaseSession> | undefined
  let source: Promise<SourceRunner> | undefined
  const database = async (q: DatabaseQuery): Promise<Capture> => {
    const scope = databaseScope(profile)
    if (scope === undefined || profile.database === undefined) {
      throw failureError('DATABASE_NOT_CONFIGURED', 'the profile has no [database] section')
    }
    const section = profile.database
    // The database half (knex and its drivers) loads on first use: source-only sessions start faster.
    db ??= Promise.all([import('../adapters/db/world-db.js'), import('./database/run.js')]).then(
      async ([{ openWorldDb }, { runDatabaseQuery }]) => {
        const world = await openWorldDb(section, {
          limits: profile.limits,
          ...optional('env', options.env),
          ...optional('sqliteTypes', options.sqliteTypes)
        })
        const research = { db: world, scope, snapshotId: section.snapshot_id, schemas: new Map(), settings: new Map() }
        return { world, run: (query: DatabaseQuery) => runDatabaseQuery(research, query) }
      }
    )
    const opened = await db.catch((e: unknown) => {
      db = undefined
      throw e
    })
    return opened.run(q)
  }
  const sourceQuery = async (q: SourceQuery): Promise<Capture> => {
    if (profile.source === undefined || options.openSource === undefined) {
      throw failureError('SOURCE_NOT_CONFIGURED', 'the profile has no [source] section')
    }
    source ??= options.openSource(profile, {
      ...optional('env', options.env),
      ...optional('onNotice', options.onNotice),
      ...optional('emptyScope', options.emptyScope)
    })
    const opened = await source.catch((e: unknown) => {
      source = undefined
      throw e
    })
    return opened.run(q)
  }
  return {
    binding: bindingOf(profile),
    query: (args) => async () => {
      const decoded = decodeQuery(args)
      if (E.isLeft(decoded)) return decoded
      const q = decoded.right
      try {
        return E.right(await (isDatabaseQuery(q) ? database(q) : sourceQuery(q)))
      } catch (e) {
        return E.left(toFailure(e, 'research'))
      }
    },
    close: async () => {
      const closing: Array<Promise<void>> = []
      if (db !== undefined)
        closing.push(
          db.then(
            (d) => d.world.close(),
            () => undefined
          )
        )
      if (source !== undefined)
        closing.push(
          source.then(
            (s) => s.close(),
            () => undefined
          )
        )
      await Promise.all(closing)
    }
  }
}

/** An opened world database and the research session over it. */
interface DatabaseSession {
  readonly world: WorldDb
  readonly run: (q: DatabaseQuery) => Promise<Capture>
}

const failureError = (code: FailureCode, message: string): FailureError => new FailureError(failure(code, message))
