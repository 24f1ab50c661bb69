/**
 * The project profile: one TOML file (smol-toml) decoded by io-ts. It binds research to the
 * operator's world: the repository and commit, the database and its allowlist, the limits.
 * Relative paths resolve against the directory of the profile. Unknown keys are refused, so a
 * typo (`pasword_env`) is an error, not a silently ignored setting.
 */
import type { Binding } from '../../events/settings.js'
import * as path from 'node:path'
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { parse as parseToml, TomlError } from 'smol-toml'
import { failure, type Failure } from '../../failures/failure.js'
import { DEFAULT_LIMITS, PROMPT_MIN_CHARS, ProjectLimits } from '../../domain/limits.js'
import { describeErrors } from '../../events/decode.js'
import { intBetween } from '../../events/codecs.js'
import { decodeEnrichment } from '../../domain/enrichment-config.js'
import { checkSourcePath } from '../../domain/source-paths.js'
import { must } from '../../failures/error.js'
import { readDocument, withIncludes } from './profile-document.js'

const Str = t.string
const Port = intBetween('Port', 1, 65535)

/** A full commit id, refused in words: what was expected, and what was given instead. */
const FullCommit = new t.Type<string, string, unknown>(
  'FullCommit',
  (u): u is string => typeof u === 'string' && /^[0-9a-f]{40}$/.test(u),
  (u, c) =>
    typeof u === 'string' && /^[0-9a-f]{40}$/.test(u)
      ? t.success(u)
      : t.failure(
          u,
          c,
          typeof u !== 'string'
            ? `expected a full 40-hex commit id (a string), got ${typeof u}`
            : u.length !== 40
              ? `expected a full 40-hex commit id, got ${u.length} characters (a short id, branch or tag is not a binding: \`git rev-parse\` it)`
              : 'expected a full 40-hex commit id in lower case, got other characters'
        ),
  t.identity
)

/** @category Client */
export const SourceSection = t.intersection(
  [
    t.type({ repository: Str, url: Str, commit: FullCommit }),
    t.partial({
      extensions: t.array(Str),
      cache_dir: Str,
      cache: t.boolean,
      /** The repository's web view of one window: `https://github.com/OWNER/REPO/blob/{commit}/{path}#L{start}-L{end}`. */
      web_view: Str,
      /** Source queries with few hits say what they missed in any case or inside longer words (default true). */
      missed_matches: t.boolean
    })
  ],
  'SourceSection'
)

/** @category Client */
export const DatabaseSection = t.intersection(
  [
    t.type({
      client: t.keyof({ mysql2: null, 'better-sqlite3': null }),
      databases: t.array(Str),
      snapshot_id: Str,
      allowed_tables: t.record(Str, t.array(Str))
    }),
    t.partial({
      host: Str,
      port: Port,
      user: Str,
      password_env: Str,
      password_file: Str,
      filename: Str,
      connect_timeout_ms: intBetween('ConnectTimeoutMs', 1, 600_000)
    })
  ],
  'DatabaseSection'
)

/**
 * `[signing]`: the key every command appended under this profile is signed with (an OpenSSH
 * Ed25519 key file, relative to the profile; a passphrase-protected one through the SSH agent that
 * holds it), and its principal (default: the key's comment). `--sign-key` and VBA_SIGN_KEY win.
 * @category Client
 */
export const SigningSection = t.intersection([t.type({ key: Str }), t.partial({ principal: Str })], 'SigningSection')

/** @category Client */
export const SourceAnalysisSection = t.partial(
  {
    enabled: t.boolean,
    context_lines: intBetween('ContextLines', 0, 1000),
    max_searches: intBetween('MaxSearches', 1, 100),
    max_matches: intBetween('MaxMatches', 1, 10_000),
    max_files: intBetween('MaxFiles', 1, 10_000),
    max_blocks: intBetween('MaxBlocks', 1, 10_000),
    max_total_lines: intBetween('MaxTotalLines', 1, 100_000),
    registration_prefixes: t.array(Str),
    /** Where code lives in the snapshot (the rest may hold data dumps): source.context ranks it first, the prompt names it. */
    code_path_prefixes: t.array(Str),
    /** source.context matches a term of digits only as a whole number (not inside 6.223487f); default true. */
    whole_numbers: t.boolean
  },
  'SourceAnalysisSection'
)

