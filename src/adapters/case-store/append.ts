/**
 * Appending one command's events (and the objects they reference) atomically.
 *
 * Order of work, all under the case lock:
 *  1. catch up with events other writers appended since this handle last looked;
 *  2. cut a torn or unacknowledged tail left by a crashed writer (reported in `repairs`);
 *  3. a known command id returns its recorded outcome and appends nothing;
 *  4. a stale expected generation is GENERATION_CONFLICT and nothing is written;
 *  5. check the command against the case's rules (the same fold verify runs) on a copy of the
 *     state: a command the deciders could not have produced is RULE_VIOLATION, nothing written;
 *  6. write objects (temp file, fsync, rename, fsync dir), then all lines in one write + fsync,
 *     then replace HEAD (temp, fsync, rename, fsync dir). Only then is the command acknowledged,
 *     with a receipt (seq, hash) a controller keeps outside the case to detect a rollback.
 */
import { promises as fsp, readFileSync } from 'node:fs'
import * as path from 'node:path'
import * as TE from 'fp-ts/lib/TaskEither.js'
import * as E from 'fp-ts/lib/Either.js'
import type { Failure } from '../../failures/failure.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'
import { sealEvent, type EventDraft, type SealedEvent } from '../../events/chain.js'
import { Identifier } from '../../events/codecs.js'
import { EventEnvelope, type Head } from '../../events/envelope.js'
import type { Finding } from '../../events/findings.js'
import { collectRefs, objectPath } from '../../events/refs.js'
import { errnoOf, writeAll, writeFileDurably } from '../fs-util.js'
import { fail, FailureError, toFailure } from '../../failures/error.js'
import { registry } from '../../events/catalog.js'
import { systemEnv, type Env } from '../env.js'
import { HEAD_FILE, LOG_FILE } from './layout.js'
import { acquireLock, releaseLock } from './lock.js'
import { objectRefOf, writeObject } from './objects.js'
import { catchUp, corrupt, type CaseHandle } from './handle.js'
import { MAX_LINE_BYTES, readHead, scanCase } from './scan.js'
import type { StoreAppendOptions } from './store.js'
import { checkPrompts } from '../../projections/prompt-derivation.js'
import {
  checkFactsDerivation,
  checkObligations,
  obligationRefs,
  ruleFold,
  type RuleFold,
  type RuleViolation
} from '../../domain/rules.js'
import { cloneCaseState, type ObjectRefLite } from '../../domain/case-state.js'

/** Most events one command may append. */
export const MAX_EVENTS_PER_COMMAND = 10_000

export interface RawCommand {
  /** Idempotency key: resubmitting the same id returns the recorded outcome. */
  readonly commandId: string
  /** The generation the caller based its decision on; anything else is a conflict. */
  readonly expectedGeneration: number
  readonly events: readonly EventDraft[]
  /** Payloads referenced from the events' data by {digest, size}. */
  readonly objects?: readonly Uint8Array[]
  /** When the command was decided (ISO 8601 UTC): every event of it is dated so (default: the env's clock). */
  readonly at?: string
}

export interface AppendOptions {
  readonly env?: Env
  /** How long to wait for another live writer, in milliseconds (default 5000). */
  readonly waitMs?: number
}

/** Proof of an acknowledged append: the seq and hash of the command's last event. */
export interface Receipt {
  readonly seq: number
  readonly hash: string
}

export interface AppendOutcome {
  /** `appended`, or `duplicate` when the command id had been recorded before. */
  readonly status: 'appended' | 'duplicate'
  readonly commandId: string
  readonly events: readonly EventEnvelope[]
  /** The case's generation after the command (for a duplicate: at the time of the call). */
  readonly generation: number
  /**
   * The command's last event (seq, hash). Kept outside the case (see docs/operations.md), it lets
   * `verify --expect-head` prove the case was not rolled back or forked.
   */
  readonly receipt: Receipt
  /** Crash leftovers cut before appending. */
  readonly repairs: readonly Finding[]
}

const fingerprint = (
  drafts: ReadonlyArray<{ type: string; version: number; actor: string; data: unknown }>
): string => {
  const text = canonicalJson(drafts.map((d) => ({ type: d.type, version: d.version, actor: d.actor, data: d.data })))
  return E.isRight(text) ? sha256Digest(text.right) : 'not-canonicalisable'
}

