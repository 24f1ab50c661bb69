/**
 * The public client: one object built from one options object, with namespaces for cases,
 * research, investigations and transport, and a `close()` that releases every pool and handle.
 * Every method returns a Promise and rejects with a {@link VbaError}. The library never calls a
 * model on its own: investigations take the controller's model function.
 */
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import type { CaseState } from '../domain/case-state.js'
import type { Author } from '../domain/inputs-decider.js'
import type { Capture } from '../events/capture.js'
import type { InvestigationSettings } from '../events/catalog.js'
import type { RecordedEvent } from '../events/chain.js'
import type { Finding } from '../events/findings.js'
import { initCase } from '../adapters/case-store/init.js'
import { openCase } from '../adapters/case-store/open.js'
import type { AppendOutcome, Receipt } from '../adapters/case-store/append.js'
import { readObject } from '../adapters/case-store/objects.js'
import { verifyCase, type VerifyReport } from '../adapters/case-store/verify.js'
import { replayCase } from '../adapters/case-store/replay.js'
import { gcCase, type GcReport } from '../adapters/case-store/gc.js'
import { breakLock, type LockState } from '../adapters/case-store/lock.js'
import { loadProfile, profileFromObject, type Profile } from '../adapters/config/profile.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { exportCase, type ExportReport } from '../adapters/bagit/export.js'
import { importCase, verifyBag, type BagCheck, type ImportReport } from '../adapters/bagit/import.js'
import { defaultProjections } from '../projections/defaults.js'
import { lifecycleView, type LifecycleView } from '../projections/lifecycle.js'
import type { RenderedPrompt } from '../projections/prompt.js'
import { createProjectResearch, type ProjectResearch } from '../research/project-research.js'
import { openSourceResearch } from '../research/source/open.js'
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
  /** Environment variables for `password_env` (default: `process.env`). */
  readonly environment?: Readonly<Record<string, string | undefined>>
  /** Clock and id source (tests pin them; default: the system clock and random UUIDs). */
  readonly clock?: Env
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
  /** Creates an empty case package in `dir` (which must not exist or be empty). */
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
  /** Every projection's view, from the log alone. */
  replay(dir: string): Promise<{ readonly case_id: string; readonly generation: number; readonly head_hash: string; readonly views: Record<string, { readonly version: number; readonly view: unknown }> }>
  /** Removes what interrupted writers left (orphan objects, old temporary files, a torn tail). */
  gc(dir: string): Promise<GcReport>
  /** Removes the lock of a writer that is gone (a live one only with `force`). */
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
  /** Exports a case as a BagIt 1.0 bag: a deterministic tar (default) or a directory. */
  export(dir: string, out: string, options?: { readonly format?: 'tar' | 'dir'; readonly onProgress?: (done: number, total: number) => void }): Promise<ExportReport>
  /** Verifies a bag completely, then moves its case into `dir`. */
  import(archive: string, dir: string, options?: { readonly onProgress?: (done: number, total: number) => void }): Promise<ImportReport>
  /** Verifies a bag (archive or directory) and the case in it. */
  verify(target: string, options?: { readonly expectHead?: Receipt }): Promise<BagCheck>
}

