/**
 * The worker loop of a fleet: claim a runnable case from a store's queue, advance it under the
 * lease (renewed while it runs), release it, repeat; stop cleanly when the signal fires (the case
 * in hand is finished at the next step boundary and released).
 *
 * Every append of a worker carries its lease: once the lease is lost (the worker stalled past its
 * expiry and another worker took the case over) the store refuses the append (LEASE_LOST), so no
 * two workers ever advance the same case. A case whose advance fails is not released but left to
 * its lease running out after `failureBackoffMs`, so a broken case does not spin the fleet.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../domain/failure.js'
import type { InvestigationSettings } from '../events/catalog.js'
import type { CaseStore, Lease } from '../adapters/case-store/store.js'
import { systemEnv, type Env } from '../adapters/env.js'
import type { ProjectResearch } from '../research/project-research.js'
import { advance, startInvestigation, type AdvanceResult, type AdvanceStep, type ModelFn } from './loop.js'
import { openAt } from './commands.js'
import { FailureError, toFailure } from '../adapters/fs-util.js'

/** A store with a queue (the SQL store). */
export interface QueueStore extends CaseStore {
  readonly claim: (worker: string, leaseMs: number) => Promise<Lease | null>
  readonly renew: (lease: Lease, leaseMs: number) => Promise<Lease>
  readonly release: (lease: Lease) => Promise<boolean>
  readonly list: () => Promise<ReadonlyArray<{ readonly lease: unknown; readonly runnable: boolean }>>
}

/** What a worker reports as it goes (for logs and terminals). */
export type WorkEvent =
  | { readonly kind: 'claimed'; readonly worker: string; readonly case_id: string; readonly expires_at: string }
  | { readonly kind: 'step'; readonly worker: string; readonly case_id: string; readonly step: AdvanceStep }
  | { readonly kind: 'advanced'; readonly worker: string; readonly case_id: string; readonly result: AdvanceResult }
  | { readonly kind: 'failed'; readonly worker: string; readonly case_id: string; readonly code: string; readonly message: string }
  | { readonly kind: 'released'; readonly worker: string; readonly case_id: string }
  | { readonly kind: 'idle'; readonly worker: string }

export interface WorkOptions {
  readonly store: QueueStore
  readonly model: ModelFn
  readonly research: ProjectResearch
  /** This worker's name (recorded with its leases); slots are named `NAME/1`, `NAME/2`, … */
  readonly worker: string
  /** Cases advanced at the same time (default 1). */
  readonly concurrency?: number
  /** How long a claim lasts without renewal (default 60 000 ms); renewed every third of it. */
  readonly leaseMs?: number
  /** How long an idle slot waits before asking the queue again (default 1000 ms). */
  readonly pollMs?: number
  /** Model turns per claim (default 20); the case goes back to the queue after them. */
  readonly maxTurns?: number
  /** Settings for cases that are prepared but not started (default: such cases fail with INVESTIGATION_NOT_STARTED). */
  readonly settings?: InvestigationSettings
  /** How long a case whose advance failed stays out of the queue (default 60 000 ms). */
  readonly failureBackoffMs?: number
  /**
   * Return once no case is runnable and none is held by a lease (batch runs and tests; a case
   * held by a crashed worker is waited for until its lease runs out); default: wait for more.
   */
  readonly untilIdle?: boolean
  readonly signal?: AbortSignal
  readonly env?: Env
  readonly onEvent?: (e: WorkEvent) => void
}

