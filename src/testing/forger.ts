/**
 * A forger: writes a correct hash chain with arbitrary events, as someone with write access to a
 * case directory could. Every line is canonical and codec-valid and HEAD matches, so only the
 * case's rules can tell a forged case from one the library wrote. Synchronous file IO.
 */
import { readFileSync, writeFileSync, mkdirSync, existsSync, readdirSync, rmSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson, sha256Digest } from '../events/canonical.js'
import { genesisHash } from '../events/chain.js'
import { EVENT_FORMAT } from '../events/envelope.js'
import { registry } from '../events/catalog.js'
import { CaseDeclaration, type EventEnvelope } from '../events/envelope.js'
import type { Actor, ObjectRef } from '../events/codecs.js'
import { collectRefs, objectPath } from '../events/refs.js'
import { optional } from '../optional.js'

/** @category Forgery */
export interface ForgedEvent {
  readonly type: string
  readonly actor: Actor
  readonly data: unknown
  readonly version?: number
}

/**
 * Seals an event as a forger would: canonical, hashed and chained, but with whatever data it is
 * given (no schema check: that is what verification must catch).
 */
const sealRaw = (
  e: ForgedEvent,
  ctx: { seq: number; prev: string; id: string; at: string; commandId: string }
): { line: string; hash: string } => {
  const version = e.version ?? registry.definitions.get(e.type)?.latest ?? 1
  const unsealed = {
    format: EVENT_FORMAT,
    seq: ctx.seq,
    id: ctx.id,
    type: e.type,
    version,
    at: ctx.at,
    actor: e.actor,
    command_id: ctx.commandId,
    data: e.data,
    prev: ctx.prev
  }
  const hash = sha256Digest(must(canonicalJson(unsealed)))
  return { line: must(canonicalJson({ ...unsealed, hash })), hash }
}

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(`forger: ${JSON.stringify(r.left)}`)
  return r.right
}

/** @category Forgery */
export interface Forger {
  /** The acknowledged events, parsed. */
  readonly envelopes: () => EventEnvelope[]
  /** Keeps the events up to `seq` (a rollback when written over a receipt) and the objects they reference. */
  readonly cut: (seq: number, keepObjects?: readonly string[]) => void
  /** Appends one command with a correct chain; returns its receipt `seq:hash`. */
  readonly append: (
    commandId: string,
    events: readonly ForgedEvent[],
    objects?: readonly Uint8Array[],
    options?: { readonly at?: string }
  ) => string
  /** Stores an object and returns its reference. */
  readonly object: (bytes: Uint8Array, mediaType?: string) => ObjectRef
  /** The receipt of the current HEAD. */
  readonly head: () => string
  /**
   * Replaces the data of the event at `seq` and seals every event from there on again (same ids,
   * times and command ids, a correct chain): an edit of history no hash can show.
   */
  readonly rewrite: (seq: number, data: (old: unknown) => unknown, options?: { readonly version?: number }) => string
  /**
   * Replaces case.json with what `edit` makes of it (written canonical) and seals every event again
   * over the new genesis: a case that claims another declaration (another format generation).
   */
  readonly redeclare: (edit: (declaration: Record<string, unknown>) => Record<string, unknown>) => string
}

/** @category Forgery */
export const forger = (dir: string): Forger => {
  const self: Forger = {
    envelopes: () => acknowledgedLines(dir).map((l) => JSON.parse(l) as EventEnvelope),
    cut: (seq, keepObjects = []) => {
      const kept = acknowledgedLines(dir).filter((l) => (JSON.parse(l) as { seq: number }).seq <= seq)
      writeLog(dir, kept)
      removeObjectsBut(
        dir,
        new Set([
          ...keepObjects,
          ...kept.flatMap((l) => collectRefs((JSON.parse(l) as EventEnvelope).data).refs.map((r) => r.digest))
        ])
      )
    },
    object: (bytes, mediaType) => storeObject(dir, bytes, mediaType),
    append: (commandId, events, objects = [], options = {}) => {
      for (const o of objects) storeObject(dir, o)
      const all = acknowledgedLines(dir)
      const last = all.length === 0 ? null : (JSON.parse(all[all.length - 1] as string) as EventEnvelope)
      const decl = declarationOf(dir)
      let prev = last?.hash ?? must(genesisHash(decl))
      let seq = last?.seq ?? 0
      const at = options.at ?? last?.at ?? decl.created_at
      for (const e of events) {
        seq++
        const sealed = sealRaw(e, { seq, prev, id: `evt-forged-${seq}`, at, commandId })
        all.push(sealed.line)
        prev = sealed.hash
      }
      writeLog(dir, all)
      return `${seq}:${prev}`
    },
    rewrite: (seq, data, options = {}) => {
      writeLog(dir, resealFrom(dir, seq, data, options.version))
      return self.head()
    },
    redeclare: (edit) => {
      const file = path.join(dir, 'case.json')
      const declaration = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
      writeFileSync(file, `${must(canonicalJson(edit(declaration)))}\n`)
      if (acknowledgedLines(dir).length > 0) return self.rewrite(1, (d) => d)
      writeLog(dir, [])
      return self.head()
    },
    head: () => {
      const h = JSON.parse(readFileSync(path.join(dir, 'HEAD'), 'utf8')) as { seq: number; hash: string }
      return `${h.seq}:${h.hash}`
    }
  }
  return self
}

