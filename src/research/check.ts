/**
 * `vba check`: a profile tried against the world it names, before any case depends on it. Every
 * path as it resolves (against the profile's folder), the repository and the commit in it, the
 * credentials, a connection, every allowed and enrichment table and column, and one trial schema
 * query through research itself. Each step says what it found, or what failed in the provider's
 * own words; a step's outcome is a profile mistake (fix the profile: exit 2) or a provider that
 * is down (retry later: exit 3).
 */
import * as E from 'fp-ts/lib/Either.js'
import type { Profile } from '../adapters/config/profile.js'
import { resolveGitdir } from '../adapters/git/tree.js'
import { packObjects } from '../adapters/git/object-source.js'
import { resolvePassword } from '../adapters/db/executors.js'
import type { WorldDb } from '../adapters/db/world-db.js'
import { decodeEnrichment, isSymbolRelationship, type EnrichmentConfig } from '../domain/enrichment-config.js'
import { failureKind, type Failure } from '../failures/failure.js'
import { toFailure } from '../failures/error.js'
import { snapshotIndexRoot } from './source/open.js'
import { createProjectResearch } from './project-research.js'

/** One step of a check: what it looked at, and what it found. */
export interface CheckStep {
  readonly step: string
  /**
   * ok; a warning (works, but not as the profile may mean: exit 0); a mistake in the profile (or
   * what it names); a provider that is down.
   */
  readonly outcome: 'ok' | 'warn' | 'mistake' | 'down'
  readonly text: string
  readonly code?: string
}

export interface CheckReport {
  readonly profile: string
  /** The folder relative paths of the profile resolve against. */
  readonly folder: string
  readonly paths: ReadonlyArray<{ readonly key: string; readonly path: string }>
  readonly steps: readonly CheckStep[]
}

type Env = Readonly<Record<string, string | undefined>>

/** Codes that mean the profile (or the credentials or names it gives) is wrong, not that a provider is down. */
const MISTAKES = new Set(['CREDENTIALS_MISSING', 'DATABASE_AUTH_FAILED', 'DATABASE_ACCESS_DENIED'])
/** Refusals for the server's own reasons (it cannot write its temporary files, it is too slow): the provider. */
const SERVER_TROUBLE = new Set(['DATABASE_QUERY_FAILED', 'DATABASE_TIMEOUT'])

const outcomeOf = (f: Failure): 'mistake' | 'down' =>
  MISTAKES.has(f.code) || (failureKind(f.code) === 'permanent' && !SERVER_TROUBLE.has(f.code)) ? 'mistake' : 'down'

const failed = (step: string, f: Failure, outcome = outcomeOf(f)): CheckStep => ({
  step,
  outcome,
  text: f.message,
  code: f.code
})

/** Every path the profile names, absolute. */
const pathsOf = (profile: Profile, env: Env): CheckReport['paths'] => {
  const out: Array<{ key: string; path: string }> = [{ key: 'profile', path: profile.file }]
  if (profile.source !== undefined) out.push({ key: '[source] repository', path: profile.source.repository })
  const index = snapshotIndexRoot(profile, env)
  if (index !== undefined) out.push({ key: '[source] snapshot index (cache_dir)', path: index })
  const db = profile.database
  if (db?.filename !== undefined) out.push({ key: '[database] filename', path: db.filename })
  if (db?.password_file !== undefined) out.push({ key: '[database] password_file', path: db.password_file })
  return out
}

/** The source half of a check: the repository the profile names, and its commit in it (`vba investigate` and `vba case query` refuse a mistake here before they write). */
export const checkSource = async (profile: Profile): Promise<CheckStep[]> => {
  const source = profile.source
  if (source === undefined)
    return [{ step: 'source', outcome: 'ok', text: 'no [source] section: source questions are refused' }]
  let gitdir: string
  try {
    gitdir = resolveGitdir(source.repository)
  } catch (e) {
    // The directory the profile names is not there: a path to fix (relative paths resolve against the profile's folder).
    return [failed('source repository', toFailure(e, 'source'), 'mistake')]
  }
  const steps: CheckStep[] = [{ step: 'source repository', outcome: 'ok', text: `git directory ${gitdir}` }]
  const objects = packObjects(gitdir, 1 << 20)
  try {
    const o = await objects.read(source.commit)
    if (o === null)
      steps.push({
        step: 'source commit',
        outcome: 'mistake',
        code: 'CONFIG_INVALID',
        text: `commit ${source.commit} is not in the repository ${source.repository} (fetch it, or name a commit the clone has)`
      })
    else if (o.type !== 'commit')
      steps.push({
        step: 'source commit',
        outcome: 'mistake',
        code: 'CONFIG_INVALID',
        text: `${source.commit} is a ${o.type} in ${source.repository}, not a commit`
      })
    else steps.push({ step: 'source commit', outcome: 'ok', text: `commit ${source.commit} is in the repository` })
  } catch (e) {
    steps.push({
      step: 'source commit',
      outcome: 'down',
      code: 'SOURCE_UNAVAILABLE',
      text: `the objects of ${source.repository} cannot be read (${e instanceof Error ? e.message : String(e)})`
    })
  } finally {
    objects.close()
  }
  return steps
}

