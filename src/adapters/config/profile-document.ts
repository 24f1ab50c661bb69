/**
 * A profile file as a TOML document: read and parsed (CONFIG_NOT_FOUND, CONFIG_INVALID), and its
 * `include` followed once. Decoding the merged document is profile.ts's.
 */
import * as path from 'node:path'
import { parse as parseToml, TomlError } from 'smol-toml'
import { decodeUtf8, errnoOf } from '../fs-util.js'
import { readNamedFile } from '../regular-file.js'
import { FailureError, fail } from '../../failures/error.js'

/**
 * The most a profile file (or a file it includes) may hold: profiles are hand-written settings of a
 * few KiB. A larger file, a directory or a device is CONFIG_INVALID before it is read (a pipe such
 * as `--config <(…)` is read up to the bound).
 */
export const MAX_PROFILE_BYTES = 1 << 20

/** The TOML document of a profile file (CONFIG_NOT_FOUND, CONFIG_INVALID), `by` naming the profile that included it. */
export const readDocument = async (file: string, by?: string): Promise<Record<string, unknown>> => {
  const included = by === undefined ? '' : ` (included by ${path.basename(by)})`
  let text: string
  try {
    const bytes = await readNamedFile(file, {
      maxBytes: MAX_PROFILE_BYTES,
      pipe: true,
      shown: `profile ${file}${included}`,
      code: 'CONFIG_INVALID'
    })
    text = decodeUtf8(bytes, `profile ${file}`)
  } catch (e) {
    if (e instanceof FailureError) throw e
    return fail(
      errnoOf(e) === 'ENOENT' ? 'CONFIG_NOT_FOUND' : 'CONFIG_INVALID',
      `cannot read profile ${file}${included}: ${errnoOf(e) ?? 'error'}`,
      { file }
    )
  }
  try {
    return parseToml(text) as Record<string, unknown>
  } catch (e) {
    const where = e instanceof TomlError ? ` (line ${e.line}, column ${e.column})` : ''
    return fail('CONFIG_INVALID', `${path.basename(file)}${included}: not valid TOML${where}`, { file })
  }
}

/**
 * A profile's `include = ["adapter.toml", …]` (paths relative to its folder), followed once: the
 * included files' sections first, in order, then the profile's own; where both have a section,
 * its keys merge and the later file's value of a key wins. An included file includes nothing.
 */
export const withIncludes = async (file: string, doc: Record<string, unknown>): Promise<Record<string, unknown>> => {
  const { include, ...own } = doc
  if (include === undefined) return doc
  if (!(typeof include === 'string' || (Array.isArray(include) && include.every((i) => typeof i === 'string'))))
    fail('CONFIG_INVALID', `${path.basename(file)}: include is a file name or a list of them`, { file })
  const merged: Record<string, unknown> = {}
  const add = (part: Record<string, unknown>): void => {
    for (const [name, value] of Object.entries(part)) {
      const before = merged[name]
      const both = [before, value].every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))
      merged[name] = both ? { ...(before as object), ...(value as object) } : value
    }
  }
  for (const name of typeof include === 'string' ? [include] : (include as string[])) {
    const target = path.resolve(path.dirname(path.resolve(file)), name)
    const part = await readDocument(target, file)
    if (part['include'] !== undefined)
      fail('CONFIG_INVALID', `${path.basename(target)} (included by ${path.basename(file)}) may not include others`, {
        file: target
      })
    add(part)
  }
  add(own)
  return merged
}
