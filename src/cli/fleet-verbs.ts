/**
 * `vba store migrate|import`, `vba queue list|claim|release` and `vba work`: running a fleet.
 * Store import, claims and the listing of a folder go through the public client; the rest is
 * listed in docs/architecture.md ("The CLI and the client").
 */
import { hostname } from 'node:os'
import { failure } from '../failures/failure.js'
import { migrateStoreAt } from '../adapters/stores.js'
import { loadProfile } from '../adapters/config/profile.js'
import { FailureError, fail, must } from '../failures/error.js'
import { QUEUE_STATES, type QueueCounts, type QueueEntry } from '../projections/queue.js'
import type { CaseLifecycleState } from '../domain/case-state.js'
import { shellPath, shellWord } from './next-step.js'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { startSettings } from '../investigation/settings.js'
import { work, type WorkEvent } from '../investigation/worker.js'
import { summaryLine } from '../investigation/work-summary.js'
import { signerOf, systemEnv } from '../adapters/env.js'
import { signedHeadOf } from './signed-head.js'
import { trustOf } from './trust.js'
import type { TrustOptions } from './options.js'
import { CliExit, EXIT, exitCodeOf, progressBar, terminalText } from './io.js'
import { jsonLine as json } from './json-line.js'
import type { Out } from './case-verbs.js'
import { cliClient, rootOrStoreUrl, storeAt, storeUrl, type StoreOption } from './stores.js'
import { modelFrom, resultLine, stepLine } from './investigate-verb.js'

const needStore = (o: StoreOption): string =>
  storeUrl(o) ??
  fail('INVALID_ARGUMENT', 'name the store: --store postgres://user@host/db (or mysql://…), or set VBA_STORE')

export const storeMigrate = async (io: Out, o: StoreOption): Promise<void> => {
  const url = needStore(o)
  const r = await migrateStoreAt(url)
  io.out(
    r.applied.length === 0
      ? `the store is at the latest schema (${r.latest})`
      : `applied ${r.applied.join(', ')}; the store is at ${r.latest}`
  )
}

export const storeImport = async (
  io: Out,
  source: string,
  o: StoreOption & { json?: boolean; strict?: boolean } & TrustOptions
): Promise<void> => {
  const vba = await cliClient(needStore(o))
  const trust = await trustOf(o)
  const bar = progressBar('import')
  const r = await vba.transport.importIntoStore(source, { onProgress: bar.update, strict: o.strict === true, ...trust })
  bar.stop()
  if (o.json === true) io.out(json(r))
  else io.out(r.case_id)
}

const renderEntry = (e: QueueEntry): string => {
  const budget = e.budget_left === null ? '' : `, budget ${e.budget_left}`
  const state = `${e.state}${e.reason === null ? '' : `/${e.reason}`}`
  const model =
    e.model === null && e.tokens_total === 0 ? '' : `, model ${e.model ?? 'unnamed'} (${e.tokens_total} tokens)`
  const failed =
    e.last_model_failure === null
      ? ''
      : `; the model failed: ${e.last_model_failure.code}: ${e.last_model_failure.message}`
  return `${e.runnable ? 'runnable ' : 'waiting  '} ${e.dir ?? e.case_id}  ${state}, revision ${e.revision}${budget}${model}, generation ${e.generation}, last activity ${e.last_activity}${e.lease === null ? '' : `, leased by ${e.lease.worker} until ${e.lease.expires_at}`}: ${e.why}${failed}`
}

export interface QueueListOptions extends StoreOption {
  readonly json?: boolean
  readonly after?: string
  readonly limit?: number
  readonly state?: readonly string[]
}

/** The counts of a page as one line: "3 runnable, 12 case(s) (NOT_STARTED 4, CONCLUDED 8)". */
const countsLine = (c: QueueCounts): string =>
  `${c.runnable} runnable, ${c.total} case(s)${
    c.total === 0
      ? ''
      : ` (${QUEUE_STATES.filter((s) => (c.by_state[s] ?? 0) > 0)
          .map((s) => `${s} ${c.by_state[s]}`)
          .join(', ')})`
  }`