const readRecorded = async (dir: string, start: number, end: number): Promise<EventEnvelope[]> => {
  const fh = await fsp.open(path.join(dir, LOG_FILE), 'r')
  try {
    const buf = Buffer.alloc(end - start)
    await fh.read(buf, 0, buf.length, start)
    return buf
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        const decoded = EventEnvelope.decode(JSON.parse(l))
        if (E.isLeft(decoded)) return fail('CASE_CORRUPT', 'recorded event no longer decodes')
        return decoded.right
      })
  } finally {
    await fh.close()
  }
}

/**
 * The outcome of a command id recorded before. Other events under the same id are a
 * COMMAND_ID_CONFLICT when the id was recorded before the caller decided (a reused id), and a
 * GENERATION_CONFLICT when another writer recorded it after (a race of two writers deciding the
 * same step: the loser re-reads and finds the winner's outcome).
 */
export const duplicateOf = (
  handle: CaseHandle,
  cmd: RawCommand,
  events: readonly EventEnvelope[],
  sameIntent?: (recorded: readonly EventEnvelope[]) => boolean
): AppendOutcome => {
  const drafts = cmd.events.map((d) => ({ ...d, version: d.version ?? latestOf(d.type) }))
  if (sameIntent !== undefined) {
    // A typed command knows what it was asked to do: the same intent is the same command (its
    // events may differ, decided on another state), another intent a reused id.
    if (!sameIntent(events))
      fail('COMMAND_ID_CONFLICT', `command ${cmd.commandId} was recorded before for something else`, {
        command_id: cmd.commandId,
        first_seq: events[0]?.seq ?? null
      })
  } else if (fingerprint(events) !== fingerprint(drafts)) {
    const firstSeq = events[0]?.seq ?? null
    if (firstSeq !== null && firstSeq > cmd.expectedGeneration) {
      fail(
        'GENERATION_CONFLICT',
        `another writer recorded command ${cmd.commandId} while this one was decided (expected generation ${cmd.expectedGeneration}, recorded at ${firstSeq}); re-read the case`,
        { command_id: cmd.commandId, expected: cmd.expectedGeneration, first_seq: firstSeq }
      )
    }
    fail('COMMAND_ID_CONFLICT', `command ${cmd.commandId} was recorded before with different events`, {
      command_id: cmd.commandId,
      first_seq: firstSeq
    })
  }
  const last = events[events.length - 1]
  const receipt =
    last === undefined ? { seq: handle.cursor.seq, hash: handle.cursor.hash } : { seq: last.seq, hash: last.hash }
  return { status: 'duplicate', commandId: cmd.commandId, events, generation: handle.cursor.seq, receipt, repairs: [] }
}

/** How a store answers the questions a command's objects raise. */
export interface ObjectLookup {
  /** The size of a stored object, or null when the store does not have it. */
  readonly sizeOf: (digest: string) => Promise<number | null>
  /** A stored object's bytes, if they match the reference (the rules read captures). */
  readonly read: (ref: ObjectRefLite) => Promise<Uint8Array | undefined>
}

/** A command ready to be written: sealed lines, the new head, its objects, and the rule state after it. */
export interface CommandPlan {
  readonly sealed: readonly SealedEvent[]
  /** All lines of the command, each with its LF. */
  readonly bytes: Buffer
  readonly newHead: Head
  readonly provided: ReadonlyMap<string, Uint8Array>
  readonly rules: RuleFold
}

/**
 * Everything about a command that does not depend on where it is written: its drafts sealed into
 * a chain continuing the handle's head, every object reference backed (by the command or the
 * store), and the case's rules checked on a copy of the state (RULE_VIOLATION, nothing written).
 */
