#!/usr/bin/env node
/** Entry point of the `vba` binary. */
import { readFileSync } from 'node:fs'
import { run } from './program.js'
import { EXIT, nonUtf8Argument } from './io.js'

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

const argv = process.argv.slice(2)
// Arguments whose bytes are not UTF-8 reach process.argv with U+FFFD in their place: a case name or
// a note would silently become another one. The raw bytes (Linux: /proc/self/cmdline) say so.
let raw: Buffer | null = null
try {
  raw = readFileSync('/proc/self/cmdline')
} catch {
  raw = null
}
const bad = raw === null ? null : nonUtf8Argument(raw, argv.length)
let code: number
if (bad !== null) {
  process.stderr.write(`vba: INPUT_NOT_UTF8: argument ${bad} is not valid UTF-8; nothing was done\n`)
  code = EXIT.INPUT
} else {
  code = await run(argv, {
    out: (line) => {
      if (!stdoutClosed) process.stdout.write(`${line}\n`)
    },
    err: (line) => {
      if (!stderrClosed) process.stderr.write(`${line}\n`)
    }
  })
}
process.exitCode = code
