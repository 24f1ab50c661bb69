/** The package as npm packs it: the tarball of this repository and the files it holds. */
import { execFileSync } from 'node:child_process'
import * as path from 'node:path'
import { repoRoot } from './fs.js'

/** `npm pack` (scripts not run) into `dir`: the tarball's path and the paths inside it. */
export const packTarball = (dir: string): { readonly tarball: string; readonly files: readonly string[] } => {
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], {
      cwd: repoRoot(),
      encoding: 'utf8'
    })
  ) as Array<{ filename: string; files: Array<{ path: string }> }>
  return {
    tarball: path.join(dir, packed[0]?.filename ?? ''),
    files: packed[0]?.files.map((f) => f.path) ?? []
  }
}
