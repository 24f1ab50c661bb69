/**
 * The public client: one object built from one options object, with namespaces for cases,
 * research, investigations and transport, and a `close()` that releases every pool and handle.
 * Every method returns a Promise and rejects with a {@link VbaError}. The library never calls a
 * model on its own: investigations take the controller's model function.
 */
import * as path from 'node:path'
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import type { CaseState } from '../domain/case-state.js'
import type { Author } from '../domain/inputs-decider.js'
import type { Capture } from '../events/capture.js'
import type { InvestigationSettings } from '../events/catalog.js'
import type { RecordedEvent } from '../events/chain.js'
import type { Finding } from '../events/findings.js'
import type { AppendOutcome, Receipt } from '../adapters/case-store/append.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'
import { createCaseAt, openCaseAt, readObjectAt, replayAt, verifyAt } from '../adapters/case-store/at.js'
import type { CaseAt, Lease } from '../adapters/case-store/store.js'
import { listDirectoryQueue } from '../adapters/case-store/directory-queue.js'
import { migrateStore, openSqlStore, type SqlStore } from '../adapters/sql-store/sql-store.js'
import { FailureError } from '../adapters/fs-util.js'
import type { QueueEntry } from '../projections/queue.js'
import { work, type WorkEvent, type WorkSummary } from '../investigation/worker.js'
import { caseReport } from '../report/case-report.js'
import { gcCase, type GcReport } from '../adapters/case-store/gc.js'
import { breakLock, type LockState } from '../adapters/case-store/lock.js'
import { loadProfile, profileFromObject, type Profile } from '../adapters/config/profile.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { exportCase, type ExportReport } from '../adapters/bagit/export.js'
import { importCase, verifyBag, withVerifiedPackage, type BagCheck, type ImportReport } from '../adapters/bagit/import.js'
import { defaultProjections } from '../projections/defaults.js'
import { lifecycleView, type LifecycleView } from '../projections/lifecycle.js'
import type { RenderedPrompt } from '../projections/prompt.js'
import { createProjectResearch, type ProjectResearch } from '../research/project-research.js'
import { openSourceResearch } from '../research/source/open.js'
import type { SnapshotNotice } from '../adapters/git/snapshot.js'

/** A notice about the persisted snapshot index of a source commit. */
export type SourceNotice = SnapshotNotice
import { queryInCase, type CaseQueryResult } from '../research/case-query.js'
import { enrichmentConfig, prepareRevision, type PrepareResult, type RevisionInputs } from '../research/prepare.js'
import type { Fact } from '../research/enrich.js'
import { addAttachment, cancelPlan, recordNote, topUpBudget } from '../investigation/commands.js'
import { advance, nextPrompt, recordFeedback, resumeCase, startInvestigation, type AdvanceResult, type AdvanceStep, type ModelFn } from '../investigation/loop.js'
import { settingsOf } from '../investigation/settings.js'
import { VbaError, settle } from './errors.js'

/** A profile as a plain object: the same sections as the TOML file. */
export type ProfileObject = Readonly<Record<string, unknown>>

/** Options of {@link openVba}. */
export interface VbaOptions {
  /**
   * The project profile: the path of a TOML file, or the same sections as a plain object
   * (`{ source: {…}, database: {…}, limits: {…} }`). Without a profile, cases can be written,
   * verified, replayed and moved, but no research runs.
   */
  readonly profile?: string | ProfileObject
  /** Where the relative paths of an object profile resolve (default: the working directory). */
  readonly baseDir?: string
  /** Environment variables for `password_env` and the snapshot index location (`XDG_CACHE_HOME`, `HOME`) (default: `process.env`). */
  readonly environment?: Readonly<Record<string, string | undefined>>
  /** Clock and id source (tests pin them; default: the system clock and random UUIDs). */
  readonly clock?: Env
  /**
   * A SQL store of cases (`postgres://user@host:5432/db` or `mysql://user@host:3306/db`, a
   * password through `?password_env=VAR`). With a store, every `dir` argument is a case id in it,
   * and `queue` can claim work. Without one, cases are directories.
   */
  readonly store?: string
  /** Run the store's schema migrations when the client opens (default false: `vba store migrate`). */
  readonly migrate?: boolean
  /**
   * Told when the persisted snapshot index of the source commit is built, found damaged (it is then
   * rebuilt, never served) or cannot be written (research then reads git directly). The index lives
   * in `[source] cache_dir`, else `$XDG_CACHE_HOME/vba`, else `~/.cache/vba`; `cache = false` in
   * `[source]` turns it off.
   */
  readonly onNotice?: (notice: SourceNotice) => void
}

