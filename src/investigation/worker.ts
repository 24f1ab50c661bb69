/**
 * The worker loop of a fleet: up to `concurrency` slots, each a worker identity of its own
 * (`NAME:N`), claim a runnable case from a store's queue, advance it under the lease (renewed
 * while it runs), release it, repeat. A stop signal lets every slot finish its current step and
 * release its case.
 *
 * Every append of a worker carries its lease: once the lease is lost (the worker stalled past its
 * expiry and another worker took the case over) the store refuses the append (LEASE_LOST), so no
 * two workers ever advance the same case. What happens to a failure depends on its kind:
 * retryable ones (a lost lease, a conflict) give the case back; unavailable ones (the store, the
 * disk) keep the case out of the queue for `failureBackoffMs`; permanent, corrupt and internal
 * ones stop the worker: every slot releases its case and the summary names the failure.
 */
import { failure, failureKind, type Failure, type FailureCode, type FailureKind } from '../failures/failure.js'
import { checkWorkerName, DEFAULT_SLOTS, MAX_SLOTS, slotName } from '../domain/worker-name.js'
import type { InvestigationSettings } from '../events/settings.js'
import { LEASE_MS, type Lease, type QueueStore } from '../adapters/case-store/store.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { FailureError, must, toFailure } from '../failures/error.js'
import type { ProjectResearch } from '../research/project-research.js'
import { advance, type AdvanceStep, type ModelFn } from './loop.js'
import { startInvestigation, type AdvanceResult } from '../commands/lifecycle-commands.js'
import { openAt } from '../commands/run.js'
import { notAppliedFinding } from '../adapters/case-store/log-checker.js'
import { checkMaxTurns } from './loop-options.js'
import { emptyTally, summaryOf, tallyFailure, tallyResult, type WorkFailure, type WorkSummary } from './work-summary.js'
import { optional } from '../optional.js'

export type { WorkSummary } from './work-summary.js'

/**
 * What a worker reports as it goes (for logs and terminals; `vba work --json` prints each as a line).
 * @category queue
 */
export type WorkEvent =
  | { readonly kind: 'claimed'; readonly worker: string; readonly case_id: string; readonly expires_at: string }
  | { readonly kind: 'step'; readonly worker: string; readonly case_id: string; readonly step: AdvanceStep }
  | { readonly kind: 'advanced'; readonly worker: string; readonly case_id: string; readonly result: AdvanceResult }
  | {
      readonly kind: 'failed'
      readonly worker: string
      readonly case_id: string
      readonly code: FailureCode
      readonly message: string
      readonly failure_kind: FailureKind
    }
  | { readonly kind: 'released'; readonly worker: string; readonly case_id: string }
  /** A slot found nothing runnable (said once until it claims again). */
  | { readonly kind: 'idle'; readonly worker: string }
  /** The whole worker ends: `idle` (until-idle and nothing left within the horizon), `signal`, or `failure` (a permanent failure stopped it). */
  | { readonly kind: 'stopping'; readonly reason: 'idle' | 'signal' | 'failure'; readonly message: string }

/** @category queue */
export interface WorkerOptions {
  readonly store: QueueStore
  readonly model: ModelFn
  readonly research: ProjectResearch
  /** This worker's name (recorded with its leases); with several slots each is `NAME:N`. */
  readonly worker: string
  /** Cases advanced at the same time, 1-64 (default 1). */
  readonly concurrency?: number
  /** How long a claim lasts without renewal (default 60 000 ms); renewed every third of it. */
  readonly leaseMs?: number
  /** How long an idle slot waits before asking the queue again (default 1000 ms). */
  readonly pollMs?: number
  /** Model turns per claim (default 20); the case goes back to the queue after them. */
  readonly maxTurns?: number
  /** Settings for cases that are prepared but not started (default: such cases fail with INVESTIGATION_NOT_STARTED). */
  readonly settings?: InvestigationSettings
  /**
   * Refuse cases whose rules did not all apply (RULE_NOT_APPLIED: old event versions, no binding
   * recorded), as `vba verify --strict` does: such a case is CASE_CORRUPT naming the rules, is not
   * advanced, and stops the worker like any case that does not verify (default false).
   */
  readonly strict?: boolean
  /** How long a case whose advance failed for an unavailable store or disk stays out of the queue (default 60 000 ms). */
  readonly failureBackoffMs?: number
  /**
   * Return once no case is runnable, held by a lease, or blocked with a retry time within the
   * lease horizon (`leaseMs` from now); default: wait for more.
   */
  readonly untilIdle?: boolean
  readonly signal?: AbortSignal
  readonly env?: Env
  readonly onEvent?: (e: WorkEvent) => void
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) {
      resolve()
      return
    }
    const t = setTimeout(done, ms)
    function done(): void {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })

const codeOf = (e: unknown): Failure => toFailure(e, 'work')

const intIn = (name: string, v: number | undefined, fallback: number, min: number, max: number): number => {
  if (v === undefined) return fallback
  if (!Number.isSafeInteger(v) || v < min || v > max)
    throw new FailureError(
      failure('INVALID_ARGUMENT', `${name} takes a whole number from ${min} to ${max}`, { [name]: String(v) })
    )
  return v
}

/** Stops a worker: permanent, corrupt and internal failures (retrying cannot help, and would repeat forever). */
const stopsWorker = (f: Failure): boolean => {
  const kind = failureKind(f.code)
  return kind === 'permanent' || kind === 'corrupt' || kind === 'bug'
}

/**
 * What keeps an until-idle worker waiting: a runnable case, a leased one, or a timed block that
 * ends within the horizon. Null when nothing does (the worker may end).
 */
export const busyReason = (
  entries: Awaited<ReturnType<QueueStore['list']>>,
  now: number,
  horizonMs: number
): string | null => {
  for (const e of entries) {
    if (e.runnable) return 'a case is runnable'
    if (e.lease !== null) return `a case is leased by ${e.lease.worker}`
    if (e.state === 'BLOCKED' && e.retry_not_before !== null && Date.parse(e.retry_not_before) <= now + horizonMs)
      return `a case waits for its retry time ${e.retry_not_before}`
  }
  return null
}

/** How many cases wait for a retry time beyond the horizon, and the earliest of those times. */
const laterRetries = (
  entries: Awaited<ReturnType<QueueStore['list']>>
): { readonly count: number; readonly first: string | null } => {
  const times = entries
    .filter((e) => e.state === 'BLOCKED' && e.retry_not_before !== null)
    .map((e) => e.retry_not_before as string)
    .sort()
  return { count: times.length, first: times[0] ?? null }
}

/** What the slots of one worker run share: its options, limits, tally, reporting and its own stop. */
interface WorkerRun {
  readonly o: WorkerOptions
  readonly env: Env
  readonly slots: number
  readonly leaseMs: number
  readonly pollMs: number
  readonly failureBackoffMs: number
  readonly report: (e: WorkEvent) => void
  readonly tally: ReturnType<typeof emptyTally>
  /** The worker's own stop: the caller's signal, a permanent failure, or idleness. */
  readonly stop: AbortController
  readonly end: (reason: WorkSummary['ended'], message: string, stoppedBy?: WorkFailure | null) => void
  /** Slots that found nothing to claim on their last try. */
  idleSlots: number
}

/** A failure as the `failed` event of a slot. */
const failedEvent = (worker: string, caseId: string, f: Failure): WorkEvent => ({
  kind: 'failed',
  worker,
  case_id: caseId,
  code: f.code,
  message: f.message,
  failure_kind: failureKind(f.code)
})

/** Keeps renewing a lease while its case is worked on; a lost lease aborts `inner` and is kept for the caller. */
const keepLease = (
  run: WorkerRun,
  first: Lease,
  inner: AbortController
): { readonly lease: () => Lease; readonly lost: () => Failure | null; readonly stop: () => void } => {
  let lease = first
  let lost: Failure | null = null
  const timer = setInterval(
    () => {
      run.o.store.renew(lease, run.leaseMs).then(
        (l) => {
          lease = l
        },
        (e: unknown) => {
          lost = codeOf(e)
          inner.abort()
        }
      )
    },
    Math.max(250, Math.floor(run.leaseMs / 3))
  )
  return { lease: () => lease, lost: () => lost, stop: () => clearInterval(timer) }
}

