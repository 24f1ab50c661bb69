/** What the CLI's verb groups are built with: verbs that load their module when they run, the terminal and the global --store. */
import type { Command } from 'commander'
import type { Out } from './case-verbs.js'

// Each verb's module loads when the verb runs: a command pays only for what it uses (a one-shot
// `vba research` does not load the SQL store drivers, the report renderer or the HTTP server).
export type Lazy<F> = F extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never
export const lazy = <M, K extends keyof M>(load: () => Promise<M>, key: K): Lazy<M[K]> =>
  (async (...args: unknown[]) => ((await load())[key] as (...a: unknown[]) => unknown)(...args)) as Lazy<M[K]>

/** What the verb groups are built with: the terminal, and how a verb that takes the global --store is made. */
export interface Build {
  readonly io: Out
  /** A verb that takes `--store` (its help lists it; every other verb refuses it as unknown). */
  readonly storeVerb: (parent: Command, spec: string) => Command
}