/** What an append returns: the command's outcome and its receipt (keep it; see `verify`). */
export interface Appended {
  /** `appended`, or `duplicate` when the command id was recorded before (nothing new written). */
  readonly status: 'appended' | 'duplicate'
  readonly commandId: string
  /** The case's generation (its last seq) after the command. */
  readonly generation: number
  /** The command's last event as `{seq, hash}`: proof against a later rollback. */
  readonly receipt: Receipt
}

/** Options every write takes. */
export interface WriteOptions {
  /** Idempotency key: a retry with the same id returns the recorded outcome (default: a new id). */
  readonly commandId?: string
  /** Refuse with GENERATION_CONFLICT unless the case is at this generation. */
  readonly expectedGeneration?: number
}

/** The state of a case: its lifecycle, budget, hypotheses and conclusion, at its head. */
export interface CaseStatus extends LifecycleView {
  readonly case_id: string
  readonly title: string | null
  /** The last seq (every event counts). */
  readonly generation: number
  readonly head: Receipt
  /** Crash leftovers seen (notices; they do not make the case invalid). */
  readonly notices: readonly Finding[]
}

/** The cases: create, write notes and attachments, read their state, verify, replay, clean up. */
export interface CasesApi {
  /** Creates an empty case: a package in `dir` (which must not exist or be empty), or the case id `dir` in the store. */
  create(dir: string, options?: { readonly id?: string; readonly title?: string }): Promise<{ readonly case_id: string; readonly dir: string }>
  /** Records a note by an operator (default) or the controller. */
  note(dir: string, note: { readonly text: string; readonly format?: 'plain' | 'markdown'; readonly author?: Author } & WriteOptions): Promise<Appended>
  /** Adds a file handed in by a person (a log, a screenshot) as an object. */
  attach(dir: string, attachment: { readonly name: string; readonly bytes: Uint8Array; readonly mediaType?: string; readonly author?: Author } & WriteOptions): Promise<Appended>
  /** The case's state at its head, folded from the log alone. */
  status(dir: string): Promise<CaseStatus>
  /** The facts of the latest completed revision, or null before the first one. */
  facts(dir: string): Promise<readonly Fact[] | null>
  /** Every event, decoded and upcast, in order (for your own views). */
  events(dir: string): Promise<readonly RecordedEvent[]>
  /**
   * Full verification: chain, rules, every object; with `expectHead` (a receipt kept elsewhere),
   * a rollback or a fork is a finding. Problems of the case are findings, never a rejection.
   */
  verify(dir: string, options?: { readonly expectHead?: Receipt; readonly onProgress?: (phase: 'log' | 'objects', done: number, total: number) => void }): Promise<VerifyReport>
  /** The case report: one self-contained HTML page (deterministic; no script, no outside resource). */
  report(dir: string): Promise<string>
  /** Every projection's view, from the log alone. */
  replay(dir: string): Promise<{ readonly case_id: string; readonly generation: number; readonly head_hash: string; readonly views: Record<string, { readonly version: number; readonly view: unknown }> }>
  /** Removes what interrupted writers left (orphan objects, old temporary files, a torn tail). Directories only. */
  gc(dir: string): Promise<GcReport>
  /** Removes the lock of a writer that is gone (a live one only with `force`). Directories only. */
  unlock(dir: string, options?: { readonly force?: boolean }): Promise<LockState>
}

/** Research: one project.query without a case, or recorded in one. */
export interface ResearchApi {
  /** Decodes `args` as a project.query and answers it with a capture (nothing is recorded). */
  query(args: unknown): Promise<Capture>
  /**
   * Runs a query inside a case: reserves budget for exactly this request, records the capture as
   * evidence (or the failure). The same `commandId` retries the same reservation after an outage.
   */
  queryInCase(dir: string, args: unknown, options?: { readonly commandId?: string }): Promise<CaseQueryResult>
}