export const planCommand = async (
  handle: CaseHandle,
  cmd: RawCommand,
  env: Env,
  objects: ObjectLookup
): Promise<CommandPlan> => {
  const drafts = cmd.events.map((d) => ({ ...d, version: d.version ?? latestOf(d.type) }))
  const at = cmd.at ?? env.now().toISOString()
  // Time never runs backwards in a case: a clock behind the head (or the creation) is refused.
  const floor = handle.cursor.state.lastAt ?? handle.declaration.created_at
  if (at < floor)
    fail(
      'CLOCK_BEHIND',
      `the command is dated ${at}, before the case's last event (${floor}): the writer's clock is behind; retry when it has caught up`,
      { at, head_at: floor }
    )
  let prev = handle.cursor.hash
  const fresh = new Set<string>()
  const sealed = drafts.map((d, i) => {
    const id = `evt-${env.newId()}`
    // A clock whose id source repeats itself would make the case corrupt for every reader.
    if (handle.cursor.ids.has(id) || fresh.has(id))
      fail(
        'EVENT_ID_DUPLICATE',
        `the id source gave ${id} twice (the case holds it already): give the client a clock with unique ids; nothing was written`,
        { id, index: i }
      )
    fresh.add(id)
    const s = sealEvent(d, { seq: handle.cursor.seq + 1 + i, prev, id, at, commandId: cmd.commandId })
    if (E.isLeft(s)) return fail(s.left.code, `event ${i + 1} (${d.type}): ${s.left.message}`, { index: i })
    if (Buffer.byteLength(s.right.line) + 1 > MAX_LINE_BYTES)
      fail(
        'EVENT_TOO_LARGE',
        `event ${i + 1} (${d.type}) is larger than ${MAX_LINE_BYTES} bytes; store the payload as an object`,
        { index: i }
      )
    prev = s.right.envelope.hash
    return s.right
  })
  const provided = new Map((cmd.objects ?? []).map((bytes) => [objectRefOf(bytes).digest, bytes]))
  const referenced = new Set<string>()
  for (const s of sealed) {
    for (const ref of collectRefs(s.envelope.data).refs) {
      referenced.add(ref.digest)
      const bytes = provided.get(ref.digest)
      if (bytes !== undefined) {
        if (bytes.byteLength !== ref.size)
          fail(
            'INVALID_ARGUMENT',
            `object ${ref.digest} is referenced with size ${ref.size} but has ${bytes.byteLength} bytes`
          )
      } else {
        const size = await objects.sizeOf(ref.digest)
        if (size === null)
          fail(
            'OBJECT_MISSING',
            `event data references ${ref.digest}, which is neither in the case nor in this command`,
            { digest: ref.digest }
          )
        else if (size !== ref.size)
          fail('INVALID_ARGUMENT', `object ${ref.digest} is referenced with size ${ref.size} but has ${size} bytes`)
      }
    }
  }
  for (const digest of provided.keys()) {
    if (!referenced.has(digest))
      fail('INVALID_ARGUMENT', `object ${digest} is not referenced by any event of the command`, { digest })
  }
  const rules = ruleFold(cloneCaseState(handle.cursor.state))
  const violations: RuleViolation[] = sealed.flatMap((x) => rules.feed(x.event))
  violations.push(...rules.end())
  // The obligations' objects are fetched first: the check itself reads synchronously.
  const stored = new Map<string, Uint8Array>()
  for (const ob of rules.obligations()) {
    for (const ref of obligationRefs(ob)) {
      if (provided.has(ref.digest) || stored.has(ref.digest)) continue
      const bytes = await objects.read(ref)
      if (bytes !== undefined) stored.set(ref.digest, bytes)
    }
  }
  const readObject = (ref: ObjectRefLite): Uint8Array | undefined => provided.get(ref.digest) ?? stored.get(ref.digest)
  violations.push(
    ...checkObligations(rules.obligations(), readObject),
    ...checkPrompts(rules.obligations(), readObject),
    ...(await checkFactsDerivation(rules.obligations(), readObject))
  )
  if (violations.length > 0) {
    const first = violations[0] as RuleViolation
    fail(
      'RULE_VIOLATION',
      `the command breaks the case's rules (${first.rule}, event ${first.seq - handle.cursor.seq} of the command): ${first.message}`,
      {
        violations: violations
          .slice(0, 20)
          .map((v) => ({ code: v.code, rule: v.rule, message: v.message, index: v.seq - handle.cursor.seq - 1 }))
      }
    )
  }
  const bytes = Buffer.from(sealed.map((x) => `${x.line}\n`).join(''), 'utf8')
  const last = sealed[sealed.length - 1]
  if (last === undefined) return fail('INTERNAL_ERROR', 'no events sealed')
  return {
    sealed,
    bytes,
    newHead: { seq: last.envelope.seq, hash: last.envelope.hash, bytes: handle.cursor.bytes + bytes.length },
    provided,
    rules
  }
}

