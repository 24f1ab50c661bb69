/** Test helpers: private temporary directories (removed at exit) and the repository root. */
import { mkdtempSync, rmSync, existsSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

const created: string[] = []
process.on('exit', () => {
  if (process.env['VBA_KEEP_TMP'] === '1') return
  for (const d of created) rmSync(d, { recursive: true, force: true })
})

/** A fresh empty directory under the system temp dir. */
export const tempDir = (label = 'vba-test'): string => {
  const d = mkdtempSync(path.join(os.tmpdir(), `${label}-`))
  created.push(d)
  return d
}

/** The repository root (the directory holding package.json). */
export const repoRoot = (): string => {
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir)
    if (up === dir) throw new Error('package.json not found above the test file')
    dir = up
  }
  return dir
}

/** Unwraps a Right or fails the test with the Left's content. */
export const right = <E, A>(r: { _tag: 'Left'; left: E } | { _tag: 'Right'; right: A }): A => {
  if (r._tag === 'Left') throw new Error(`expected Right, got Left: ${JSON.stringify(r.left)}`)
  return r.right
}

/** Unwraps a Left or fails the test. */
export const left = <E, A>(r: { _tag: 'Left'; left: E } | { _tag: 'Right'; right: A }): E => {
  if (r._tag === 'Right') throw new Error(`expected Left, got Right: ${JSON.stringify(r.right).slice(0, 500)}`)
  return r.left
}