/** A store URL as it may be shown: without its password. */
const redactedUrl = (url: string): string => {
  try {
    const u = new URL(url)
    u.password = ''
    return u.toString()
  } catch {
    return 'URL'
  }
}

/** The command that lists the page after `next`, with the options of this one (never a password). */
const nextCommand = (root: string | undefined, o: QueueListOptions, next: string): string =>
  [
    'vba queue list',
    ...(root !== undefined
      ? [shellPath(root)]
      : o.store !== undefined
        ? ['--store', shellWord(redactedUrl(o.store))]
        : []),
    ...(o.state ?? []).flatMap((s) => ['--state', s]),
    ...(o.limit === undefined ? [] : ['--limit', String(o.limit)]),
    '--after',
    shellWord(next)
  ].join(' ')

export const queueList = async (io: Out, root: string | undefined, o: QueueListOptions): Promise<void> => {
  const url = rootOrStoreUrl(root, o)
  if (root === undefined && url === undefined)
    fail('INVALID_ARGUMENT', 'name the queue: ROOT (a folder of case directories) or --store URL')
  const options = {
    ...(o.after === undefined ? {} : { after: o.after }),
    ...(o.limit === undefined ? {} : { limit: o.limit }),
    ...(o.state === undefined ? {} : { states: o.state as CaseLifecycleState[] })
  }
  const page =
    root !== undefined || url === undefined
      ? await (await cliClient(undefined)).queue.page({ ...options, root: root as string })
      : await (await storeAt(url)).page(options)
  if (o.json === true) {
    for (const e of page.entries) io.out(json(e))
    io.out(json({ page: { next: page.next, counts: page.counts } }))
    return
  }
  for (const e of page.entries) io.out(terminalText(renderEntry(e)))
  const counts = page.counts === null ? '' : countsLine(page.counts)
  const shown = `${page.entries.length} shown${o.state === undefined ? '' : ` in ${o.state.join(', ')}`}${o.after === undefined ? '' : ` after ${o.after}`}`
  io.out(terminalText(`${counts}; ${shown}${page.next === null ? '' : ', more follow'}`))
  if (page.next !== null) io.out(terminalText(`next page: ${nextCommand(root, o, page.next)}`))
}

export const queueClaim = async (
  io: Out,
  o: StoreOption & { worker: string; leaseMs: number; json?: boolean }
): Promise<void> => {
  const vba = await cliClient(needStore(o))
  const lease = await vba.queue.claim(o.worker, { leaseMs: o.leaseMs })
  if (o.json === true) {
    io.out(
      json(
        lease === null
          ? { claimed: null }
          : {
              claimed: {
                case_id: lease.caseId,
                worker: lease.worker,
                token: lease.token,
                expires_at: new Date(lease.expiresAt).toISOString()
              }
            }
      )
    )
  } else if (lease === null) io.out('nothing is runnable')
  else io.out(`${lease.caseId} leased to ${lease.worker} until ${new Date(lease.expiresAt).toISOString()}`)
  if (lease === null) throw new CliExit(EXIT.NOT_CONCLUDED)
}

export const queueRelease = async (io: Out, caseId: string, o: StoreOption & { worker: string }): Promise<void> => {
  const store = await storeAt(needStore(o))
  const released = await store.release({ caseId, worker: o.worker })
  if (!released)
    fail('CASE_NOT_LEASED', `case ${caseId} is not leased to ${o.worker}`, { case_id: caseId, worker: o.worker })
  io.out(`released ${caseId}`)
}

export interface WorkVerbOptions extends StoreOption {
  readonly config: string
  readonly worker?: string
  readonly concurrency: number
  readonly leaseMs: number
  readonly maxTurns: number
  readonly untilIdle?: boolean
  readonly strict?: boolean
  readonly modelCommand?: string
  readonly modelUrl?: string
  readonly model?: string
  readonly json?: boolean
}