/**
 * The command to write on the caught-up handle: itself when its expected generation holds, the
 * rebased command when the caller allows it (null: nothing to append), else GENERATION_CONFLICT.
 */
export const rebaseCommand = (handle: CaseHandle, cmd: RawCommand, options: StoreAppendOptions): RawCommand | null => {
  if (cmd.expectedGeneration === handle.cursor.seq) return cmd
  if (options.rebase === undefined) {
    return fail(
      'GENERATION_CONFLICT',
      `expected generation ${cmd.expectedGeneration}, the case is at ${handle.cursor.seq}`,
      { expected: cmd.expectedGeneration, actual: handle.cursor.seq }
    )
  }
  const next = options.rebase(handle)
  if (next === null) return null
  if (next.commandId !== cmd.commandId || next.expectedGeneration !== handle.cursor.seq)
    fail('INTERNAL_ERROR', 'a rebased command keeps its id and expects the current generation')
  validateCommand(next)
  return next
}

/** The outcome of a command that, decided again, had nothing left to append. */
export const nothingToAppend = (handle: CaseHandle, commandId: string): AppendOutcome => ({
  status: 'appended',
  commandId,
  events: [],
  generation: handle.cursor.seq,
  receipt: { seq: handle.cursor.seq, hash: handle.cursor.hash },
  repairs: []
})

export const validateCommand = (cmd: RawCommand): void => {
  if (!Identifier.is(cmd.commandId))
    fail(
      'INVALID_ARGUMENT',
      'command id must be 1-128 characters of letters, digits, . _ : - (starting with a letter or digit)'
    )
  if (!Number.isSafeInteger(cmd.expectedGeneration) || cmd.expectedGeneration < 0)
    fail('INVALID_ARGUMENT', 'expected generation must be a non-negative integer')
  if (cmd.events.length === 0) fail('INVALID_ARGUMENT', 'a command appends at least one event')
  if (cmd.events.length > MAX_EVENTS_PER_COMMAND)
    fail('INVALID_ARGUMENT', `a command appends at most ${MAX_EVENTS_PER_COMMAND} events`)
}

/**
 * The recorded outcome of a command id, if this handle has seen it: what a retried typed command
 * returns instead of deciding again on a state that has moved on.
 */
export const recordedOutcome = (handle: CaseHandle, commandId: string): Promise<AppendOutcome | null> =>
  handle.store.recordedOutcome(handle, commandId)

/** {@link recordedOutcome} of the directory store. */
export const recordedInDirectory = async (handle: CaseHandle, commandId: string): Promise<AppendOutcome | null> => {
  const recorded = handle.cursor.commands.get(commandId)
  if (recorded === undefined) return null
  const events = await readRecorded(handle.dir, recorded.start, recorded.end)
  const last = events[events.length - 1]
  return {
    status: 'duplicate',
    commandId,
    events,
    generation: handle.cursor.seq,
    receipt:
      last === undefined ? { seq: handle.cursor.seq, hash: handle.cursor.hash } : { seq: last.seq, hash: last.hash },
    repairs: []
  }
}

/**
 * Appends a command to an open case, through the case's store (a lease, for a worker's appends,
 * is refused once lost). See the module comment for the directory store's protocol.
 */
export const appendCommand = (
  handle: CaseHandle,
  cmd: RawCommand,
  options: StoreAppendOptions = {}
): TE.TaskEither<Failure, AppendOutcome> =>
  TE.tryCatch(
    () => handle.store.append(handle, cmd, options),
    (e) => toFailure(e, 'append')
  )

