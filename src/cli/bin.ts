#!/usr/bin/env node
/**
 * The `vba` binary of the package (bundled to dist/vba/main.js, CommonJS, by scripts/bundle.mjs):
 * answers `vba --version` itself, and runs every other command line in the CLI script beside it
 * with its code cache (src/cli/script-loader.ts). tsc's own entry of the CLI is cli/main.ts.
 */
import { existsSync, realpathSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { VERSION } from '../version.js'

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) process.stdout.write(`${VERSION}\n`)
else {
  // A failure the program did not turn into a coded message is an unhandled rejection: Node prints
  // it and exits 1.
  void import('./script-loader.js').then(({ loadCliScript }) => {
    const load = (dir: string) =>
      loadCliScript(path.join(dir, 'cli-script.js'), path.join(dir, 'cli-script.cache')).exports.start(argv)
    const bin = fileURLToPath(import.meta.url)
    try {
      return load(path.dirname(bin))
    } catch (e) {
      // Run through a link of the bin that Node did not resolve (node --preserve-symlinks-main):
      // the script is beside the bin's real file.
      if ((e as { code?: unknown }).code !== 'ENOENT' || existsSync(path.join(path.dirname(bin), 'cli-script.js')))
        throw e
      return load(path.dirname(realpathSync(bin)))
    }
  })
}