/** Options of {@link InvestigationsApi.advance}. */
export interface AdvanceOptions {
  /** Your model: a request in (prompt, stable prefix, turn, phase, abort signal), the raw answer out. */
  readonly model: ModelFn
  /** Model turns to run at most in this call (default 20). */
  readonly maxTurns?: number
  /** Resume a timed block or retry research now, before its retry time (recorded). */
  readonly manualRetry?: boolean
  readonly expectedGeneration?: number
  /** Stops the loop between steps, and is handed to the model function. */
  readonly signal?: AbortSignal
  /** Called after every step (a model turn, research, a resume). */
  readonly onStep?: (step: AdvanceStep) => void
}

/** Investigations: prepare a revision, start, advance with your model, resume, feedback. */
export interface InvestigationsApi {
  /**
   * Records a bug report (and its entities and attachments) as a revision and runs the profile's
   * `[enrichment]`. The same inputs again change nothing; new inputs make a new revision.
   */
  prepare(dir: string, inputs: RevisionInputs, options?: { readonly author?: Author }): Promise<PrepareResult>
  /** Starts the investigation from the latest completed revision, with the profile's settings. */
  start(dir: string, options?: { readonly settings?: InvestigationSettings; readonly commandId?: string }): Promise<{ readonly generation: number }>
  /**
   * Runs the loop until the case concludes, is exhausted or blocked, or `maxTurns` model turns ran.
   * A model function that throws is recorded, and the case waits as MODEL_UNAVAILABLE.
   */
  advance(dir: string, options: AdvanceOptions): Promise<AdvanceResult>
  /** Resumes a case blocked for invalid answers or an unavailable model (see the retry time). */
  resume(dir: string, options: { readonly manualRetry: boolean; readonly expectedGeneration?: number }): Promise<AdvanceResult>
  /** Records lab test feedback; a case waiting for it continues. */
  feedback(dir: string, feedback: { readonly requestId: string; readonly text: string; readonly commandId?: string }): Promise<{ readonly generation: number }>
  /** An operator cancels the confirmed plan waiting to be carried out; its budget is released. */
  cancelPlan(dir: string, options: { readonly reason: string; readonly reservationId?: string } & WriteOptions): Promise<Appended>
  /** An operator adds budget to a running investigation, with a reason. */
  topUp(dir: string, options: { readonly amount: number; readonly reason: string } & WriteOptions): Promise<Appended>
  /** The next prompt, rendered from the log and its objects (what the model would see). */
  nextPrompt(dir: string): Promise<RenderedPrompt>
}

/** Transport: BagIt bags (deterministic tar or directory), verified before anything is imported. */
export interface TransportApi {
  /**
   * Exports a case as a BagIt 1.0 bag: a deterministic tar (default) or a directory. An existing
   * `out` is refused (OUTPUT_EXISTS) unless `force`, which replaces a regular file only; its
   * directory must exist (OUTPUT_DIR_MISSING).
   */
  export(dir: string, out: string, options?: { readonly format?: 'tar' | 'dir'; readonly force?: boolean; readonly onProgress?: (done: number, total: number) => void }): Promise<ExportReport>
  /** Verifies a bag completely, then moves its case into `dir`. */
  import(archive: string, dir: string, options?: { readonly onProgress?: (done: number, total: number) => void }): Promise<ImportReport>
  /**
   * Verifies a case directory, bag directory or bag archive completely, then copies its case into
   * the client's store (CASE_EXISTS when the id is taken). Needs `store`.
   */
  importIntoStore(source: string, options?: { readonly onProgress?: (done: number, total: number) => void }): Promise<{ readonly case_id: string; readonly generation: number }>
  /** Verifies a bag (archive or directory) and the case in it. */
  verify(target: string, options?: { readonly expectHead?: Receipt }): Promise<BagCheck>
}

