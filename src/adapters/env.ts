/** Clock and id source, injected so tests and replays can pin them; and who signs the commands. */
import { randomUUID } from 'node:crypto'
import type { Signer } from './ssh-keys.js'

/** A clock and an id source (inject a fixed one in tests). @category Client */
export interface Env {
  readonly now: () => Date
  readonly newId: () => string
  /**
   * Milliseconds on a monotonic clock, for the durations a case records (a model call's
   * latency); default `performance.now()`. A fixed environment stands it still, so a recorded
   * case is the same bytes however busy the machine is.
   */
  readonly elapsed?: () => number
  /**
   * Who signs every command appended with this environment (a `CommandSigned` event ends each);
   * default: the process's signer (the CLI's `--sign-key`), else none (nothing signed).
   */
  readonly signer?: Signer
}

let processSigner: (() => Promise<Signer | undefined>) | undefined
let loaded: Promise<Signer | undefined> | undefined

/**
 * The signer of every append whose environment names none (the CLI's --sign-key, VBA_SIGN_KEY, the
 * [signing] of the verb's profile),
 * loaded on the first append: a command that writes nothing never reads the key.
 */
export const useProcessSigner = (load: (() => Promise<Signer | undefined>) | undefined): void => {
  processSigner = load
  loaded = undefined
}

/** The signer an append with `env` signs with, if any. */
export const signerOf = async (env: Env): Promise<Signer | undefined> => {
  if (env.signer !== undefined) return env.signer
  if (processSigner === undefined) return undefined
  loaded ??= processSigner()
  return loaded
}

/**
 * Whether `env` signs, when that is known without reading a key (its own signer, or the process's
 * once loaded); undefined while the process's key was never read.
 */
export const signsKnown = (env: Env): Promise<Signer | undefined> | undefined =>
  env.signer !== undefined ? Promise.resolve(env.signer) : processSigner === undefined ? undefined : loaded

/** @category Fixtures */
export const systemEnv: Env = { now: () => new Date(), newId: () => randomUUID() }

/** A deterministic environment: a fixed start time advancing 1 ms per call, counter ids. @category Fixtures */
export const fixedEnv = (startIso = '2026-01-01T00:00:00.000Z', prefix = 'id'): Env => {
  let clock = Date.parse(startIso)
  let counter = 0
  return {
    now: () => new Date(clock++),
    newId: () => `${prefix}-${String(++counter).padStart(6, '0')}`,
    elapsed: () => 0
  }
}
