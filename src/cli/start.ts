/** What the `vba` binary runs (cli/main.ts, and the bundle's script in dist/vba: scripts/bundle.mjs). */
import { readFileSync } from 'node:fs'
import { VERSION } from '../version.js'

/**
 * Runs the command line `argv` (process.argv without node and the script) and sets process.exitCode.
 * A reader that closes the pipe early (`vba verify DIR | head -1`) ends the output quietly: the
 * rest is not written, and the command still exits with its own code (no EPIPE stack trace).
 */
export const start = async (argv: readonly string[] = process.argv.slice(2)): Promise<void> => {
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
  // `vba --version` answers before the program and its verbs are loaded (what commander prints).
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    process.stdout.write(`${VERSION}\n`)
    process.exitCode = 0
    return
  }
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
    process.exitCode = EXIT.INPUT
    return
  }
  process.exitCode = await run(argv, {
    out: (line) => {
      if (!stdoutClosed) process.stdout.write(`${line}\n`)
    },
    err: (line) => {
      if (!stderrClosed) process.stderr.write(`${line}\n`)
    }
  })
}
