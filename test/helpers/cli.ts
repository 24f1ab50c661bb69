/** Running the real `vba` binary (the bundle dist/vba/main.js that package.json's bin names) in a child process. */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import * as path from 'node:path'
import { repoRoot } from './fs.js'

/** The `vba` binary as users run it: the bundle (scripts/bundle.mjs, rebuilt by scripts/run-tests.mjs). */
export const VBA_BIN = path.join(repoRoot(), 'dist', 'vba', 'main.js')

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const vba = (
  args: readonly string[],
  options: { input?: string; env?: Record<string, string> } = {}
): CliResult => {
  const r = spawnSync(process.execPath, [VBA_BIN, ...args], {
    encoding: 'utf8',
    input: options.input ?? '',
    env: { ...process.env, ...(options.env ?? {}) }
  })
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}

/** Starts `vba serve ARGS --port 0` and resolves to its base URL once it listens; kill the child when done. */
export const startServe = async (
  args: readonly string[],
  env: Record<string, string> = {}
): Promise<{ child: ChildProcessWithoutNullStreams; base: string }> => {
  const child = spawn(process.execPath, [VBA_BIN, 'serve', ...args, '--port', '0'], { env: { ...process.env, ...env } })
  const base = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`vba serve exited with ${String(code)}`)))
  })
  return { child, base }
}
