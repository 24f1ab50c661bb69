/**
 * What every namespace of the client shares: the options, the clock, the profile, the project
 * research (opened on first use), the SQL store (when `options.store` names one), where a case is,
 * and whether the client is closed. {@link openVba} builds one context and hands it to each
 * namespace module (cases, research, investigations, transport, queue).
 */
import { failure } from '../failures/failure.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import type { AppendOutcome } from '../adapters/case-store/append.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { openStore } from '../adapters/stores.js'
import { loadProfile, profileFromObject, type Profile } from '../adapters/config/profile.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { readSigner } from '../adapters/ssh-keys.js'
import { createProjectResearch, type ProjectResearch } from '../research/project-research.js'
import { openSourceResearch } from '../research/source/open.js'
import { VbaError, orThrow, settle } from './errors.js'
import type { Appended, VbaOptions, VerifyCaseOptions, WriteOptions } from './types.js'
import { optional } from '../optional.js'

/** Runs an append (its failure as a VbaError, see `settle`); its outcome as the client returns it. */
export const appended = async (append: () => Promise<AppendOutcome>): Promise<Appended> => {
  const o = await settle(append)
  return { status: o.status, commandId: o.commandId, generation: o.generation, receipt: o.receipt }
}

/** The refusal of a method that needs a profile the client was opened without. */
export const noProfile = (): VbaError =>
  new VbaError(failure('CONFIG_INVALID', 'this needs a project profile: openVba({ profile: "project.toml" })'))

/** The state one client's namespaces share (internal to src/api). */
export interface ClientContext {
  readonly options: VbaOptions
  readonly env: Env
  readonly profile: Profile | null
  /** Refuses once the client is closed. */
  readonly live: () => void
  /** The project research (needs a profile), opened on first use. */
  readonly researchOf: () => ProjectResearch
  /** Where a case is: a case id in the store, or a directory. */
  readonly at: (ref: string) => CaseAt
  /** The SQL store, or STORE_INVALID when the client has none. */
  readonly needStore: () => SqlStore
  /** Refuses (STORE_INVALID) when the client has a SQL store: `what` is for case directories. */
  readonly directoryOnly: (what: string) => void
  /** The report with its evidence re-derived from the world a profile reaches (`against`). */
  readonly rederived: (
    where: CaseAt,
    report: VerifyReport,
    against: NonNullable<VerifyCaseOptions['against']>,
    onProgress?: VerifyCaseOptions['onProgress']
  ) => Promise<VerifyReport>
  /** A write's options for the commands: the clock, command id and expected generation. */
  readonly write: (o: WriteOptions) => {
    readonly env: Env
    readonly commandId?: string
    readonly expectedGeneration?: number
  }
  /** Closes the client: research and store released, every later call refused. */
  readonly close: () => Promise<void>
}

/** Loads the profile and opens the store of a client's options. */
export const clientContext = async (options: VbaOptions): Promise<ClientContext> => {
  const clock = options.clock ?? systemEnv
  const profile: Profile | null =
    options.profile === undefined
      ? null
      : typeof options.profile === 'string'
        ? await settle(() => loadProfile(options.profile as string))
        : orThrow(profileFromObject(options.profile, options.baseDir ?? process.cwd()))
  const signing = profile?.signing
  const signer =
    options.signer ??
    (signing === undefined ? undefined : await settle(() => readSigner(signing.key, signing.principal)))
  const env: Env = signer === undefined ? clock : { ...clock, signer }
  let research: ProjectResearch | null = null
  let closed = false
  const live = (): void => {
    if (closed) throw new VbaError(failure('INVALID_ARGUMENT', 'the client is closed'))
  }
  const researchOf = (): ProjectResearch => {
    live()
    if (profile === null) throw noProfile()
    research ??= createProjectResearch(profile, {
      openSource: openSourceResearch,
      ...optional('env', options.environment),
      ...optional('onNotice', options.onNotice)
    })
    return research
  }
  let store: SqlStore | null = null
  if (options.store !== undefined) {
    const url = options.store
    store = await settle(() =>
      openStore(url, {
        ...optional('environment', options.environment),
        migrate: options.migrate === true
      })
    )
  }
  const at = (ref: string): CaseAt => {
    live()
    return store === null ? ref : { store, caseId: ref }
  }
  const rederived: ClientContext['rederived'] = async (where, report, against, onProgress) => {
    const world =
      against === true
        ? (profile ??
          (() => {
            throw noProfile()
          })())
        : typeof against === 'string'
          ? await settle(() => loadProfile(against))
          : orThrow(profileFromObject(against, options.baseDir ?? process.cwd()))
    const { rederiveEvidence, withEvidence } = await import('../research/rederive.js')
    return withEvidence(
      report,
      await settle(() =>
        rederiveEvidence(where, world, {
          ...optional('env', options.environment),
          onProgress: (done, total) => onProgress?.('evidence', done, total)
        })
      )
    )
  }
  const directoryOnly = (what: string): void => {
    if (store !== null)
      throw new VbaError(
        failure('STORE_INVALID', `${what} is for case directories; a SQL store keeps no crash leftovers or lock files`)
      )
  }
  const needStore = (): SqlStore => {
    live()
    if (store === null)
      throw new VbaError(
        failure('STORE_INVALID', 'this needs a SQL store: openVba({ store: "postgres://user@host/db" })')
      )
    return store
  }
  const write = (o: WriteOptions) => ({
    env,
    ...optional('commandId', o.commandId),
    ...optional('expectedGeneration', o.expectedGeneration)
  })
  const close = async (): Promise<void> => {
    closed = true
    const r = research
    research = null
    if (r !== null) await r.close()
    const st = store
    store = null
    if (st !== null) await st.close()
  }
  return { options, env, profile, live, researchOf, at, needStore, directoryOnly, rederived, write, close }
}
