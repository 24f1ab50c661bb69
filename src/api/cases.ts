/** The client's `cases` namespace: create, write, read, verify, replay, report and repair cases. */
import * as path from 'node:path'
import type { CaseState } from '../domain/case-state.js'
import type { RecordedEvent } from '../events/chain.js'
import { collectInto } from '../projections/projection.js'
import { createCaseAt, openCaseAt, readObjectAt, replayAt, verifyAt } from '../adapters/case-store/at.js'
import { caseReport, caseReportWithVerification } from '../report/case-report.js'
import { gcCase } from '../adapters/case-store/gc.js'
import { breakLock } from '../adapters/case-store/lock.js'
import { trustPolicy } from '../adapters/case-store/signatures.js'
import { expectedHead } from '../adapters/case-store/receipts.js'
import { defaultProjections } from '../projections/defaults.js'
import { lifecycleView } from '../projections/lifecycle-view.js'
import type { Fact } from '../research/enrich.js'
import { addAttachment, recordNote } from '../commands/typed.js'
import { settle, settleOwn } from './errors.js'
import { appended, type ClientContext } from './context.js'
import type { CasesApi } from './types.js'
import { optional } from '../optional.js'
import { parseBoundedBytes } from '../events/bounds.js'
import { fail } from '../failures/error.js'

/** The `cases` namespace over a client's context. */
export const casesApi = (ctx: ClientContext): CasesApi => ({
  ...writeMethods(ctx),
  ...readMethods(ctx),
  ...checkMethods(ctx),
  ...repairMethods(ctx)
})

/** Creating a case and recording what a person adds to it (a note, an attachment). */
const writeMethods = ({ env, at, write }: ClientContext): Pick<CasesApi, 'create' | 'note' | 'attach'> => ({
  create: async (dir, o = {}) => {
    const where = at(dir)
    const d = await settle(() =>
      createCaseAt(where, {
        env,
        ...optional('caseId', o.id),
        ...optional('title', o.title)
      })
    )
    return { case_id: d.case_id, dir: typeof where === 'string' ? path.resolve(dir) : d.case_id }
  },
  note: async (dir, n) =>
    appended(() =>
      recordNote(at(dir), {
        text: n.text,
        ...optional('format', n.format),
        ...optional('author', n.author),
        ...write(n)
      })
    ),
  attach: async (dir, a) =>
    appended(() =>
      addAttachment(at(dir), {
        name: a.name,
        bytes: a.bytes,
        ...optional('mediaType', a.mediaType),
        ...optional('author', a.author),
        ...write(a)
      })
    )
})

/** What a case holds: its status, its facts, its events and its default views. */
const readMethods = ({ at }: ClientContext): Pick<CasesApi, 'status' | 'facts' | 'events' | 'replay'> => ({
  status: async (dir) => {
    const h = await settle(() => openCaseAt(at(dir)))
    const s: CaseState = h.cursor.state
    return {
      case_id: h.declaration.case_id,
      title: h.declaration.title ?? null,
      generation: h.cursor.seq,
      head: { seq: h.cursor.seq, hash: h.cursor.hash },
      notices: h.notices,
      ...lifecycleView(s)
    }
  },
  facts: async (dir) => {
    const where = at(dir)
    const h = await settle(() => openCaseAt(where))
    const ref = h.cursor.state.facts
    if (ref === null) return null
    const bytes = await settle(() => readObjectAt(where, ref))
    const doc = parseBoundedBytes(bytes) as { facts?: unknown } | undefined
    if (!Array.isArray(doc?.facts))
      return settle(async () => fail('CASE_CORRUPT', `object ${ref.digest} is not a facts document (or out of bounds)`))
    return doc.facts as Fact[]
  },
  events: async (dir) => {
    const all: RecordedEvent[] = []
    await settle(() => replayAt(at(dir), [collectInto(all)]))
    return all
  },
  replay: async (dir) => {
    const r = await settle(() => replayAt(at(dir), defaultProjections()))
    return { case_id: r.case_id, generation: r.generation, head_hash: r.head_hash, views: r.views }
  }
})

/** Verifying a case and reporting on it, both optionally re-derived against the pinned sources. */
const checkMethods = ({ at, rederived }: ClientContext): Pick<CasesApi, 'verify' | 'report'> => ({
  verify: async (dir, o = {}) =>
    settleOwn(async (own) => {
      const where = at(dir)
      const onProgress = own(o.onProgress)
      const report = await settle(() =>
        verifyAt(where, {
          ...expectedHead(o.expectHead, o.trust !== undefined),
          ...optional('strict', o.strict),
          ...optional('requireSigned', o.requireSigned),
          ...(o.trust === undefined ? {} : { trust: trustPolicy(o.trust.allowedSigners, o.trust.actors) }),
          ...(onProgress === undefined ? {} : { onProgress: (phase, done, total) => onProgress(phase, done, total) })
        })
      )
      return o.against === undefined ? report : rederived(where, report, o.against, onProgress)
    }),
  report: async (dir, o = {}) => {
    const where = at(dir)
    const against = o.against
    if (against === undefined) return settle(() => caseReport(where))
    return settleOwn(async (own) => {
      const onProgress = own(o.onProgress)
      return (
        await settle(() =>
          caseReportWithVerification(where, { refine: (report) => rederived(where, report, against, onProgress) })
        )
      ).html
    })
  }
})

/** Repairs of a case directory: collecting unreferenced objects, breaking a stale lock. */
const repairMethods = ({ directoryOnly }: ClientContext): Pick<CasesApi, 'gc' | 'unlock'> => ({
  gc: async (dir) => {
    directoryOnly('gc')
    return settle(() => gcCase(dir))
  },
  unlock: async (dir, o = {}) =>
    settle(async () => {
      directoryOnly('unlock')
      return breakLock(dir, { force: o.force === true })
    })
})