/** The client. */
export interface Vba {
  /** The decoded profile, or null without one. */
  readonly profile: Profile | null
  readonly cases: CasesApi
  readonly research: ResearchApi
  readonly investigations: InvestigationsApi
  readonly transport: TransportApi
  /** Releases every pool and handle (database connections, repositories). The process can then exit. */
  close(): Promise<void>
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
    research ??= createProjectResearch(profile, { openSource: openSourceResearch, ...(options.environment === undefined ? {} : { env: options.environment }) })
    return research
  }
  const write = (o: WriteOptions) => ({ env, ...(o.commandId === undefined ? {} : { commandId: o.commandId }), ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }) })

  const cases: CasesApi = {
    create: async (dir, o = {}) => {
      live()
      const d = await settle(() => initCase({ dir, env, ...(o.id === undefined ? {} : { caseId: o.id }), ...(o.title === undefined ? {} : { title: o.title }) })())
      return { case_id: d.case_id, dir: path.resolve(dir) }
    },
    note: async (dir, n) => appended(await settle(() => recordNote(dir, { text: n.text, ...(n.format === undefined ? {} : { format: n.format }), ...(n.author === undefined ? {} : { author: n.author }), ...write(n) }))),
    attach: async (dir, a) => appended(await settle(() => addAttachment(dir, { name: a.name, bytes: a.bytes, ...(a.mediaType === undefined ? {} : { mediaType: a.mediaType }), ...(a.author === undefined ? {} : { author: a.author }), ...write(a) }))),
    status: async (dir) => {
      const h = await settle(() => openCase(dir)())
      const s: CaseState = h.cursor.state
      return { case_id: h.declaration.case_id, title: h.declaration.title ?? null, generation: h.cursor.seq, head: { seq: h.cursor.seq, hash: h.cursor.hash }, notices: h.notices, ...lifecycleView(s) }
    },
    facts: async (dir) => {
      const h = await settle(() => openCase(dir)())
      const ref = h.cursor.state.facts
      if (ref === null) return null
      const bytes = await settle(() => readObject(dir, ref)())
      return (JSON.parse(bytes.toString('utf8')) as { facts: Fact[] }).facts
    },
    events: async (dir) => {
      const all: RecordedEvent[] = []
      await settle(() => replayCase(dir, [{ name: 'events', version: 1, init: () => all, evolve: (s: RecordedEvent[], e: RecordedEvent) => { s.push(e); return s }, view: () => null }])())
      return all
    },
    verify: (dir, o = {}) => settle(() => verifyCase(dir, { ...(o.expectHead === undefined ? {} : { expectHead: o.expectHead }), ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    replay: async (dir) => {
      const r = await settle(() => replayCase(dir, defaultProjections())())
      return { case_id: r.case_id, generation: r.generation, head_hash: r.head_hash, views: r.views }
    },
    gc: (dir) => settle(() => gcCase(dir)()),
    unlock: (dir, o = {}) => settle(async () => {
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
    queryInCase: async (dir, args, o = {}) => settle(() => queryInCase(dir, researchOf(), args, o.commandId ?? `query-${env.newId()}`, { env }))
  }

  const investigations: InvestigationsApi = {
    prepare: async (dir, inputs, o = {}) => {
      const r = researchOf()
      if (profile === null) throw noProfile()
      const config = await settle(async () => enrichmentConfig(profile))
      return settle(() => prepareRevision(dir, r, config, inputs, { env, ...(o.author === undefined ? {} : { author: o.author }) }))
    },
    start: async (dir, o = {}) => {
      live()
      const settings = o.settings ?? (profile === null ? null : await settle(async () => settingsOf(profile)))
      if (settings === null) throw noProfile()
      const generation = await settle(() => startInvestigation(dir, { settings, env, ...(o.commandId === undefined ? {} : { commandId: o.commandId }) }))
      return { generation }
    },
    advance: async (dir, o) => settle(() => advance(dir, {
      model: o.model,
      research: researchOf(),
      env,
      ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
      ...(o.manualRetry === undefined ? {} : { manualRetry: o.manualRetry }),
      ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }),
      ...(o.signal === undefined ? {} : { signal: o.signal }),
      ...(o.onStep === undefined ? {} : { onStep: o.onStep })
    })),
    resume: async (dir, o) => settle(() => resumeCase(dir, { manualRetry: o.manualRetry, env, ...(o.expectedGeneration === undefined ? {} : { expectedGeneration: o.expectedGeneration }) })),
    feedback: async (dir, f) => ({ generation: await settle(() => recordFeedback(dir, f.requestId, f.text, { env, ...(f.commandId === undefined ? {} : { commandId: f.commandId }) })) }),
    cancelPlan: async (dir, o) => appended(await settle(() => cancelPlan(dir, { reason: o.reason, ...(o.reservationId === undefined ? {} : { reservationId: o.reservationId }), ...write(o) }))),
    topUp: async (dir, o) => appended(await settle(() => topUpBudget(dir, { amount: o.amount, reason: o.reason, ...write(o) }))),
    nextPrompt: async (dir) => settle(() => nextPrompt(dir))
  }

  const transport: TransportApi = {
    export: (dir, out, o = {}) => settle(() => exportCase(dir, out, { format: o.format ?? 'tar', ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    import: (archive, dir, o = {}) => settle(() => importCase(archive, dir, { ...(o.onProgress === undefined ? {} : { onProgress: o.onProgress }) })()),
    verify: (target, o = {}) => settle(() => verifyBag(target, {}, o.expectHead === undefined ? {} : { expectHead: o.expectHead })())
  }

  return {
    profile,
    cases,
    research: researchApi,
    investigations,
    transport,
    close: async () => {
      closed = true
      const r = research
      research = null
      if (r !== null) await r.close()
    }
  }
}