/** The tables and columns [enrichment] reads, by table (all in the default database). */
const enrichmentColumns = (config: EnrichmentConfig): Map<string, Set<string>> => {
  const need = new Map<string, Set<string>>()
  const add = (table: string, ...columns: Array<string | undefined>): void => {
    const set = need.get(table) ?? new Set<string>()
    for (const c of columns) if (c !== undefined) set.add(c)
    need.set(table, set)
  }
  for (const e of Object.values(config.entities)) add(e.table, e.id_column, ...e.columns)
  for (const t of config.texts ?? []) add(t.table, t.column)
  for (const r of config.relationships ?? []) {
    add(r.from_table, r.from_column, r.from_id_column, r.when_column)
    if (!isSymbolRelationship(r))
      add(r.table, r.column, ...(r.columns ?? []), ...(r.filters ?? []).map((f) => f.column))
  }
  return need
}

const checkTables = async (profile: Profile, world: WorldDb): Promise<CheckStep[]> => {
  const db = profile.database
  if (db === undefined) return []
  const steps: CheckStep[] = []
  const present = new Map<string, Set<string>>()
  for (const [database, tables] of Object.entries(db.allowed_tables)) {
    if (!db.databases.includes(database)) {
      steps.push({
        step: 'allowed tables',
        outcome: 'mistake',
        code: 'CONFIG_INVALID',
        text: `[database.allowed_tables] names ${database}, which [database].databases does not (${db.databases.join(', ')})`
      })
      continue
    }
    const listed = new Set(await world.listTables(database))
    present.set(database, listed)
    const missing = tables.filter((t) => !listed.has(t))
    steps.push(
      missing.length === 0
        ? { step: 'allowed tables', outcome: 'ok', text: `${database}: all ${tables.length} allowed tables exist` }
        : {
            step: 'allowed tables',
            outcome: 'mistake',
            code: 'TABLE_NOT_FOUND',
            text: `${database}: allowed but not in the database: ${missing.join(', ')}`
          }
    )
  }
  const raw = profile.raw['enrichment']
  if (raw === undefined) {
    steps.push({
      step: 'enrichment',
      outcome: 'ok',
      text: 'no [enrichment]: case prepare refuses this profile (include config/trinitycore.toml, see config/azerothcore.toml)'
    })
    return steps
  }
  const config = decodeEnrichment(raw)
  if (E.isLeft(config)) return [...steps, failed('enrichment', config.left)]
  const database = db.databases[0] ?? ''
  const allowed = new Set(db.allowed_tables[database] ?? [])
  const problems: string[] = []
  const notAllowed: string[] = []
  for (const [table, columns] of enrichmentColumns(config.right)) {
    if (!allowed.has(table)) {
      notAllowed.push(table)
      continue
    }
    if (present.get(database)?.has(table) === false) continue // said above
    const schema = await world.tableSchema({ database, table })
    if (schema === null) {
      problems.push(`${database}.${table} does not exist`)
      continue
    }
    const have = new Set(schema.columns.map((c) => c.name))
    const missing = [...columns].filter((c) => !have.has(c))
    if (missing.length > 0) problems.push(`${database}.${table} has no column ${missing.join(', ')}`)
  }
  steps.push(
    problems.length === 0
      ? {
          step: 'enrichment',
          outcome: 'ok',
          text:
            notAllowed.length === 0
              ? 'every table and column [enrichment] reads exists and is allowed'
              : 'every allowed table [enrichment] reads exists, with its columns (the others: below)'
        }
      : { step: 'enrichment', outcome: 'mistake', code: 'COLUMN_UNKNOWN', text: problems.join('; ') }
  )
  // A lookup of a table the allowlist leaves out is refused by research like any other question:
  // preparation records it as a gap (TABLE_NOT_ALLOWED) and goes on. Said, not an error.
  if (notAllowed.length > 0)
    steps.push({
      step: 'enrichment allowlist',
      outcome: 'warn',
      code: 'TABLE_NOT_ALLOWED',
      text: `[enrichment] reads ${notAllowed.join(', ')}, not in [database.allowed_tables] ${database}: case prepare leaves those lookups out and names them (allow the tables to enrich from them)`
    })
  return steps
}