/** `[loop]`: how the investigation loop treats invalid answers, and how long a prompt may be. @category Client */
export const LoopSection = t.partial(
  {
    max_invalid_responses: intBetween('MaxInvalidResponses', 1, 100),
    retry_delay_ms: intBetween('RetryDelayMs', 0, 7 * 24 * 3600 * 1000),
    prompt_max_chars: intBetween('PromptMaxChars', PROMPT_MIN_CHARS, 2_000_000)
  },
  'LoopSection'
)

/** `[contract]`: what the prompt's contract says beyond the allowlist: what no query can reach (client data). @category Client */
export const ContractSection = t.partial({ not_reachable: t.array(Str) }, 'ContractSection')

/** `[budget]`: the action budget of an investigation and what a project.query costs. @category Client */
export const BudgetSection = t.partial(
  {
    total: intBetween('BudgetTotal', 1, 1_000_000),
    project_query: intBetween('QueryCost', 1, 1_000_000),
    /** Model tokens the investigation may spend (as providers report them); unset: no limit. */
    max_tokens: intBetween('MaxTokens', 1, Number.MAX_SAFE_INTEGER)
  },
  'BudgetSection'
)

/**
 * `[model]`: the model `vba investigate` drives when no flag names one: a command run per turn, or
 * an OpenAI-compatible endpoint and model name. The API key is never in the profile: only the name
 * of the environment variable that holds it.
 * @category Client
 */
export const ModelSection = t.partial(
  {
    command: Str,
    url: Str,
    name: Str,
    api_key_env: Str,
    /** One request (an endpoint) or one run (a command) may take this long (default 300 000 ms). */
    timeout_ms: intBetween('ModelTimeoutMs', 1, 3_600_000),
    /** Requests sent for one answer at most, retries after 429, 5xx, timeouts and resets included (default 5). */
    max_attempts: intBetween('ModelMaxAttempts', 1, 20),
    /** All attempts for one answer, backoff waits included, take at most this long (default 900 000 ms). */
    max_total_ms: intBetween('ModelMaxTotalMs', 1, 24 * 3_600_000),
    temperature: t.number,
    /** The answer's token limit, sent as max_tokens. */
    max_tokens: intBetween('ModelMaxTokens', 1, 10_000_000),
    /** Ask for JSON mode (`response_format: {"type": "json_object"}`), for endpoints that support it. */
    json_mode: t.boolean,
    /** `vba investigate` says a request is still waiting this often (default 5000 ms). */
    heartbeat_ms: intBetween('ModelHeartbeatMs', 100, 600_000)
  },
  'ModelSection'
)

/** Every section and its keys; `[enrichment]` is checked by its own strict decoder. */
const KNOWN: Record<string, readonly string[] | null> = {
  source: ['repository', 'url', 'commit', 'extensions', 'cache_dir', 'cache', 'web_view', 'missed_matches'],
  database: [
    'client',
    'host',
    'port',
    'user',
    'password_env',
    'password_file',
    'filename',
    'databases',
    'snapshot_id',
    'allowed_tables',
    'connect_timeout_ms'
  ],
  limits: Object.keys(ProjectLimits.props),
  source_analysis: Object.keys(SourceAnalysisSection.props),
  loop: Object.keys(LoopSection.props),
  budget: Object.keys(BudgetSection.props),
  model: Object.keys(ModelSection.props),
  contract: Object.keys(ContractSection.props),
  signing: ['key', 'principal'],
  enrichment: null
}

export type LoopSection = t.TypeOf<typeof LoopSection>
export type BudgetSection = t.TypeOf<typeof BudgetSection>
export type ModelSection = t.TypeOf<typeof ModelSection>
export type ContractSection = t.TypeOf<typeof ContractSection>
export type SourceSection = t.TypeOf<typeof SourceSection>
export type DatabaseSection = t.TypeOf<typeof DatabaseSection>
export type SourceAnalysisSection = t.TypeOf<typeof SourceAnalysisSection>
export type SigningSection = t.TypeOf<typeof SigningSection>

