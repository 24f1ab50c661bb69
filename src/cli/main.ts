#!/usr/bin/env node
/** Entry point of the `vba` binary. */
import { run } from './program.js'

const code = await run(process.argv.slice(2), {
  out: (line) => process.stdout.write(line + '\n'),
  err: (line) => process.stderr.write(line + '\n')
})
process.exitCode = code