const checkDatabase = async (profile: Profile, env: Env): Promise<CheckStep[]> => {
  const db = profile.database
  if (db === undefined) {
    const none: CheckStep = {
      step: 'database',
      outcome: 'ok',
      text: 'no [database] section: database questions are refused'
    }
    // Every entity lookup of [enrichment] reads the world database: without one, case prepare
    // leaves every one of them out (each named with its code), and the facts hold none.
    const entities = profile.raw['enrichment'] as { entities?: Record<string, unknown> } | undefined
    const lookups = Object.keys(entities?.entities ?? {})
    return lookups.length === 0
      ? [none]
      : [
          none,
          {
            step: 'enrichment',
            outcome: 'warn',
            text: `[enrichment] looks up ${lookups.join(', ')} in the world database, and the profile names none: case prepare leaves every lookup out (the facts then hold only what the report says)`
          }
        ]
  }
  const steps: CheckStep[] = []
  if (db.client === 'mysql2') {
    try {
      const password = await resolvePassword(db, env)
      steps.push({
        step: 'credentials',
        outcome: 'ok',
        text:
          db.password_env !== undefined
            ? `password from the environment variable ${db.password_env}`
            : db.password_file !== undefined
              ? `password from ${db.password_file}`
              : password === undefined
                ? 'no password configured'
                : 'password read'
      })
    } catch (e) {
      return [failed('credentials', toFailure(e, 'credentials'), 'mistake')]
    }
  }
  const { openWorldDb } = await import('../adapters/db/world-db.js')
  let world: WorldDb | undefined
  try {
    world = await openWorldDb(db, { limits: profile.limits, env })
    const first = db.databases[0] ?? ''
    await world.listTables(first)
    const where =
      db.client === 'mysql2' ? `${db.host ?? '127.0.0.1'}:${db.port ?? 3306} as ${db.user ?? ''}` : db.filename
    steps.push({ step: 'connection', outcome: 'ok', text: `connected to ${where} (${world.dialect()})` })
  } catch (e) {
    await world?.close()
    return [...steps, failed('connection', toFailure(e, 'database'))]
  }
  const table = db.allowed_tables[db.databases[0] ?? '']?.[0]
  let columns: string[] = []
  try {
    steps.push(...(await checkTables(profile, world)))
    const schema = table === undefined ? null : await world.tableSchema({ database: db.databases[0] ?? '', table })
    columns = (schema?.columns ?? []).slice(0, profile.limits.max_columns).map((c) => c.name)
  } catch (e) {
    steps.push(failed('tables', toFailure(e, 'database')))
  } finally {
    await world.close()
  }
  if (table !== undefined) steps.push(...(await trialQueries(profile, env, table, columns)))
  return steps
}

/** One schema query and one row of the first allowed table, through research itself. */
const trialQueries = async (profile: Profile, env: Env, table: string, columns: string[]): Promise<CheckStep[]> => {
  const research = createProjectResearch(profile, { env })
  const trials: Array<[string, unknown]> = [['database.schema', { kind: 'database.schema', table }]]
  if (columns.length > 0)
    trials.push(['database.rows', { kind: 'database.rows', table, columns, filters: [], offset: 0, limit: 1 }])
  const steps: CheckStep[] = []
  try {
    for (const [kind, query] of trials) {
      const r = await research.query(query)()
      steps.push(
        E.isLeft(r)
          ? failed('trial query', r.left)
          : { step: 'trial query', outcome: 'ok', text: `${kind} of ${table} answered` }
      )
    }
  } finally {
    await research.close()
  }
  return steps
}

/** Tries the profile against what it names; never throws for what it finds (each step says it). */
export const checkProfile = async (profile: Profile, env: Env = process.env): Promise<CheckReport> => ({
  profile: profile.file,
  folder: profile.dir,
  paths: pathsOf(profile, env),
  steps: [...(await checkSource(profile)), ...(await checkDatabase(profile, env))]
})