/** Options of {@link QueueApi.work}. */
export interface WorkOptions {
  /** Your model, for every case the worker advances. */
  readonly model: ModelFn
  /** This worker's name, recorded with its leases (default host.pid). */
  readonly worker?: string
  /** Cases advanced at the same time (default 1). */
  readonly concurrency?: number
  /** Lease length, renewed every third of it (default 60 000 ms). */
  readonly leaseMs?: number
  /** How long an idle worker waits before asking again (default 1000 ms). */
  readonly pollMs?: number
  /** Model turns per claim (default 20). */
  readonly maxTurns?: number
  /** Return once nothing is runnable or leased (default: run until the signal). */
  readonly untilIdle?: boolean
  /** Stops the worker: the case in hand stops at its next step boundary and is released. */
  readonly signal?: AbortSignal
  readonly onEvent?: (e: WorkEvent) => void
}

/**
 * The work queue: which cases can run now and why the others cannot, and leases so a fleet never
 * advances one case twice at once. Listing works on a folder of case directories too; claims,
 * leases and `work` need the client's `store`.
 */
export interface QueueApi {
  /** Every case with its queue row, runnable ones first (`root`: a folder of case directories, without a store). */
  list(root?: string): Promise<readonly QueueEntry[]>
  /** Leases one runnable case to `worker`, or null when nothing is runnable. */
  claim(worker: string, options?: { readonly leaseMs?: number }): Promise<Lease | null>
  /** Extends a lease still held (LEASE_LOST otherwise). */
  renew(lease: Lease, options?: { readonly leaseMs?: number }): Promise<Lease>
  /** Gives a case back to the queue; false when the lease was not held any more. */
  release(lease: Lease): Promise<boolean>
  /** Advances one claimed case under its lease with your model (appends are refused once the lease is lost). */
  advance(lease: Lease, options: AdvanceOptions): Promise<AdvanceResult>
  /** The worker loop: claim, advance, release, repeat, with the profile's research and settings. */
  work(options: WorkOptions): Promise<WorkSummary>
}

/** The client. */
export interface Vba {
  /** The decoded profile, or null without one. */
  readonly profile: Profile | null
  readonly cases: CasesApi
  readonly research: ResearchApi
  readonly investigations: InvestigationsApi
  readonly transport: TransportApi
  readonly queue: QueueApi
  /** Releases every pool and handle (database connections, repositories). The process can then exit. */
  close(): Promise<void>
}

/** Runs library code that throws coded failures, rejecting with a VbaError instead. */
const thrown = async <A>(body: () => Promise<A>): Promise<A> => {
  try {
    return await body()
  } catch (e) {
    if (e instanceof FailureError) throw new VbaError(e.failure)
    throw e
  }
}

const appended = (o: AppendOutcome): Appended => ({ status: o.status, commandId: o.commandId, generation: o.generation, receipt: o.receipt })

const noProfile = (): VbaError => new VbaError(failure('CONFIG_INVALID', 'this needs a project profile: openVba({ profile: "project.toml" })'))

/**
 * Opens a client.
 *
 * @example
 * const vba = await openVba({ profile: 'project.toml' })
 * try {
 *   const status = await vba.cases.status('cases/bug-20')
 * } finally {
 *   await vba.close()
 * }
 */
