/** The client's `queue` namespace: list, claim, renew, release, advance under a lease, and work. */
import { hostname } from 'node:os'
import { directoryQueue, listDirectoryQueue } from '../adapters/case-store/directory-queue.js'
import { LEASE_MS } from '../adapters/case-store/store.js'
import { work } from '../investigation/worker.js'
import { advance } from '../investigation/loop.js'
import { startSettings } from '../investigation/settings.js'
import { orThrow, settle, settleOwn } from './errors.js'
import type { ClientContext } from './context.js'
import { advanceOptions } from './investigations.js'
import type { QueueApi } from './types.js'
import { definedMembers } from '../optional.js'
import { QUEUE_PAGE, type QueueEntry } from '../projections/queue.js'

/** The `queue` namespace over a client's context. */
export const queueApi = (ctx: ClientContext): QueueApi => {
  const { env, profile, live, needStore, researchOf } = ctx
  return {
    list: async (root) => {
      live()
      if (root !== undefined) return settle(() => listDirectoryQueue(root))
      const store = needStore()
      return settle(async () => {
        const all: QueueEntry[] = []
        let after: string | undefined
        for (;;) {
          const p = await store.page({
            limit: QUEUE_PAGE.max,
            counts: false,
            ...(after === undefined ? {} : { after })
          })
          all.push(...p.entries)
          if (p.next === null) break
          after = p.next
        }
        return [...all.filter((e) => e.runnable), ...all.filter((e) => !e.runnable)]
      })
    },
    page: async (o = {}) => {
      live()
      const { root, ...options } = o
      if (root !== undefined) return settle(() => directoryQueue(root).page(options))
      return settle(() => needStore().page(options))
    },
    claim: async (worker, o = {}) => settle(() => needStore().claim(worker, o.leaseMs ?? LEASE_MS.default)),
    renew: async (lease, o = {}) => settle(() => needStore().renew(lease, o.leaseMs ?? LEASE_MS.default)),
    release: async (lease) => settle(() => needStore().release(lease)),
    advance: async (lease, o) => {
      const s = needStore()
      return settleOwn((own) =>
        advance({ store: s, caseId: lease.caseId }, { ...advanceOptions(o, env, own), research: researchOf(), lease })
      )
    },
    work: async (o) => {
      const s = needStore()
      const r = researchOf()
      const settings = profile === null ? null : orThrow(await startSettings(profile, r))
      return settle(() =>
        work({
          store: s,
          model: o.model,
          research: r,
          worker: o.worker ?? `${hostname()}.${process.pid}`,
          env,
          ...(settings === null ? {} : { settings }),
          ...definedMembers(
            o,
            'concurrency',
            'leaseMs',
            'pollMs',
            'maxTurns',
            'strict',
            'untilIdle',
            'signal',
            'onEvent'
          )
        })
      )
    }
  }
}
