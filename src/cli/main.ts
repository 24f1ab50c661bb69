#!/usr/bin/env node
/** Entry point of the `vba` binary. */
import { readFileSync } from 'node:fs'
import { VERSION } from '../version.js'

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
// `vba --version` answers before the program and its verbs are loaded (what commander prints).
const versionOnly = argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')
/** Runs the program; arguments that are not UTF-8 are refused first (they would become other names). */
const runProgram = async (): Promise<number> => {
  // Arguments whose bytes are not UTF-8 reach process.argv with U+FFFD in their place: a case name or
  // a note would silently become another one. The raw bytes (Linux: /proc/self/cmdline) say so.
  let raw: Buffer | null = null
  try {
    raw = readFileSync('/proc/self/cmdline')
  } catch {
    raw = null
  }
  // One import: the program and what it imports are one chunk of the bundle (scripts/bundle.mjs).
  const { EXIT, nonUtf8Argument, run } = await import('./program.js')
  const bad = raw === null ? null : nonUtf8Argument(raw, argv.length)
  if (bad !== null) {
    process.stderr.write(`vba: INPUT_NOT_UTF8: argument ${bad} is not valid UTF-8; nothing was done\n`)
    return EXIT.INPUT
  }
  return run(argv, {
    out: (line) => {
      if (!stdoutClosed) process.stdout.write(`${line}\n`)
    },
    err: (line) => {
      if (!stderrClosed) process.stderr.write(`${line}\n`)
    }
  })
}

let code = 0
if (versionOnly) process.stdout.write(`${VERSION}\n`)
else code = await runProgram()
process.exitCode = code
