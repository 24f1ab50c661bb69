/** Running the real `vba` binary (dist/src/cli/main.js) in a child process. */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process'
import * as path from 'node:path'
import { repoRoot } from './fs.js'

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const vba = (
  args: readonly string[],
  options: { input?: string; env?: Record<string, string> } = {}
): CliResult => {
  const r = spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), ...args], {
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
  const child = spawn(
    process.execPath,
    [path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'serve', ...args, '--port', '0'],
    { env: { ...process.env, ...env } }
  )
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