export const openVba = async (options: VbaOptions = {}): Promise<Vba> => {
  const env = options.clock ?? systemEnv
  const profile: Profile | null = options.profile === undefined
    ? null
    : typeof options.profile === 'string'
      ? await settle(() => loadProfile(options.profile as string)())
      : await settle(async () => profileFromObject(options.profile, options.baseDir ?? process.cwd()))
  let research: ProjectResearch | null = null
  let closed = false
  const live = (): void => {
    if (closed) throw new VbaError(failure('INVALID_ARGUMENT', 'the client is closed'))
  }
  const researchOf = (): ProjectResearch => {
    live()
    if (profile === null) throw noProfile()
    research ??= createProjectResearch(profile, { openSource: openSourceResearch, ...(options.environment === undefined ? {} : { env: options.environment }), ...(options.onNotice === undefined ? {} : { onNotice: options.onNotice }) })
    return research
  }
  let store: SqlStore | null = null
  if (options.store !== undefined) {
    const url = options.store
    const storeOptions = options.environment === undefined ? {} : { environment: options.environment }
    if (options.migrate === true) await thrown(() => migrateStore(url, storeOptions))
    store = await thrown(() => openSqlStore(url, storeOptions))
  }
  /** Where a case is: a case id in the store, or a directory. */
  const at = (ref: string): CaseAt => {
    live()
    return store === null ? ref : { store, caseId: ref }
  }
  const directoryOnly = (what: string): void => {
    if (store !== null) throw new VbaError(failure('STORE_INVALID', `${what} is for case directories; a SQL store keeps no crash leftovers or lock files`))
  }
  const needStore = (): SqlStore => {
    live()
    if (store === null) throw new VbaError(failure('STORE_INVALID', 'this needs a SQL store: openVba({ store: "postgres://user@host/db" })'))
    return store
  }
  const write = (o: WriteOptions) => ({ env, ...(o.commandId === undefined ? {} : { commandId: o.commandId }), ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }) })

  const cases: CasesApi = {
    create: async (dir, o = {}) => {
      const where = at(dir)
      const d = await settle(() => createCaseAt(where, { env, ...(o.id === undefined ? {} : { caseId: o.id }), ...(o.title === undefined ? {} : { title: o.title }) })())
      return { case_id: d.case_id, dir: typeof where === 'string' ? path.resolve(dir) : d.case_id }
    },
    note: async (dir, n) => appended(await settle(() => recordNote(at(dir), { text: n.text, ...(n.format === undefined ? {} : { format: n.format }), ...(n.author === undefined ? {} : { author: n.author }), ...write(n) }))),
    attach: async (dir, a) => appended(await settle(() => addAttachment(at(dir), { name: a.name, bytes: a.bytes, ...(a.mediaType === undefined ? {} : { mediaType: a.mediaType }), ...(a.author === undefined ? {} : { author: a.author }), ...write(a) }))),
    status: async (dir) => {
      const h = await settle(() => openCaseAt(at(dir))())
      const s: CaseState = h.cursor.state
      return { case_id: h.declaration.case_id, title: h.declaration.title ?? null, generation: h.cursor.seq, head: { seq: h.cursor.seq, hash: h.cursor.hash }, notices: h.notices, ...lifecycleView(s) }
    },
    facts: async (dir) => {
      const where = at(dir)
      const h = await settle(() => openCaseAt(where)())
      const ref = h.cursor.state.facts
      if (ref === null) return null
      const bytes = await settle(() => readObjectAt(where, ref)())
      return (JSON.parse(bytes.toString('utf8')) as { facts: Fact[] }).facts
    },
    events: async (dir) => {
      const all: RecordedEvent[] = []
      await settle(() => replayAt(at(dir), [{ name: 'events', version: 1, init: () => all, evolve: (s: RecordedEvent[], e: RecordedEvent) => { s.push(e); return s }, view: () => null }])())
      return all
    },
    verify: async (dir, o = {}) => settle(() => verifyAt(at(dir), { ...(o.expectHead === undefined ? {} : { expectHead: o.expectHead }), ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    replay: async (dir) => {
      const r = await settle(() => replayAt(at(dir), defaultProjections())())
      return { case_id: r.case_id, generation: r.generation, head_hash: r.head_hash, views: r.views }
    },
    report: async (dir) => thrown(() => caseReport(at(dir))),
    gc: async (dir) => {
      directoryOnly('gc')
      return settle(() => gcCase(dir)())
    },
    unlock: async (dir, o = {}) => settle(async () => {
      directoryOnly('unlock')
      try {
        return E.right(await breakLock(dir, { force: o.force === true }))
      } catch (e) {
        const f = (e as { failure?: Failure }).failure
        if (f !== undefined) return E.left(f)
        throw e
      }
    })
  }

  const researchApi: ResearchApi = {
    query: async (args) => settle(() => researchOf().query(args)()),
    queryInCase: async (dir, args, o = {}) => settle(() => queryInCase(at(dir), researchOf(), args, o.commandId ?? `query-${env.newId()}`, { env }))
  }

  const advanceOptions = (o: AdvanceOptions) => ({
    model: o.model,
    env,
    ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
    ...(o.manualRetry === undefined ? {} : { manualRetry: o.manualRetry }),
    ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
    ...(o.onStep === undefined ? {} : { onStep: o.onStep })
  })

  const investigations: InvestigationsApi = {
    prepare: async (dir, inputs, o = {}) => {
      const r = researchOf()
      if (profile === null) throw noProfile()
      const config = await settle(async () => enrichmentConfig(profile))
      return settle(() => prepareRevision(at(dir), r, config, inputs, { env, ...(o.author === undefined ? {} : { author: o.author }) }))
    },
    start: async (dir, o = {}) => {
      live()
      const settings = o.settings ?? (profile === null ? null : await settle(async () => settingsOf(profile)))
      if (settings === null) throw noProfile()
      const generation = await settle(() => startInvestigation(at(dir), { settings, env, ...(o.commandId === undefined ? {} : { commandId: o.commandId }) }))
      return { generation }
    },
    advance: async (dir, o) => settle(() => advance(at(dir), { ...advanceOptions(o), research: researchOf() })),

    resume: async (dir, o) => settle(() => resumeCase(at(dir), { manualRetry: o.manualRetry, env, ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }) })),
    feedback: async (dir, f) => ({ generation: await settle(() => recordFeedback(at(dir), f.requestId, f.text, { env, ...(f.commandId === undefined ? {} : { commandId: f.commandId }) })) }),
    cancelPlan: async (dir, o) => appended(await settle(() => cancelPlan(at(dir), { reason: o.reason, ...(o.reservationId === undefined ? {} : { reservationId: o.reservationId }), ...write(o) }))),
    topUp: async (dir, o) => appended(await settle(() => topUpBudget(at(dir), { amount: o.amount, reason: o.reason, ...write(o) }))),
    nextPrompt: async (dir) => settle(() => nextPrompt(at(dir)))
  }

  const transport: TransportApi = {
    export: async (dir, out, o = {}) => settle(() => exportCase(at(dir), out, { format: o.format ?? 'tar', ...(o.force === undefined ? {} : { force: o.force }), ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    import: (archive, dir, o = {}) => settle(() => importCase(archive, dir, { ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    verify: (target, o = {}) => settle(() => verifyBag(target, {}, o.expectHead === undefined ? {} : { expectHead: o.expectHead })()),
    importIntoStore: async (source, o = {}) => {
      const s = needStore()
      return thrown(() => withVerifiedPackage(source, (d) => s.importDirectory(d), o.onProgress === undefined ? {} : { onProgress: o.onProgress }))
    }
  }


  const queue: QueueApi = {
    list: async (root) => {
      live()
      if (root !== undefined) return thrown(() => listDirectoryQueue(root))
      return thrown(() => needStore().list())
    },
    claim: async (worker, o = {}) => thrown(() => needStore().claim(worker, o.leaseMs ?? 60_000)),
    renew: async (lease, o = {}) => thrown(() => needStore().renew(lease, o.leaseMs ?? 60_000)),
    release: async (lease) => thrown(() => needStore().release(lease)),
    advance: async (lease, o) => {
      const s = needStore()
      return settle(() => advance({ store: s, caseId: lease.caseId }, { ...advanceOptions(o), research: researchOf(), lease }))
    },
    work: async (o) => {
      const s = needStore()
      const r = researchOf()
      const settings = profile === null ? null : await settle(async () => settingsOf(profile))
      return thrown(() => work({
        store: s,
        model: o.model,
        research: r,
        worker: o.worker ?? `${hostname()}.${process.pid}`,
        env,
        ...(settings === null ? {} : { settings }),
        ...(o.concurrency === undefined ? {} : { concurrency: o.concurrency }),
        ...(o.leaseMs === undefined ? {} : { leaseMs: o.leaseMs }),
        ...(o.pollMs === undefined ? {} : { pollMs: o.pollMs }),
        ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
        ...(o.untilIdle === undefined ? {} : { untilIdle: o.untilIdle }),
        ...(o.signal === undefined ? {} : { signal: o.signal }),
        ...(o.onEvent === undefined ? {} : { onEvent: o.onEvent })
      }))
    }
  }

  return {
    profile,
    cases,
    research: researchApi,
    investigations,
    transport,
    queue,
    close: async () => {
      closed = true
      const r = research
      research = null
      if (r !== null) await r.close()
      const st = store
      store = null
      if (st !== null) await st.close()
    }
  }
}
