/**
 * `vba research`: one project.query without a case or a model. Its own module, so a one-shot
 * research process loads the profile and research code only, not the case store and its rules.
 */
import * as E from 'fp-ts/lib/Either.js'
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { jsonLine } from './json-line.js'
import { decodeUtf8, unreadableWhy } from '../adapters/fs-util.js'
import { readNamedFile } from '../adapters/regular-file.js'
import { fail, FailureError } from '../failures/error.js'
import type { Out } from './case-verbs.js'
import { parseBoundedJson } from '../events/bounds.js'

/** The most a query file (or stdin) may hold: a query is a small JSON object. */
export const MAX_QUERY_BYTES = 1 << 20

/**
 * Reads a query file (or stdin for `-`) and parses it as JSON. The file is a regular file or a pipe
 * (`--query <(…)`) of at most {@link MAX_QUERY_BYTES}; anything else is QUERY_INVALID before a
 * byte is read, and what it holds is never shown (a JSON error names the line and column).
 */
export const readQuery = async (file: string): Promise<unknown> => {
  const shown = file === '-' ? 'the query on stdin' : `the query file ${file}`
  let bytes: Buffer
  try {
    bytes =
      file === '-'
        ? await readStdin(MAX_QUERY_BYTES)
        : await readNamedFile(file, { maxBytes: MAX_QUERY_BYTES, pipe: true, shown, code: 'QUERY_INVALID' })
  } catch (e) {
    if (e instanceof FailureError) throw e
    return fail('QUERY_UNREADABLE', `cannot read the query file ${file}: ${unreadableWhy(e)}`)
  }
  const text = decodeUtf8(bytes, shown)
  const parsed = parseBoundedJson(text)
  if (E.isLeft(parsed)) return fail('QUERY_INVALID', `${shown} is ${parsed.left}`)
  return parsed.right
}

/** Stdin up to `maxBytes` (QUERY_INVALID past it: the rest is not read). */
const readStdin = async (maxBytes: number): Promise<Buffer> => {
  const chunks: Buffer[] = []
  let total = 0
  for await (const c of process.stdin) {
    chunks.push(c as Buffer)
    total += (c as Buffer).length
    if (total > maxBytes) {
      process.stdin.destroy()
      return fail('QUERY_INVALID', `the query on stdin holds more than the ${maxBytes} bytes allowed`, {
        max: maxBytes
      })
    }
  }
  return Buffer.concat(chunks)
}

export const printJson = (io: Out, value: unknown, pretty: boolean): void => {
  const text = jsonLine(value)
  io.out(pretty ? JSON.stringify(JSON.parse(text), null, 2) : text)
}

export const research = async (io: Out, opts: { config: string; query: string; pretty?: boolean }): Promise<void> => {
  const profile = await loadProfile(opts.config)
  const query = await readQuery(opts.query)
  const r = createProjectResearch(profile, { openSource: cliOpenSource })
  try {
    const out = await r.query(query)()
    if (E.isLeft(out)) {
      printJson(
        io,
        { error: { code: out.left.code, message: out.left.message, data: out.left.data } },
        opts.pretty === true
      )
      throw new FailureError(out.left)
    }
    printJson(io, out.right, opts.pretty === true)
  } finally {
    await r.close()
  }
}
