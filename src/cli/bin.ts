#!/usr/bin/env node
/**
 * The `vba` binary of the package (bundled to dist/vba/main.js, CommonJS, by scripts/bundle.mjs):
 * answers `vba --version` itself, and runs every other command line in the CLI script beside it
 * with its code cache (src/cli/script-loader.ts). tsc's own entry of the CLI is cli/main.ts.
 */
import { fileURLToPath } from 'node:url'
import { VERSION } from '../version.js'

const argv = process.argv.slice(2)
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) process.stdout.write(`${VERSION}\n`)
else {
  // A failure the program did not turn into a coded message is an unhandled rejection: Node prints
  // it and exits 1.
  void import('./script-loader.js').then(({ loadCliScript }) => {
    const here = (name: string): string => fileURLToPath(new URL(name, import.meta.url))
    return loadCliScript(here('./cli-script.js'), here('./cli-script.cache')).exports.start(argv)
  })
}