export const workVerb = async (io: Out, o: WorkVerbOptions): Promise<void> => {
  const store = await storeAt(needStore(o))
  const profile = await loadProfile(o.config)
  const model = modelFrom(profile, o)
  const research = createProjectResearch(profile, { openSource: cliOpenSource })
  const settings = must(await startSettings(profile, research))
  const stop = new AbortController()
  const onSignal = (): void => {
    io.err('vba: stopping after the current step (again to force)')
    stop.abort()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  const receipts = signedReceipts(io, o.json === true)
  try {
    const summary = await work({
      store,
      model,
      research,
      settings,
      worker: o.worker ?? `${hostname()}.${process.pid}`,
      concurrency: o.concurrency,
      leaseMs: o.leaseMs,
      maxTurns: o.maxTurns,
      untilIdle: o.untilIdle === true,
      strict: o.strict === true,
      signal: stop.signal,
      onEvent: (e) => {
        if (o.json === true) io.out(json(e))
        else {
          const text = workEventLine(e)
          if (text !== null) (e.kind === 'failed' ? io.err : io.out)(terminalText(text))
        }
        receipts.add(e)
      }
    })
    await receipts.done()
    if (o.json === true) io.out(json({ kind: 'summary', summary }))
    else io.out(summaryLine(summary))
    if (summary.ended === 'failure' && summary.stopped_by !== null) {
      const f = failure(summary.stopped_by.code, `the worker stopped: ${summary.stopped_by.message}`, {
        case_id: summary.stopped_by.case_id
      })
      // With --json the summary line above says why; without, the failure's own line.
      throw o.json === true ? new CliExit(exitCodeOf(f)) : new FailureError(f)
    }
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
    await research.close()
  }
}

/**
 * With a signing key (the worker's --sign-key), a signed head of every case a worker finishes
 * (CONCLUDED or EXHAUSTED), printed after its line: the receipt its operator keeps.
 */
const signedReceipts = (io: Out, asJson: boolean) => {
  let chain: Promise<void> = Promise.resolve()
  return {
    add: (e: WorkEvent): void => {
      if (e.kind !== 'advanced' || (e.result.state !== 'CONCLUDED' && e.result.state !== 'EXHAUSTED')) return
      chain = chain.then(async () => {
        const signer = await signerOf(systemEnv)
        if (signer === undefined) return
        const note = await signedHeadOf(signer, e.case_id, e.result.receipt)
        if (asJson) io.out(json({ kind: 'signed_head', worker: e.worker, case_id: e.case_id, signed_head: note }))
        else {
          io.out(`${e.worker}: ${e.case_id} signed head (keep it: vba verify --expect-head FILE --trust FILE):`)
          for (const line of note.replace(/\n$/, '').split('\n')) io.out(line)
        }
      })
    },
    done: (): Promise<void> => chain
  }
}

/** One line for people per worker event (null: not shown without --json). */
const workEventLine = (e: WorkEvent): string | null => {
  switch (e.kind) {
    case 'claimed':
      return `${e.worker}: claimed ${e.case_id}`
    case 'advanced':
      return `${e.worker}: ${e.case_id} → ${resultLine(e.result)}`
    case 'failed':
      return `vba: ${e.worker}: ${e.case_id === '' ? 'the queue' : e.case_id}: ${e.code}: ${e.message}`
    case 'idle':
      return `${e.worker}: nothing runnable; waiting`
    case 'stopping':
      return `vba work: ${e.reason === 'idle' ? 'done' : 'stopping'}: ${e.message}`
    case 'step':
      // A line per model turn and research query: a case runs many, each up to minutes.
      return `${e.worker}: ${e.case_id} ${stepLine(e.step).trimStart()}`
    case 'released':
      return null
    default: {
      const _never: never = e
      return _never
    }
  }
}