/** Starts the case if it is prepared but not started (with the worker's settings), then advances it. */
const startAndAdvance = async (
  run: WorkerRun,
  worker: string,
  at: { store: WorkerOptions['store']; caseId: string },
  lease: Lease,
  signal: AbortSignal
): Promise<AdvanceResult> => {
  const { o, env } = run
  const handle = await openAt(at)
  if (o.strict === true && handle.notApplied.length > 0) {
    const findings = handle.notApplied.map((n) => notAppliedFinding(n, true))
    throw new FailureError(
      failure(
        'CASE_CORRUPT',
        `case ${at.caseId} holds what the rules could not check (${handle.notApplied.map((n) => n.rule).join(', ')}: ${findings[0]?.message ?? ''}); this worker is strict and does not advance it: see vba verify --strict, or run a worker without --strict`,
        { case_id: at.caseId, findings: findings.slice(0, 20) }
      )
    )
  }
  if (handle.cursor.state.state === 'NOT_STARTED') {
    if (o.settings === undefined)
      throw new FailureError(
        failure(
          'INVESTIGATION_NOT_STARTED',
          'the case is prepared but not started, and the worker has no settings to start it with'
        )
      )
    await startInvestigation(at, { settings: o.settings, env, lease })
  }
  return advance(at, {
    model: o.model,
    research: o.research,
    env,
    lease,
    signal,
    ...optional('maxTurns', o.maxTurns),
    onStep: (step) => run.report({ kind: 'step', worker, case_id: at.caseId, step })
  })
}

/** After a failed case: keep it out of the queue (unavailable), release it, or stop the worker (permanent). */
const afterFailure = async (run: WorkerRun, worker: string, lease: Lease, f: Failure): Promise<void> => {
  const caseId = lease.caseId
  const wf = tallyFailure(run.tally, caseId, f)
  run.report(failedEvent(worker, caseId, f))
  if (f.code === 'LEASE_LOST') return
  if (failureKind(f.code) === 'unavailable') {
    // Keep the case out of the queue for a while: the store or the disk may come back.
    await run.o.store.renew(lease, run.failureBackoffMs).catch(() => undefined)
    return
  }
  if (await run.o.store.release(lease).catch(() => false)) run.report({ kind: 'released', worker, case_id: caseId })
  if (stopsWorker(f)) run.end('failure', `${f.code} on case ${caseId}: ${f.message}`, wf)
}

/** Works one claimed case: start or advance it under its lease, then release it (or handle the failure). */
const runClaim = async (run: WorkerRun, worker: string, first: Lease): Promise<void> => {
  const caseId = first.caseId
  const at = { store: run.o.store, caseId }
  // The lease is renewed while the case is worked on; a lost lease stops the work at once.
  const inner = new AbortController()
  const halt = (): void => inner.abort()
  run.stop.signal.addEventListener('abort', halt, { once: true })
  const keeper = keepLease(run, first, inner)
  try {
    const r = await startAndAdvance(run, worker, at, keeper.lease(), inner.signal)
    const lost = keeper.lost()
    if (lost !== null) throw new FailureError(lost)
    tallyResult(run.tally, r)
    run.report({ kind: 'advanced', worker, case_id: caseId, result: r })
    keeper.stop()
    await run.o.store.release(keeper.lease())
    run.report({ kind: 'released', worker, case_id: caseId })
  } catch (e) {
    keeper.stop()
    await afterFailure(run, worker, keeper.lease(), keeper.lost() ?? codeOf(e))
  } finally {
    run.stop.signal.removeEventListener('abort', halt)
  }
}

