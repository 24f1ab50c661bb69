/**
 * A signed command planned while the store takes its lock. A signing writer's plan costs more
 * CPU than an unsigned one (the Ed25519 signature, the CommandSigned event sealed and its rules),
 * and the store's lock (the directory's lock file, the SQL row's `SELECT … FOR UPDATE`) is a wait
 * on IO: so the plan is made on the handle's head while that IO is in flight, and used only when
 * the head read under the lock is that head (nothing else was written meanwhile), where planning
 * after the lock gives the same plan. The plan's object lookups wait for that answer, so they run
 * where they would have (under the lock, after the lease and duplicate checks); a failure planning
 * met is the append's failure only then. When the head moved the plan is dropped and the command
 * planned again: its clock and ids are drawn twice, which is why only signing writers plan ahead
 * (an unsigned writer's draws, and so its bytes, are exactly what they were). The plan's
 * signature is made on node:crypto's threadpool (signOffThread) and its rules checked a turn of the
 * event loop later, so the lock's IO callbacks run in between instead of waiting for the whole plan.
 */
import { signsKnown, type Env } from '../env.js'
import type { RawCommand } from './append.js'
import type { CaseHandle } from './handle.js'
import { planCommand, type CommandPlan, type ObjectLookup } from './plan.js'

/** A head as a store reads it under its lock. */
interface LockedHead {
  readonly seq: number
  readonly hash: string
  readonly bytes: number
}

/** A plan made ahead of the lock. */
export interface PlanAhead {
  /** The plan when `head` (read under the lock) is the one it was made on, else undefined (plan again). */
  readonly take: (head: LockedHead) => Promise<CommandPlan | undefined>
}

const dropped = new Error('the plan made ahead was dropped')

/**
 * Starts planning `cmd` on the handle's head when the env signs with a signer already loaded and
 * the command is new and expects that head; undefined otherwise (plan under the lock as before).
 */
export const planAhead = (
  handle: CaseHandle,
  cmd: RawCommand,
  env: Env,
  objects: ObjectLookup
): PlanAhead | undefined => {
  const signer = signsKnown(env)
  if (signer === undefined || cmd.expectedGeneration !== handle.cursor.seq || handle.cursor.commands.has(cmd.commandId))
    return undefined
  const { seq, hash, bytes } = handle.cursor
  let answer: (same: boolean) => void = () => undefined
  const same = new Promise<boolean>((resolve) => {
    answer = resolve
  })
  const ask = async <A>(lookup: () => Promise<A>): Promise<A> => ((await same) ? lookup() : Promise.reject(dropped))
  const gated: ObjectLookup = {
    sizeOf: (digest) => ask(() => objects.sizeOf(digest)),
    read: (ref) => ask(() => objects.read(ref))
  }
  // The plan starts a turn of the event loop later, once the lock's request is out (the SQL
  // store's statement is written a few promise turns after the call): its CPU runs while that
  // request is in flight instead of delaying it.
  const planned = signer
    .then((s) => new Promise<typeof s>((resolve) => setImmediate(() => resolve(s))))
    .then((s) => (s === undefined ? undefined : planCommand(handle, cmd, env, gated, true)))
    .then(
      (plan) => ({ plan }),
      (error: unknown) => ({ plan: undefined, error })
    )
  return {
    take: async (head) => {
      const unchanged = head.seq === seq && head.hash === hash && head.bytes === bytes
      answer(unchanged)
      if (!unchanged) return undefined
      const p = await planned
      if ('error' in p) throw p.error
      return p.plan
    }
  }
}
