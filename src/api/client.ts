/**
 * The public client: one object built from one options object, with namespaces for cases,
 * research, investigations and transport, and a `close()` that releases every pool and handle.
 * Every method returns a Promise and rejects with a {@link VbaError}. The library never calls a
 * model on its own: investigations take the controller's model function.
 */
import * as path from 'node:path'
import { hostname } from 'node:os'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import type { CaseState } from '../domain/case-state.js'
import type { RecordedEvent } from '../events/chain.js'
import type { AppendOutcome } from '../adapters/case-store/append.js'
import { createCaseAt, openCaseAt, readObjectAt, replayAt, verifyAt } from '../adapters/case-store/at.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { listDirectoryQueue } from '../adapters/case-store/directory-queue.js'
import type { SqlStore } from '../adapters/sql-store/sql-store.js'
import { openStore } from '../adapters/stores.js'
import { FailureError } from '../failures/error.js'
import { work } from '../investigation/worker.js'
import { caseReport, caseReportWithVerification } from '../report/case-report.js'
import { gcCase } from '../adapters/case-store/gc.js'
import { breakLock } from '../adapters/case-store/lock.js'
import { loadProfile, profileFromObject, type Profile } from '../adapters/config/profile.js'
import { systemEnv } from '../adapters/env.js'
import { exportCase } from '../adapters/bagit/export.js'
import { importCase, verifyBag, withVerifiedPackage } from '../adapters/bagit/import.js'
import { defaultProjections } from '../projections/defaults.js'
import { lifecycleView } from '../projections/lifecycle.js'
import { createProjectResearch, type ProjectResearch } from '../research/project-research.js'
import { openSourceResearch } from '../research/source/open.js'
import { queryInCase } from '../commands/case-query.js'
import { enrichmentConfig, prepareRevision } from '../commands/prepare.js'
import type { Fact } from '../research/enrich.js'
import { addAttachment, cancelPlan, recordNote, topUpBudget } from '../commands/typed.js'
import { advance, nextPrompt } from '../investigation/loop.js'
import { recordFeedback, resumeCase, startInvestigation } from '../commands/lifecycle.js'
import { settingsOf } from '../investigation/settings.js'
import { VbaError, settle } from './errors.js'
import type { VbaOptions, Appended, WriteOptions, CasesApi, ResearchApi, AdvanceOptions, InvestigationsApi, TransportApi, QueueApi, Vba, VerifyCaseOptions } from './types.js'
import type { VerifyReport } from '../adapters/case-store/verify.js'

export type { SourceNotice, ProfileObject, VbaOptions, Appended, WriteOptions, CaseStatus, CasesApi, ResearchApi, AdvanceOptions, InvestigationsApi, TransportApi, WorkOptions, QueueApi, Vba, VerifyCaseOptions, ReportCaseOptions } from './types.js'

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
    store = await thrown(() => openStore(url, { ...(options.environment === undefined ? {} : { environment: options.environment }), migrate: options.migrate === true }))
  }
  /** Where a case is: a case id in the store, or a directory. */
  const at = (ref: string): CaseAt => {
    live()
    return store === null ? ref : { store, caseId: ref }
  }
  /** The report with its evidence re-derived from the world a profile reaches (`against`). */
  const rederived = async (where: CaseAt, report: VerifyReport, against: NonNullable<VerifyCaseOptions['against']>, onProgress?: VerifyCaseOptions['onProgress']): Promise<VerifyReport> => {
    const world = against === true
      ? profile ?? (() => { throw noProfile() })()
      : typeof against === 'string'
        ? await settle(() => loadProfile(against)())
        : await settle(async () => profileFromObject(against, options.baseDir ?? process.cwd()))
    const { rederiveEvidence, withEvidence } = await import('../research/rederive.js')
    return withEvidence(report, await thrown(() => rederiveEvidence(where, world, { ...(options.environment === undefined ? {} : { env: options.environment }), onProgress: (done, total) => onProgress?.('evidence', done, total) })))
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
    verify: async (dir, o = {}) => {
      const where = at(dir)
      const report = await settle(() => verifyAt(where, { ...(o.expectHead === undefined ? {} : { expectHead: o.expectHead }), ...(o.onProgress === undefined ? {} : { onProgress: (phase, done, total) => o.onProgress?.(phase, done, total) }) })())
      return o.against === undefined ? report : rederived(where, report, o.against, o.onProgress)
    },
    replay: async (dir) => {
      const r = await settle(() => replayAt(at(dir), defaultProjections())())
      return { case_id: r.case_id, generation: r.generation, head_hash: r.head_hash, views: r.views }
    },
    report: async (dir, o = {}) => {
      const where = at(dir)
      const against = o.against
      if (against === undefined) return thrown(() => caseReport(where))
      return (await thrown(() => caseReportWithVerification(where, { refine: (report) => rederived(where, report, against, o.onProgress) }))).html
    },
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
