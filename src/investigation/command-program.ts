/**
 * Whether a model command's program can run, judged before any case is touched: a mistyped
 * `--model-command` otherwise reached the shell at the first turn, exited 127 ("not found"), and
 * the case was blocked as a model outage after the investigation had started.
 *
 * Only a plain command is judged: its first word after `NAME=value` assignments (and an `env`),
 * when that word holds no quoting, expansion or glob and is not the shell's own (a builtin or a
 * keyword). Any other command line is left to the shell.
 */
import { accessSync, constants, statSync } from 'node:fs'
import * as path from 'node:path'
import { programParts } from './models.js'

/** Words the shell runs itself (builtins and keywords): never looked up on PATH. */
const SHELL_WORDS = new Set([
  '.',
  ':',
  '!',
  '{',
  '(',
  '[',
  'alias',
  'break',
  'builtin',
  'case',
  'cd',
  'command',
  'continue',
  'eval',
  'exec',
  'exit',
  'export',
  'for',
  'getopts',
  'hash',
  'if',
  'local',
  'read',
  'readonly',
  'return',
  'select',
  'set',
  'shift',
  'source',
  'test',
  'time',
  'times',
  'trap',
  'type',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'until',
  'wait',
  'while'
])

/** A word the shell takes as it is: no quotes, expansions, globs, redirections or operators. */
const PLAIN = /^[A-Za-z0-9._/+@%,-]+$/

const runnable = (file: string): boolean => {
  try {
    if (!statSync(file).isFile()) return false
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/**
 * Why `command`'s program cannot run, or null (also for a command line this does not judge).
 * `env` is the environment the command gets (its PATH), `cwd` the folder it runs in.
 */
export const commandProgramProblem = (command: string, env: NodeJS.ProcessEnv, cwd: string): string | null => {
  // After any `NAME=value` assignments and an `env` with its options (as the cases record it).
  const { word: program, before } = programParts(command)
  if (program === '' || !PLAIN.test(program) || SHELL_WORDS.has(program)) return null
  // A PATH the line sets itself, or an env option (-i, -S, -P…), changes where the program is found.
  if (/(^|\s)PATH=/.test(before) || /(^|\s)-/.test(before)) return null
  const shown = JSON.stringify(program.slice(0, 200))
  if (program.includes('/')) {
    const file = path.resolve(cwd, program)
    return runnable(file) ? null : `the model command's program ${shown} is not an executable file`
  }
  const dirs = (env['PATH'] ?? '').split(':').map((d) => (d === '' ? '.' : d))
  if (dirs.some((d) => runnable(path.resolve(cwd, d, program)))) return null
  return `the model command's program ${shown} is not found on PATH`
}

/**
 * Why a model endpoint's URL could never be reached, or null: none at all, not http(s), or holding
 * credentials (the URL's origin is recorded with every answer: a key belongs in api_key_env). The
 * URL itself is never part of the words: it may hold a key.
 */
export const endpointUrlProblem = (url: string): string | null => {
  if (!URL.canParse(url)) return 'is not a URL (http://host:port/v1)'
  const u = new URL(url)
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return `is not an http or https URL (its scheme is ${JSON.stringify(u.protocol.slice(0, 20))})`
  if (u.username !== '' || u.password !== '')
    return 'holds credentials (user:password@host): name the variable holding the key in [model] api_key_env instead'
  return null
}

/** Why `[model] api_key_env` names no key here, or null. */
export const apiKeyProblem = (name: string | undefined, env: NodeJS.ProcessEnv): string | null =>
  name === undefined || (env[name] ?? '') !== ''
    ? null
    : `[model] api_key_env names ${name}, which is not set (or empty) here: export it, or remove api_key_env for an endpoint that needs no key`