/** Appends to a case directory (the directory store's append). */
export const appendToDirectory = async (
  handle: CaseHandle,
  cmd: RawCommand,
  options: StoreAppendOptions = {}
): Promise<AppendOutcome> => {
  {
    validateCommand(cmd)
    const env = options.env ?? systemEnv
    const lock = await acquireLock(handle.dir, { waitMs: options.waitMs ?? 5000 })
    try {
      const repairs: Finding[] = []
      const head = await readHead(handle.dir)
      if (E.isLeft(head)) throw corruptError([head.left])
      await catchUp(handle, head.right, (resume) => scanCase(handle.dir, { resume }))
      const logFile = path.join(handle.dir, LOG_FILE)
      const size = (await fsp.stat(logFile)).size
      if (size > head.right.bytes) {
        await truncateDurably(logFile, head.right.bytes)
        repairs.push({
          code: 'TORN_TAIL',
          severity: 'notice',
          message: `cut ${size - head.right.bytes} unacknowledged bytes left by a crashed writer`,
          path: LOG_FILE,
          data: { bytes: size - head.right.bytes }
        })
      } else if (size < head.right.bytes) {
        throw corruptError([
          {
            code: 'LOG_TRUNCATED',
            severity: 'error',
            message: 'events.jsonl is shorter than HEAD acknowledges',
            path: LOG_FILE
          }
        ])
      }

      const recorded = handle.cursor.commands.get(cmd.commandId)
      if (recorded !== undefined)
        return {
          ...duplicateOf(handle, cmd, await readRecorded(handle.dir, recorded.start, recorded.end), options.sameIntent),
          repairs
        }
      const rebased = rebaseCommand(handle, cmd, options)
      if (rebased === null) return { ...nothingToAppend(handle, cmd.commandId), repairs }
      cmd = rebased

      const plan = await planCommand(handle, cmd, env, {
        sizeOf: async (digest) => {
          const st = await fsp
            .stat(path.join(handle.dir, objectPath(digest)))
            .catch((e: unknown) => (errnoOf(e) === 'ENOENT' ? null : Promise.reject(e)))
          return st === null ? null : st.size
        },
        read: async (ref) => readStoredObject(handle.dir, ref)
      })
      const { sealed, bytes, newHead, provided, rules } = plan
      const headText = canonicalJson(newHead)
      if (E.isLeft(headText)) return fail('INTERNAL_ERROR', 'HEAD is not canonicalisable')
      // Until HEAD is replaced nothing is acknowledged: a failed write (a full disk) takes back
      // what this command wrote, so it leaves no torn tail, orphan object or temporary file.
      const createdObjects: string[] = []
      let acknowledged = false
      try {
        for (const object of provided.values()) {
          const written = await writeObject(handle.dir, object)
          if (written.created !== null) createdObjects.push(written.created)
        }
        const fh = await fsp.open(logFile, 'r+')
        try {
          await writeAll(fh, bytes, handle.cursor.bytes)
          await fh.sync()
        } finally {
          await fh.close()
        }
        await writeFileDurably(path.join(handle.dir, HEAD_FILE), `${headText.right}\n`, handle.dir, () => {
          acknowledged = true
        })
      } catch (e) {
        if (!acknowledged) {
          await truncateDurably(logFile, handle.cursor.bytes).catch(() => undefined)
          for (const f of createdObjects) await fsp.rm(f, { force: true }).catch(() => undefined)
        }
        throw e
      }

      handle.cursor.commands.set(cmd.commandId, {
        firstSeq: handle.cursor.seq + 1,
        lastSeq: newHead.seq,
        start: handle.cursor.bytes,
        end: newHead.bytes
      })
      handle.cursor.lastCommand = cmd.commandId
      handle.cursor.seq = newHead.seq
      handle.cursor.hash = newHead.hash
      handle.cursor.bytes = newHead.bytes
      handle.cursor.state = rules.state()
      for (const x of sealed) handle.cursor.ids.add(x.envelope.id)
      return {
        status: 'appended' as const,
        commandId: cmd.commandId,
        events: sealed.map((s) => s.envelope),
        generation: newHead.seq,
        receipt: { seq: newHead.seq, hash: newHead.hash },
        repairs
      }
    } finally {
      await releaseLock(lock)
    }
  }
}

/** An object already in the case, if its bytes match the reference (the rules read captures). */
const readStoredObject = (dir: string, ref: ObjectRefLite): Uint8Array | undefined => {
  try {
    const bytes = readFileSync(path.join(dir, objectPath(ref.digest)))
    return bytes.length === ref.size && sha256Digest(bytes) === ref.digest ? bytes : undefined
  } catch {
    return undefined
  }
}

const latestOf = (type: string): number => registry.definitions.get(type)?.latest ?? 1

const corruptError = (findings: Finding[]): FailureError => new FailureError(corrupt(findings))

const truncateDurably = async (file: string, length: number): Promise<void> => {
  const fh = await fsp.open(file, 'r+')
  try {
    await fh.truncate(length)
    await fh.sync()
  } finally {
    await fh.close()
  }
}