/** A decoded profile with every path absolute. @category Client */
export interface Profile {
  readonly file: string
  readonly dir: string
  readonly source?: SourceSection
  readonly database?: DatabaseSection
  readonly limits: ProjectLimits
  readonly sourceAnalysis: SourceAnalysisSection
  readonly loop: LoopSection
  readonly budget: BudgetSection
  readonly model: ModelSection
  readonly contract: ContractSection
  /** Who signs the commands appended under this profile; `key` is absolute. */
  readonly signing?: SigningSection
  /** The whole document as parsed ([enrichment] is decoded where it is used, strictly). */
  readonly raw: Readonly<Record<string, unknown>>
}

/** What research under this profile is bound to: the repository's recorded URL and commit, and the world database's snapshot. */
export const bindingOf = (profile: Profile): Binding => ({
  source: profile.source === undefined ? null : { url: profile.source.url, commit: profile.source.commit },
  database:
    profile.database === undefined
      ? null
      : {
          client: profile.database.client,
          databases: [...profile.database.databases],
          snapshot_id: profile.database.snapshot_id
        }
})

const configError = (file: string, message: string): Failure =>
  failure('CONFIG_INVALID', `${path.basename(file)}: ${message}`, { file })

/** Decodes profile text (exposed for tests); `file` locates relative paths. */
export const decodeProfile = (file: string, text: string): E.Either<Failure, Profile> => {
  let doc: Record<string, unknown>
  try {
    doc = parseToml(text) as Record<string, unknown>
  } catch (e) {
    const where = e instanceof TomlError ? ` (line ${e.line}, column ${e.column})` : ''
    return E.left(configError(file, `not valid TOML${where}`))
  }
  return decodeProfileDocument(file, doc)
}

/**
 * A profile from a plain object with the same sections as the TOML file (`{ source: {…},
 * database: {…}, limits: {…} }`), checked exactly like a file. Relative paths resolve against
 * `baseDir`.
 * @category Client
 */
export const profileFromObject = (doc: unknown, baseDir: string): E.Either<Failure, Profile> => {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    return E.left(failure('CONFIG_INVALID', 'a profile is an object of sections ({ source, database, limits, … })'))
  // A plain object may hold what TOML cannot (undefined, functions): keep only JSON.
  let json: unknown
  try {
    json = JSON.parse(JSON.stringify(doc))
  } catch {
    return E.left(failure('CONFIG_INVALID', 'a profile object must be plain JSON'))
  }
  return decodeProfileDocument(path.join(path.resolve(baseDir), '(profile object)'), json as Record<string, unknown>)
}

/** The document's sections and keys are all known ones, each section a table. */
const checkSections = (file: string, doc: Record<string, unknown>): E.Either<Failure, void> => {
  for (const [section, value] of Object.entries(doc)) {
    // Own keys only: a section named after an Object.prototype member ([constructor]) is unknown too.
    if (!Object.hasOwn(KNOWN, section))
      return E.left(configError(file, `unknown section [${section}] (known: ${Object.keys(KNOWN).join(', ')})`))
    const keys = KNOWN[section]
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return E.left(configError(file, `[${section}] is a table`))
    if (keys !== null && keys !== undefined) {
      const unknown = Object.keys(value).filter((k) => !keys.includes(k))
      if (unknown.length > 0)
        return E.left(
          configError(
            file,
            `unknown key ${unknown.map((k) => `[${section}].${k}`).join(', ')} (known: ${keys.join(', ')})`
          )
        )
    }
  }
  return E.right(undefined)
}

