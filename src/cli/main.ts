#!/usr/bin/env node
/** Entry point of the `vba` binary. */
import { run } from './program.js'

// A reader that closes the pipe early (`vba verify DIR | head -1`) ends the output quietly: the
// rest is not written, and the command still exits with its own code (no EPIPE stack trace).
let stdoutClosed = false
let stderrClosed = false
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') stdoutClosed = true
  else throw e
})
process.stderr.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') stderrClosed = true
  else throw e
})

const code = await run(process.argv.slice(2), {
  out: (line) => {
    if (!stdoutClosed) process.stdout.write(line + '\n')
  },
  err: (line) => {
    if (!stderrClosed) process.stderr.write(line + '\n')
  }
})
process.exitCode = code
