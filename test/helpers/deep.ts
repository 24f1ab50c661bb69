/**
 * Deep and wide JSON values as a forger writes them: text built without recursion (no encoder could
 * write a value 6,000 levels deep), sealed into correctly hashed, canonical event lines.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { genesisHash } from '../../src/events/chain.js'
import { CaseDeclaration, EVENT_FORMAT } from '../../src/events/envelope.js'
import { right } from './fs.js'

/** The placeholder a template holds where the deep value goes (a JSON string, replaced by raw text). */
export const DEEP = '@@DEEP@@'

export type Shape = 'array' | 'object' | 'mixed'

/** JSON text nested `depth` levels deep (`[[[…]]]`, `{"a":{"a":…}}`, or both in turn), a scalar at the bottom. */
export const deepText = (depth: number, shape: Shape = 'array'): string => {
  const open: string[] = []
  const close: string[] = []
  for (let i = 0; i < depth; i++) {
    const arr = shape === 'array' || (shape === 'mixed' && i % 2 === 0)
    open.push(arr ? '[' : '{"a":')
    close.push(arr ? ']' : '}')
  }
  return `${open.join('')}0${close.reverse().join('')}`
}

/** JSON text of an array with `members` zeros (wide, flat). */
export const wideText = (members: number): string => `[${new Array<string>(members).fill('0').join(',')}]`

/** The canonical text of `template` with its placeholder string replaced by `raw`. */
export const withRaw = (template: unknown, raw: string): string =>
  right(canonicalJson(template)).replace(JSON.stringify(DEEP), raw)

export interface RawEvent {
  readonly type: string
  readonly version: number
  readonly actor: string
  readonly data: unknown
}

/**
 * Seals one event line after `prev` (its seq `seq`) with `raw` in place of the placeholder,
 * anywhere in the envelope (data or another member): canonical and correctly hashed.
 */
export const sealRawLine = (
  e: RawEvent & { readonly envelope?: Record<string, unknown> },
  seq: number,
  prev: string,
  at: string,
  raw: string
): { line: string; hash: string } => {
  const unsealed = {
    format: EVENT_FORMAT,
    seq,
    id: `evt-deep-${seq}`,
    type: e.type,
    version: e.version,
    at,
    actor: e.actor,
    command_id: `cmd-deep-${seq}`,
    data: e.data,
    prev,
    ...(e.envelope ?? {})
  }
  const hash = sha256Digest(withRaw(unsealed, raw))
  return { line: withRaw({ ...unsealed, hash }, raw), hash }
}

/** Appends one such line to a directory case (its log and HEAD), as a forger with write access would. */
export const appendRawLine = (
  dir: string,
  e: RawEvent & { readonly envelope?: Record<string, unknown> },
  raw: string
): void => {
  const log = path.join(dir, 'events.jsonl')
  const text = readFileSync(log, 'utf8')
  const lines = text.split('\n').filter((l) => l !== '')
  const decl = right(CaseDeclaration.decode(JSON.parse(readFileSync(path.join(dir, 'case.json'), 'utf8'))))
  const last =
    lines.length === 0
      ? null
      : (JSON.parse(lines[lines.length - 1] as string) as { seq: number; hash: string; at: string })
  const sealed = sealRawLine(
    e,
    (last?.seq ?? 0) + 1,
    last?.hash ?? right(genesisHash(decl)),
    last?.at ?? decl.created_at,
    raw
  )
  const all = `${text}${sealed.line}\n`
  writeFileSync(log, all)
  writeFileSync(
    path.join(dir, 'HEAD'),
    `${right(canonicalJson({ seq: (last?.seq ?? 0) + 1, hash: sealed.hash, bytes: Buffer.byteLength(all) }))}\n`
  )
}