const decodeProfileDocument = (file: string, doc: Record<string, unknown>): E.Either<Failure, Profile> => {
  if (doc['include'] !== undefined)
    return E.left(configError(file, 'include is followed only when the profile is read from a file (loadProfile)'))
  const sections = checkSections(file, doc)
  if (E.isLeft(sections)) return sections
  if (doc['enrichment'] !== undefined) {
    const e = decodeEnrichment(doc['enrichment'])
    if (E.isLeft(e)) return E.left(configError(file, e.left.message))
  }
  const dir = path.dirname(path.resolve(file))
  const abs = (p: string): string => path.resolve(dir, p)
  const section = <A>(name: string, codec: t.Decoder<unknown, A>): E.Either<Failure, A | undefined> => {
    if (doc[name] === undefined) return E.right(undefined)
    const r = codec.decode(doc[name])
    return E.isLeft(r) ? E.left(configError(file, `[${name}] ${describeErrors(r.left)}`)) : E.right(r.right)
  }
  const source = section('source', SourceSection)
  if (E.isLeft(source)) return source
  const database = section('database', DatabaseSection)
  if (E.isLeft(database)) return database
  const limitsPart = section('limits', t.partial(ProjectLimits.props))
  if (E.isLeft(limitsPart)) return limitsPart
  const limits = ProjectLimits.decode({ ...DEFAULT_LIMITS, ...(limitsPart.right ?? {}) })
  if (E.isLeft(limits)) return E.left(configError(file, `[limits] ${describeErrors(limits.left)}`))
  const analysis = section('source_analysis', SourceAnalysisSection)
  if (E.isLeft(analysis)) return analysis
  for (const prefix of analysis.right?.code_path_prefixes ?? []) {
    if (E.isLeft(checkSourcePath('path_prefix', prefix)))
      return E.left(
        configError(
          file,
          `[source_analysis].code_path_prefixes: ${JSON.stringify(prefix.slice(0, 80))} is not a relative path prefix`
        )
      )
  }
  const loop = section('loop', LoopSection)
  if (E.isLeft(loop)) return loop
  const budget = section('budget', BudgetSection)
  if (E.isLeft(budget)) return budget
  const model = section('model', ModelSection)
  if (E.isLeft(model)) return model
  const contract = section('contract', ContractSection)
  if (E.isLeft(contract)) return contract
  const signing = section('signing', SigningSection)
  if (E.isLeft(signing)) return signing
  const web = source.right?.web_view
  if (web !== undefined && (!/^https?:\/\/[^\s]+$/.test(web) || !web.includes('{path}')))
    return E.left(
      configError(
        file,
        '[source].web_view is an http(s) address with {path} (and {commit}, {start}, {end} where they go)'
      )
    )
  if (source.right?.cache === false && source.right.cache_dir !== undefined)
    return E.left(configError(file, '[source] takes cache = false or a cache_dir, not both'))
  const db = database.right
  if (db !== undefined) {
    if (db.databases.length === 0) return E.left(configError(file, '[database].databases names at least one database'))
    if (db.client === 'better-sqlite3' && db.filename === undefined)
      return E.left(configError(file, '[database].filename is required for better-sqlite3'))
    if (db.client === 'mysql2' && (db.host === undefined || db.user === undefined))
      return E.left(configError(file, '[database] needs host and user for mysql2'))
    if (db.password_env !== undefined && db.password_file !== undefined)
      return E.left(configError(file, '[database] takes password_env or password_file, not both'))
  }
  return E.right({
    file: path.resolve(file),
    dir,
    ...(source.right === undefined
      ? {}
      : {
          source: {
            ...source.right,
            repository: abs(source.right.repository),
            ...(source.right.cache_dir === undefined ? {} : { cache_dir: abs(source.right.cache_dir) })
          }
        }),
    ...(db === undefined
      ? {}
      : {
          database: {
            ...db,
            ...(db.filename === undefined ? {} : { filename: abs(db.filename) }),
            ...(db.password_file === undefined ? {} : { password_file: abs(db.password_file) })
          }
        }),
    limits: limits.right,
    sourceAnalysis: analysis.right ?? {},
    loop: loop.right ?? {},
    budget: budget.right ?? {},
    model: model.right ?? {},
    contract: contract.right ?? {},
    ...(signing.right === undefined ? {} : { signing: { ...signing.right, key: abs(signing.right.key) } }),
    raw: doc
  })
}

/** Reads and decodes a profile, following its include (CONFIG_NOT_FOUND, CONFIG_INVALID). */
export const loadProfile = async (file: string): Promise<Profile> =>
  must(decodeProfileDocument(file, await withIncludes(file, await readDocument(file))))
