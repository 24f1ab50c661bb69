/** Benchmark helpers: timing child processes, reference commands, formatting. */
import { spawnSync } from 'node:child_process'
import * as os from 'node:os'
import * as path from 'node:path'
import { parseArgs } from 'node:util'

/** A benchmark's options: strings (numbers, lists, paths) and flags, with their defaults. */
export type BenchOptions = Record<string, { type: 'string'; default?: string } | { type: 'boolean'; default?: boolean }>

/** The values parsed for `O`: a string option with a default is always there. */
export type BenchValues<O extends BenchOptions> = {
  [K in keyof O]: O[K] extends { type: 'boolean' }
    ? boolean
    : O[K] extends { default: string }
      ? string
      : string | undefined
}

/** Options whose default is a number or a list of numbers take only those (`--runs x` is refused, not NaN). */
const NUMBERS = /^\d+(,\d+)*$/

/**
 * The command line of the benchmark at `script` (its import.meta.url) parsed against `options`:
 * `--help` prints its usage; an unknown option, a missing value or a number option given anything
 * but numbers prints what is wrong with the usage and exits with 2 (no stack trace, nothing run).
 */
export const benchArgs = <O extends BenchOptions>(script: string, options: O): BenchValues<O> => {
  const name = path.basename(new URL(script).pathname)
  const usage = `usage: node dist/bench/${name}${Object.entries(options)
    .map(([k, o]) => (o.type === 'boolean' ? ` [--${k}]` : ` [--${k} ${o.default ?? 'VALUE'}]`))
    .join('')}`
  const argv = process.argv.slice(2)
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${usage}\n`)
    process.exit(0)
  }
  const refuse = (why: string): never => {
    process.stderr.write(`${name}: ${why}\n${usage}\n`)
    process.exit(2)
  }
  let values: Record<string, string | boolean | undefined> = {}
  try {
    values = parseArgs({ args: argv, options, strict: true }).values as typeof values
  } catch (e) {
    refuse(e instanceof Error ? e.message : String(e))
  }
  for (const [k, o] of Object.entries(options)) {
    const v = values[k]
    if (o.type === 'string' && typeof o.default === 'string' && NUMBERS.test(o.default) && typeof v === 'string')
      if (!NUMBERS.test(v) || (k === 'runs' && Number(v) < 1))
        refuse(
          `--${k} takes ${o.default.includes(',') ? 'whole numbers separated by commas' : 'a whole number'}${k === 'runs' ? ' of at least 1' : ''}, not ${JSON.stringify(v)}`
        )
  }
  return values as BenchValues<O>
}

export interface Timed {
  readonly ms: number
  readonly maxRssMb?: number
}

/** Runs a shell pipeline and returns its wall time; fails loudly if the command fails. */
export const timeShell = (script: string, cwd: string): Timed => {
  const t0 = process.hrtime.bigint()
  const r = spawnSync('bash', ['-c', script], { cwd, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26 })
  const ms = Number(process.hrtime.bigint() - t0) / 1e6
  if (r.status !== 0) throw new Error(`reference command failed (${script}): ${r.stderr.toString()}`)
  return { ms }
}

/** Runs a node worker script that prints one JSON line {ms, maxRssMb, ...}. */
export const runWorker = (
  script: string,
  args: readonly string[],
  nodeFlags: readonly string[] = []
): Timed & Record<string, unknown> => {
  const r = spawnSync(process.execPath, [...nodeFlags, script, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 })
  if (r.status !== 0) throw new Error(`worker ${script} failed: ${r.stderr}`)
  const last = r.stdout.trim().split('\n').pop() ?? '{}'
  return JSON.parse(last) as Timed & Record<string, unknown>
}

export const machine = (): string =>
  `${os.cpus().length} cores (${os.cpus()[0]?.model.trim() ?? 'unknown cpu'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`

export const mb = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`
export const rate = (bytes: number, ms: number): string => `${(bytes / 2 ** 20 / (ms / 1000)).toFixed(0)} MiB/s`

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? NaN
}
