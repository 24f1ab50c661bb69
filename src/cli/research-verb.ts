/**
 * `vba research`: one project.query without a case or a model. Its own module, so a one-shot
 * research process loads the profile and research code only, not the case store and its rules.
 */
import { promises as fsp } from 'node:fs'
import * as E from 'fp-ts/lib/Either.js'
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { jsonLine } from './json-line.js'
import { decodeUtf8 } from '../adapters/fs-util.js'
import { fail, FailureError } from '../failures/error.js'
import type { Out } from './case-verbs.js'
import { parseBoundedJson } from '../events/bounds.js'

/** Reads a query file (or stdin for `-`) and parses it as JSON. */
export const readQuery = async (file: string): Promise<unknown> => {
  let bytes: Buffer
  try {
    bytes = file === '-' ? await readStdin() : await fsp.readFile(file)
  } catch {
    return fail('QUERY_UNREADABLE', `cannot read the query file ${file}`)
  }
  if (bytes.length > 1 << 20) fail('QUERY_INVALID', 'a query file is at most 1 MiB')
  const text = decodeUtf8(bytes, file === '-' ? 'the query on stdin' : `the query file ${file}`)
  const parsed = parseBoundedJson(text)
  if (E.isLeft(parsed)) return fail('QUERY_INVALID', `the query is ${parsed.left}`)
  return parsed.right
}

const readStdin = async (): Promise<Buffer> => {
  const chunks: Buffer[] = []
  for await (const c of process.stdin) chunks.push(c as Buffer)
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
