/** Benchmark helpers: timing child processes, reference commands, formatting. */
import { spawnSync } from 'node:child_process'
import * as os from 'node:os'

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
