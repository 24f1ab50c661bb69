/** What the CLI's verb groups are built with: verbs that load their module when they run, the terminal and the global --store; which group a command line needs. */
import type { Command } from 'commander'
import type { Out } from './case-verbs.js'

// Each verb's module loads when the verb runs: a command pays only for what it uses (a one-shot
// `vba research` does not load the SQL store drivers, the report renderer or the HTTP server).
export type Lazy<F> = F extends (...a: infer A) => infer R ? (...a: A) => Promise<Awaited<R>> : never
export const lazy = <M, K extends keyof M>(load: () => Promise<M>, key: K): Lazy<M[K]> =>
  (async (...args: unknown[]) => ((await load())[key] as (...a: unknown[]) => unknown)(...args)) as Lazy<M[K]>

/** Every verb of one module, each loading the module when it runs (as {@link lazy}): `caseVerbs.verify(io, …)`. */
export const lazyVerbs = <M>(load: () => Promise<M>): { readonly [K in keyof M]: Lazy<M[K]> } =>
  new Proxy({} as { readonly [K in keyof M]: Lazy<M[K]> }, { get: (_, key) => lazy(load, key as keyof M) })

/** What the verb groups are built with: the terminal, and how a verb that takes the global --store is made. */
export interface Build {
  readonly io: Out
  /** A verb that takes `--store` (its help lists it; every other verb refuses it as unknown). */
  readonly storeVerb: (parent: Command, spec: string) => Command
}

/** A group of verbs: the top-level verbs it adds to the program, and how. */
export interface VerbGroup {
  readonly verbs: readonly string[]
  readonly add: (program: Command, build: Build) => void
}

// The program's options that take a value: `vba --store URL case init X` names the verb `case`.
const VALUED = new Set(['--store', '--sign-key', '--sign-principal'])

/** The verb a command line names: its first word that is neither an option nor an option's value. */
export const verbOf = (argv: readonly string[]): string | undefined => {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? ''
    if (a === '--') return argv[i + 1]
    if (VALUED.has(a)) i++
    else if (!a.startsWith('-')) return a
  }
  return undefined
}

/**
 * The groups a command line needs: the one group of the verb it names, or all of them (no verb,
 * `help`, an unknown or misspelt verb: what commander lists or suggests then needs every verb).
 * A command's help, options and errors are the same either way: the group builds all of its verbs.
 */
export const groupsFor = (groups: readonly VerbGroup[], argv: readonly string[]): readonly VerbGroup[] => {
  const verb = verbOf(argv)
  const group = verb === undefined ? undefined : groups.find((g) => g.verbs.includes(verb))
  return group === undefined ? groups : [group]
}