/** The case's declaration (case.json), decoded. */
const declarationOf = (dir: string): CaseDeclaration =>
  must(CaseDeclaration.decode(JSON.parse(readFileSync(path.join(dir, 'case.json'), 'utf8'))))

/** The lines of the log that HEAD acknowledges. */
const acknowledgedLines = (dir: string): string[] => {
  const head = JSON.parse(readFileSync(path.join(dir, 'HEAD'), 'utf8')) as { bytes: number }
  return readFileSync(path.join(dir, 'events.jsonl'))
    .subarray(0, head.bytes)
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '')
}

/** Writes the log as exactly these lines and a HEAD that acknowledges them all. */
const writeLog = (dir: string, all: readonly string[]): void => {
  const text = all.map((l) => `${l}\n`).join('')
  writeFileSync(path.join(dir, 'events.jsonl'), text)
  const last = all[all.length - 1]
  const decl = declarationOf(dir)
  const head =
    last === undefined
      ? { seq: 0, hash: must(genesisHash(decl)), bytes: 0 }
      : (() => {
          const env = JSON.parse(last) as { seq: number; hash: string }
          return { seq: env.seq, hash: env.hash, bytes: Buffer.byteLength(text) }
        })()
  writeFileSync(path.join(dir, 'HEAD'), `${must(canonicalJson(head))}\n`)
}

/** Stores an object (if not there yet) and returns its reference. */
const storeObject = (dir: string, bytes: Uint8Array, mediaType?: string): ObjectRef => {
  const digest = sha256Digest(bytes)
  const file = path.join(dir, objectPath(digest))
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true })
    writeFileSync(file, bytes)
  }
  return { digest, size: bytes.byteLength, ...optional('media_type', mediaType) }
}

/** Removes every stored object whose digest is not in `referenced` (and the shards left empty). */
const removeObjectsBut = (dir: string, referenced: ReadonlySet<string>): void => {
  const root = path.join(dir, 'objects', 'sha256')
  for (const shard of existsSync(root) ? readdirSync(root) : []) {
    for (const name of readdirSync(path.join(root, shard))) {
      if (!referenced.has(`sha256:${shard}${name}`)) rmSync(path.join(root, shard, name))
    }
    if (readdirSync(path.join(root, shard)).length === 0) rmSync(path.join(root, shard), { recursive: true })
  }
}

/**
 * The log with the data (and optionally the version) of the event at `seq` replaced and every
 * event from there on sealed again over the declaration's genesis (same ids, times, command ids).
 */
const resealFrom = (
  dir: string,
  seq: number,
  data: (old: unknown) => unknown,
  version: number | undefined
): string[] => {
  let prev = must(genesisHash(declarationOf(dir)))
  return acknowledgedLines(dir).map((l) => {
    const env = JSON.parse(l) as EventEnvelope
    if (env.seq < seq) {
      prev = env.hash
      return l
    }
    const sealed = sealRaw(
      {
        type: env.type,
        actor: env.actor,
        data: env.seq === seq ? data(env.data) : env.data,
        version: env.seq === seq ? (version ?? env.version) : env.version
      },
      { seq: env.seq, prev, id: env.id, at: env.at, commandId: env.command_id }
    )
    prev = sealed.hash
    return sealed.line
  })
}
