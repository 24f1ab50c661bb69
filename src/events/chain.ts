/**
 * Sealing events into hash-chained lines, and checking lines read back. Pure: callers supply
 * sequence numbers, ids, timestamps and the previous hash.
 */
import * as E from 'fp-ts/lib/Either.js'
import { pipe } from 'fp-ts/lib/function.js'
import { hash } from 'node:crypto'
import { failure, type Failure } from '../failures/failure.js'
import { canonicalJson, isCanonicalText, sha256Digest } from './canonical.js'
import { EVENT_TYPES, registry, type CaseEventBody, type EventType, type EventTypeOf } from './catalog.js'
import { ENVELOPE_KEYS, EVENT_FORMAT, EventEnvelope, type CaseDeclaration } from './envelope.js'
import { collectRefs, type FoundRef } from './refs.js'
import { finding, type Finding } from './findings.js'
import type { Actor } from './codecs.js'
import { describeErrors } from './decode.js'
import { boundsViolation } from './bounds.js'
import { sealCommandSigned } from './seal-signature.js'
import { copyBytes } from './buffer-text.js'

/** What a command asks to append. `version` defaults to the type's current version. @category Raw appends */
export interface EventDraft {
  readonly type: string
  readonly data: unknown
  readonly actor: Actor
  readonly version?: number
}

/** Typed draft of a current-version event. */
export const draft = <B extends CaseEventBody>(body: B, actor: Actor): EventDraft => ({
  type: body.type,
  data: body.data,
  actor
})

/** The actor a draft of type `K` names: none when one actor writes the type (it is the definition's), else one of its actors. */
type ActorArgs<K extends EventType> = EventTypeOf<K>['actors'] extends readonly [Actor]
  ? []
  : [actor: EventTypeOf<K>['actors'][number]]

/**
 * A draft of a current-version event of type `K`: its data typed by the type's codec, its actor
 * the one its definition names (or, for a type more than one actor writes, the one given).
 */
export const eventDraft = <K extends EventType>(
  type: K,
  data: Extract<CaseEventBody, { readonly type: K }>['data'],
  ...actor: ActorArgs<K>
): EventDraft => {
  const [given] = actor as readonly Actor[]
  return { type, data, actor: given ?? (EVENT_TYPES[type].actors[0] as Actor) }
}

/** Envelope fields of a recorded event, with its data decoded and upcast to the current version. @category cases */
export type RecordedEvent = Omit<EventEnvelope, 'type' | 'data' | 'format'> & CaseEventBody

/** The recorded event of an envelope whose `data` the registry decoded (and upcast) as `data`. */
export const recordedEvent = (env: EventEnvelope, data: unknown): RecordedEvent =>
  // the registry decoded `data` with the codec registered for `type`, so the pair is well-typed
  ({
    seq: env.seq,
    id: env.id,
    type: env.type,
    version: env.version,
    at: env.at,
    actor: env.actor,
    command_id: env.command_id,
    data,
    prev: env.prev,
    hash: env.hash
  }) as RecordedEvent

/** The hash every chain starts from: the digest of the canonical case declaration. */
export const genesisHash = (declaration: CaseDeclaration): E.Either<Failure, string> =>
  pipe(canonicalJson(declaration), E.map(sha256Digest))

/** @category Raw appends */
export interface SealContext {
  readonly seq: number
  readonly prev: string
  readonly id: string
  readonly at: string
  readonly commandId: string
}

/** @category Raw appends */
export interface SealedEvent {
  readonly envelope: EventEnvelope
  /** The event as a reader decodes it (data upcast to the current version). */
  readonly event: RecordedEvent
  /** The canonical line, without the trailing LF. */
  readonly line: string
}

/** @category Raw appends */
export type SealFailure = Failure<
  | 'EVENT_UNKNOWN_TYPE'
  | 'EVENT_UNKNOWN_VERSION'
  | 'EVENT_DATA_INVALID'
  | 'NOT_CANONICALIZABLE'
  | 'EVENT_ENVELOPE_INVALID'
>

