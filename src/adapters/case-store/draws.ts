/**
 * The draws a command's plan takes from its environment (the clock for its date, the ids of its
 * events), recorded so that planning the same command again (a store's retry after it lost a race,
 * or its fallback to another way of writing) takes the same values: a command's recorded bytes are
 * drawn once, however often it was planned, as when it is planned once under a lock. Only a date
 * that would now be before the case's last event (another writer's event, dated later, won the
 * race) is drawn again, where a plan under the lock would have drawn it.
 */
import type { Env } from '../env.js'

/** The recorded draws of one command's plans. */
export interface Draws {
  /**
   * An environment for one more plan: it gives the draws recorded so far in order (a date only
   * when it is not before `floor`, the case's last date), then draws and records new ones.
   */
  readonly env: (floor: string) => Env
}

/** Records the draws of the plans of one command from `env`. */
export const recordDraws = (env: Env): Draws => {
  const times: Date[] = []
  const ids: string[] = []
  return {
    env: (floor) => {
      let t = 0
      let i = 0
      return {
        ...env,
        now: () => {
          const recorded = times[t]
          if (recorded === undefined || recorded.toISOString() < floor) times[t] = env.now()
          return times[t++] as Date
        },
        newId: () => {
          if (ids[i] === undefined) ids[i] = env.newId()
          return ids[i++] as string
        }
      }
    }
  }
}
