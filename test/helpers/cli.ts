/** Running the real `vba` binary (dist/src/cli/main.js) in a child process. */
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { repoRoot } from './fs.js'

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

export const vba = (args: readonly string[], options: { input?: string; env?: Record<string, string> } = {}): CliResult => {
  const r = spawnSync(process.execPath, [path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), ...args], {
    encoding: 'utf8',
    input: options.input ?? '',
    env: { ...process.env, ...(options.env ?? {}) }
  })
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr }
}