/** Validates a draft against its type's codec and seals it into a canonical, hashed line. @category Raw appends */
export const sealEvent = (d: EventDraft, ctx: SealContext): E.Either<SealFailure, SealedEvent> => {
  const version = d.version ?? registry.definitions.get(d.type)?.latest ?? 1
  // A command's signature, sealed after every command of a signing writer, has a shorter way.
  if (d.type === 'CommandSigned' && version === registry.definitions.get(d.type)?.latest) {
    const sealed = sealCommandSigned(d.data, d.actor, version, ctx)
    if (sealed !== undefined) return E.right(sealed)
  }
  const data = registry.decode(d.type, version, d.data)
  if (E.isLeft(data)) return data
  const unsealed = {
    format: EVENT_FORMAT,
    seq: ctx.seq,
    id: ctx.id,
    type: d.type,
    version,
    at: ctx.at,
    actor: d.actor,
    command_id: ctx.commandId,
    data: d.data,
    prev: ctx.prev
  }
  const text = canonicalJson(unsealed)
  if (E.isLeft(text)) return text
  const withHash = { ...unsealed, hash: sha256Digest(text.right) }
  const decoded = EventEnvelope.decode(withHash)
  if (E.isLeft(decoded)) {
    return E.left(
      failure('EVENT_ENVELOPE_INVALID', `event envelope is invalid: ${describeErrors(decoded.left)}`, { type: d.type })
    )
  }
  const line = canonicalJson(withHash)
  if (E.isLeft(line)) return line
  const env = decoded.right
  const event = recordedEvent(env, data.right)
  return E.right({ envelope: env, event, line: line.right })
}

export interface LineExpectation {
  /** The seq the line must have; null for no sequence check (a line checked on its own, by a worker). */
  readonly seq: number | null
  /** Hash of the preceding event; null when the preceding line was unreadable (no link check). */
  readonly prev: string | null
  /** 1-based line number, for findings. */
  readonly lineNo: number
  /**
   * Also check RFC 8785 canonical form (default true). Replay leaves it to verify: the hash
   * already proves the line's bytes are the ones its writer hashed.
   */
  readonly canonical?: boolean
  /**
   * The answers of {@link lineDigest} and {@link isCanonicalText} for this line, when another
   * thread computed them already (the canonical form is checked here when only the digest is
   * given). They are trusted as if computed here.
   */
  readonly precomputed?: { readonly digest: string; readonly canonical?: boolean }
}

export interface CheckedLine {
  /** The envelope, when the line decodes as one (even if other checks fail). */
  readonly envelope?: EventEnvelope
  /** The decoded event, when the data decodes and upcasts. */
  readonly event?: RecordedEvent
  readonly refs: readonly FoundRef[]
  readonly findings: readonly Finding[]
}

const HASH_MEMBER = ',"hash":"'
const HASH_MEMBER_LENGTH = HASH_MEMBER.length + 'sha256:'.length + 64 + 1

/**
 * The digest an event line's hash must equal: SHA-256 of the line without its `"hash"` member.
 * For a canonical line that is exactly the canonical envelope without `hash` (the members after
 * it hold no nested objects, so the last occurrence is the envelope's own).
 */
export const lineDigest = (line: string): string => {
  const at = line.lastIndexOf(HASH_MEMBER)
  return sha256Digest(at < 0 ? line : line.slice(0, at) + line.slice(at + HASH_MEMBER_LENGTH))
}

const HASH_MEMBER_BYTES = Buffer.from(HASH_MEMBER)
/** Where a line without its hash member is put together to be hashed (lines are at most a few MiB). */
let scratch = Buffer.allocUnsafe(1 << 16)
/** Views of the first n bytes of `scratch`, by n (a view per line hashed was ~5% of a line's checks). */
let views: Uint8Array[] = []

/** The first `length` bytes of `scratch` (grown to hold them). */
const scratchOf = (length: number): Uint8Array => {
  if (scratch.length < length) {
    scratch = Buffer.allocUnsafe(Math.max(length, scratch.length * 2))
    views = []
  }
  let v = length < 1 << 16 ? views[length] : undefined
  if (v === undefined) {
    v = new Uint8Array(scratch.buffer, scratch.byteOffset, length)
    if (length < 1 << 16) views[length] = v
  }
  return v
}

/**
 * {@link lineDigestOfBytes} of the line `b[start, end)` whose envelope's hash member (all ASCII)
 * begins at `at`, as its last occurrence does: the bytes before and after it, hashed together.
 */
export const lineDigestCut = (b: Buffer, start: number, at: number, end: number): string =>
  `sha256:${lineDigestHexCut(b, start, at, end)}`

/** The 64 hex digits of {@link lineDigestCut} (no `sha256:` before them: a reader compares them with its bytes). */
export const lineDigestHexCut = (b: Buffer, start: number, at: number, end: number): string => {
  const length = end - start - HASH_MEMBER_LENGTH
  const view = scratchOf(length)
  copyBytes(b, start, at, scratch, 0)
  copyBytes(b, at + HASH_MEMBER_LENGTH, end, scratch, at - start)
  return hash('sha256', view, 'hex')
}

/**
 * {@link lineDigest} of the line whose UTF-8 bytes are `bytes` (valid UTF-8), without decoding or
 * re-encoding it: the member is ASCII, so it lies at the same place in both; when the bytes it
 * covers are not all ASCII (then characters and bytes differ there), the text is hashed instead.
 */