/** With `untilIdle`, ends the worker when every slot is idle and nothing is runnable, leased or due soon. */
const endIfIdle = async (run: WorkerRun): Promise<boolean> => {
  if (run.o.untilIdle !== true || run.idleSlots !== run.slots) return false
  const listed = await run.o.store.list().catch(() => null)
  if (listed === null || busyReason(listed, run.env.now().getTime(), run.leaseMs) !== null) return false
  const later = laterRetries(listed)
  run.end(
    'idle',
    `nothing is runnable, leased, or waiting for a retry time within ${run.leaseMs} ms${later.count === 0 ? '' : `; ${later.count} blocked case(s) retry later (the first at ${String(later.first)})`}`
  )
  return true
}

/** One slot: claims a case, works it, and claims again until the worker stops. */
const slotLoop = async (run: WorkerRun, n: number): Promise<void> => {
  const { o, stop, report } = run
  const worker = slotName(o.worker, n, run.slots)
  let idle = false
  while (!stop.signal.aborted) {
    let lease: Lease | null
    try {
      lease = await o.store.claim(worker, run.leaseMs)
    } catch (e) {
      const f = codeOf(e)
      const wf = tallyFailure(run.tally, null, f)
      report(failedEvent(worker, '', f))
      if (stopsWorker(f)) {
        run.end('failure', `${f.code} from the queue: ${f.message}`, wf)
        return
      }
      // The store is unreachable: wait and ask again (the queue survives in the database).
      await sleep(run.pollMs, stop.signal)
      continue
    }
    if (lease === null) {
      if (!idle) {
        idle = true
        run.idleSlots++
        report({ kind: 'idle', worker })
      }
      if (await endIfIdle(run)) return
      await sleep(run.pollMs, stop.signal)
      continue
    }
    if (idle) {
      idle = false
      run.idleSlots--
    }
    run.tally.claims++
    report({ kind: 'claimed', worker, case_id: lease.caseId, expires_at: new Date(lease.expiresAt).toISOString() })
    await runClaim(run, worker, lease)
  }
}

/** Runs the worker loop until the signal fires, a permanent failure stops it, or (with `untilIdle`) nothing is left. */
export const work = async (o: WorkerOptions): Promise<WorkSummary> => {
  const outer = o.signal ?? new AbortController().signal
  const slots = intIn('concurrency', o.concurrency, DEFAULT_SLOTS, 1, MAX_SLOTS)
  const leaseMs = intIn('leaseMs', o.leaseMs, LEASE_MS.default, LEASE_MS.min, LEASE_MS.max)
  const pollMs = intIn('pollMs', o.pollMs, 1000, 1, 3_600_000)
  const failureBackoffMs = intIn('failureBackoffMs', o.failureBackoffMs, 60_000, 1000, 86_400_000)
  if (o.maxTurns !== undefined) checkMaxTurns(o.maxTurns)
  must(checkWorkerName(o.worker, slots))
  const report = o.onEvent ?? (() => undefined)
  const stop = new AbortController()
  let ending: { reason: WorkSummary['ended']; stoppedBy: WorkFailure | null } | null = null
  const end = (reason: WorkSummary['ended'], message: string, stoppedBy: WorkFailure | null = null): void => {
    if (ending !== null) return
    ending = { reason, stoppedBy }
    report({ kind: 'stopping', reason, message })
    stop.abort()
  }
  const run: WorkerRun = {
    o,
    env: o.env ?? systemEnv,
    slots,
    leaseMs,
    pollMs,
    failureBackoffMs,
    report,
    tally: emptyTally(),
    stop,
    end,
    idleSlots: 0
  }
  const onOuter = (): void => end('signal', 'stopped by the caller: every slot finishes its step and releases its case')
  if (outer.aborted) onOuter()
  else outer.addEventListener('abort', onOuter, { once: true })
  try {
    await Promise.all(Array.from({ length: slots }, (_, i) => slotLoop(run, i + 1)))
  } finally {
    outer.removeEventListener('abort', onOuter)
  }
  const ended = ending as { reason: WorkSummary['ended']; stoppedBy: WorkFailure | null } | null
  return summaryOf(run.tally, ended?.reason ?? 'signal', ended?.stoppedBy ?? null)
}