/** What a worker loop did: cases claimed, advanced, and the ones whose advance failed (with the code). */
export interface WorkSummary {
  readonly claims: number
  readonly advanced: number
  readonly failures: ReadonlyArray<{ readonly case_id: string; readonly code: string }>
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

/** Runs the worker loop until the signal fires (or, with `untilIdle`, until nothing is runnable). */
export const work = async (o: WorkOptions): Promise<WorkSummary> => {
  const signal = o.signal ?? new AbortController().signal
  const env = o.env ?? systemEnv
  const leaseMs = o.leaseMs ?? 60_000
  const report = o.onEvent ?? (() => undefined)
  let claims = 0
  let advanced = 0
  const failures: Array<{ case_id: string; code: string }> = []
  const slots = Math.max(1, Math.floor(o.concurrency ?? 1))
  let idleSlots = 0

  const runClaim = async (worker: string, first: Lease): Promise<void> => {
    let lease = first
    const caseId = lease.caseId
    const at = { store: o.store, caseId }
    // The lease is renewed while the case is worked on; a lost lease stops the work at once.
    const inner = new AbortController()
    const stop = (): void => inner.abort()
    signal.addEventListener('abort', stop, { once: true })
    let lost: Failure | null = null
    const timer = setInterval(() => {
      o.store.renew(lease, leaseMs).then((l) => { lease = l }, (e: unknown) => {
        lost = codeOf(e)
        inner.abort()
      })
    }, Math.max(250, Math.floor(leaseMs / 3)))
    try {
      const handle = await openAt(at)
      if (handle.cursor.state.state === 'NOT_STARTED') {
        if (o.settings === undefined) throw new FailureError(failure('INVESTIGATION_NOT_STARTED', 'the case is prepared but not started, and the worker has no settings to start it with'))
        const started = await startInvestigation(at, { settings: o.settings, env, lease })
        if (E.isLeft(started)) throw new FailureError(started.left)
      }
      const r = await advance(at, {
        model: o.model,
        research: o.research,
        env,
        lease,
        signal: inner.signal,
        ...(o.maxTurns === undefined ? {} : { maxTurns: o.maxTurns }),
        onStep: (step) => report({ kind: 'step', worker, case_id: caseId, step })
      })
      if (E.isLeft(r)) throw new FailureError(r.left)
      if (lost !== null) throw new FailureError(lost)
      advanced++
      report({ kind: 'advanced', worker, case_id: caseId, result: r.right })
      clearInterval(timer)
      await o.store.release(lease)
      report({ kind: 'released', worker, case_id: caseId })
    } catch (e) {
      clearInterval(timer)
      const f = lost ?? codeOf(e)
      failures.push({ case_id: caseId, code: f.code })
      report({ kind: 'failed', worker, case_id: caseId, code: f.code, message: f.message })
      // Keep a failed case out of the queue for a while (unless the lease is gone anyway).
      if (f.code !== 'LEASE_LOST') await o.store.renew(lease, o.failureBackoffMs ?? 60_000).catch(() => undefined)
    } finally {
      signal.removeEventListener('abort', stop)
    }
  }

  const slot = async (n: number): Promise<void> => {
    const worker = slots === 1 ? o.worker : `${o.worker}/${n}`
    let idle = false
    while (!signal.aborted) {
      let lease: Lease | null
      try {
        lease = await o.store.claim(worker, leaseMs)
      } catch (e) {
        // The store is unreachable: wait and ask again (the queue survives in the database).
        const f = codeOf(e)
        report({ kind: 'failed', worker, case_id: '', code: f.code, message: f.message })
        await sleep(o.pollMs ?? 1000, signal)
        continue
      }
      if (lease === null) {
        if (!idle) {
          idle = true
          idleSlots++
          report({ kind: 'idle', worker })
        }
        if (o.untilIdle === true && idleSlots === slots) {
          // Runnable counts too: a lease that ran out between the claim and this listing makes its
          // case runnable, and the next claim takes it over.
          const busy = await o.store.list().then((l) => l.some((e) => e.lease !== null || e.runnable), () => true)
          if (!busy) return
        }
        await sleep(o.pollMs ?? 1000, signal)
        continue
      }
      if (idle) {
        idle = false
        idleSlots--
      }
      claims++
      report({ kind: 'claimed', worker, case_id: lease.caseId, expires_at: new Date(lease.expiresAt).toISOString() })
      await runClaim(worker, lease)
    }
  }

  await Promise.all(Array.from({ length: slots }, (_, i) => slot(i + 1)))
  return { claims, advanced, failures }
}