export const lineDigestOfBytes = (bytes: Buffer): string => {
  const at = bytes.lastIndexOf(HASH_MEMBER_BYTES)
  if (at < 0) return sha256Digest(bytes)
  const cut = Math.min(bytes.length, at + HASH_MEMBER_LENGTH)
  for (let i = at; i < cut; i++) if ((bytes[i] as number) >= 0x80) return lineDigest(bytes.toString('utf8'))
  const length = bytes.length - (cut - at)
  const view = scratchOf(length)
  bytes.copy(scratch, 0, 0, at)
  bytes.copy(scratch, at, cut)
  return sha256Digest(view)
}

/**
 * The checks of a line that need the lines before it: its seq and its link to the previous hash
 * (`expect.seq` null: no sequence check, `expect.prev` null: no link check).
 */
export const sequenceFindings = (
  env: { readonly seq: number; readonly prev: string },
  expect: Pick<LineExpectation, 'seq' | 'prev'>,
  located: { readonly path: string; readonly line: number; readonly seq: number }
): Finding[] => {
  const findings: Finding[] = []
  if (expect.seq !== null && env.seq > expect.seq) {
    findings.push(
      finding('SEQ_GAP', `expected seq ${expect.seq}, found ${env.seq}`, { ...located, data: { expected: expect.seq } })
    )
  } else if (expect.seq !== null && env.seq < expect.seq) {
    findings.push(
      finding('SEQ_REORDERED', `expected seq ${expect.seq}, found ${env.seq} (reordered or duplicated event)`, {
        ...located,
        data: { expected: expect.seq }
      })
    )
  }
  if (expect.prev !== null && env.prev !== expect.prev) {
    findings.push(finding('CHAIN_BROKEN', 'prev does not match the hash of the preceding event', located))
  }
  return findings
}

/**
 * Checks one line of events.jsonl against the chain so far: JSON, canonical form, envelope,
 * hash, sequence, link to the previous hash, event data and object references.
 */
export const checkLine = (line: string, expect: LineExpectation): CheckedLine => {
  const where = { path: 'events.jsonl', line: expect.lineNo }
  let parsed: unknown
  try {
    parsed = JSON.parse(line)
  } catch {
    return { refs: [], findings: [finding('EVENT_MALFORMED', 'line is not JSON', where)] }
  }
  // Before anything recursive (the envelope codec, the canonical check, the reference scan) sees it.
  const bounds = boundsViolation(parsed)
  if (bounds !== null)
    return {
      refs: [],
      findings: [
        finding('EVENT_MALFORMED', `line is ${bounds.message}`, {
          ...where,
          data: { limit: bounds.limit, depth: bounds.depth, members: bounds.members }
        })
      ]
    }
  // `is` checks without allocating (the hot path); `decode` runs only to explain a failure.
  if (!EventEnvelope.is(parsed)) {
    const decoded = EventEnvelope.decode(parsed)
    const why = E.isLeft(decoded) ? describeErrors(decoded.left) : 'not an envelope'
    return { refs: [], findings: [finding('EVENT_ENVELOPE_INVALID', `line is not an event envelope: ${why}`, where)] }
  }
  const env = parsed
  const located = { path: 'events.jsonl', line: expect.lineNo, seq: env.seq }
  const findings: Finding[] = []
  const keys = Object.keys(env)
  if (keys.length !== ENVELOPE_KEYS.length) {
    findings.push(
      finding(
        'EVENT_ENVELOPE_INVALID',
        `envelope has unexpected members: ${keys.filter((k) => !ENVELOPE_KEYS.includes(k)).join(', ')}`,
        located
      )
    )
  }
  const canonical = expect.canonical === false || (expect.precomputed?.canonical ?? isCanonicalText(line, parsed))
  if (!canonical) {
    findings.push(finding('EVENT_NOT_CANONICAL', 'line is not in RFC 8785 canonical form', located))
  } else if ((expect.precomputed?.digest ?? lineDigest(line)) !== env.hash) {
    findings.push(finding('EVENT_HASH_MISMATCH', 'event content does not match its hash (edited event)', located))
  }
  findings.push(...sequenceFindings(env, expect, located))
  const { refs, invalid } = collectRefs(env.data)
  for (const bad of invalid) {
    findings.push(
      finding('OBJECT_REF_INVALID', `object reference at data${bad.pointer} is invalid: ${bad.reason}`, {
        ...located,
        data: { pointer: bad.pointer }
      })
    )
  }
  const body = registry.decode(env.type, env.version, env.data)
  if (E.isLeft(body)) {
    findings.push(finding(body.left.code, body.left.message, located))
    return { envelope: env, refs, findings }
  }
  const event = recordedEvent(env, body.right)
  return { envelope: env, event, refs, findings }
}
