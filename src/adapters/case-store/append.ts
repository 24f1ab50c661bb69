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
import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'
import type { EventDraft } from '../../events/chain.js'
import { EventEnvelope } from '../../events/envelope.js'
import type { Finding } from '../../events/findings.js'
import { objectPath } from '../../events/refs.js'
import { errnoOf, writeAll, writeFileDurably } from '../fs-util.js'
import { openRegular } from '../regular-file.js'
import { fail, FailureError, coded } from '../../failures/error.js'
import { systemEnv, type Env } from '../env.js'
import { HEAD_FILE, LOG_FILE } from './layout.js'
import { acquireLock, releaseLock } from './lock.js'
import { planAhead } from './plan-ahead.js'
import { writeObject } from './objects.js'
import { catchUp, corrupt, type CaseHandle } from './handle.js'
import { readHead, scanCase } from './scan.js'
import type { StoreAppendOptions } from './store.js'
import type { ObjectRefLite } from '../../domain/case-state.js'
import {
  appendedAs,
  duplicateOf,
  nothingToAppend,
  planCommand,
  rebaseCommand,
  recordedAs,
  validateCommand,
  type CommandPlan,
  type ObjectLookup
} from './plan.js'

/** @category Raw appends */
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

/** @category Raw appends */
export interface AppendOptions {
  readonly env?: Env
  /** How long to wait for another live writer, in milliseconds (default 5000). */
  readonly waitMs?: number
}

/** Proof of an acknowledged append: the seq and hash of the command's last event. @category cases */
export interface Receipt {
  readonly seq: number
  readonly hash: string
}

/** @category Raw appends */
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
 * The recorded outcome of a command id, if this handle has seen it: what a retried typed command
 * returns instead of deciding again on a state that has moved on.
 */
export const recordedOutcome = (handle: CaseHandle, commandId: string): Promise<AppendOutcome | null> =>
  handle.store.recordedOutcome(handle, commandId)

/** {@link recordedOutcome} of the directory store. */
export const recordedInDirectory = async (handle: CaseHandle, commandId: string): Promise<AppendOutcome | null> => {
  const recorded = handle.cursor.commands.get(commandId)
  if (recorded === undefined) return null
  return recordedAs(handle, commandId, await readRecorded(handle.dir, recorded.start, recorded.end))
}

/**
 * Appends a command to an open case, through the case's store (a lease, for a worker's appends,
 * is refused once lost). See the module comment for the directory store's protocol.
 */
export const appendCommand = (
  handle: CaseHandle,
  cmd: RawCommand,
  options: StoreAppendOptions = {}
): Promise<AppendOutcome> => coded('append', () => handle.store.append(handle, cmd, options))

/** Appends to a case directory (the directory store's append). */
export const appendToDirectory = async (
  handle: CaseHandle,
  cmd: RawCommand,
  options: StoreAppendOptions = {}
): Promise<AppendOutcome> => {
  validateCommand(cmd)
  const env = options.env ?? systemEnv
  const locking = acquireLock(handle.dir, { waitMs: options.waitMs ?? 5000 })
  const ahead = planAhead(handle, cmd, env, directoryObjects(handle.dir))
  const lock = await locking
  try {
    const head = await readHead(handle.dir)
    if (E.isLeft(head)) throw corruptError([head.left])
    await catchUp(handle, head.right, (resume) => scanCase(handle.dir, { resume }))
    const repairs = await cutTornTail(handle.dir, head.right.bytes)

    const recorded = handle.cursor.commands.get(cmd.commandId)
    if (recorded !== undefined)
      return {
        ...duplicateOf(handle, cmd, await readRecorded(handle.dir, recorded.start, recorded.end), options.sameIntent),
        repairs
      }
    const rebased = rebaseCommand(handle, cmd, options)
    if (rebased === null) return { ...nothingToAppend(handle, cmd.commandId), repairs }

    const plan =
      (await ahead?.take(head.right)) ?? (await planCommand(handle, rebased, env, directoryObjects(handle.dir)))
    await writePlan(handle, plan)
    advanceCursor(handle, rebased.commandId, plan)
    return appendedAs(rebased.commandId, plan, repairs)
  } finally {
    await releaseLock(lock)
  }
}

/**
 * Cuts the bytes a crashed writer left past what HEAD acknowledges (a TORN_TAIL repair, reported);
 * a log shorter than HEAD is CASE_CORRUPT.
 */
const cutTornTail = async (dir: string, acknowledged: number): Promise<Finding[]> => {
  const logFile = path.join(dir, LOG_FILE)
  // The log as it is now (never through a link that replaced it since the case was opened).
  const { fh, size } = await openRegular(logFile, { shown: LOG_FILE })
  await fh.close()
  if (size < acknowledged)
    throw corruptError([
      {
        code: 'LOG_TRUNCATED',
        severity: 'error',
        message: 'events.jsonl is shorter than HEAD acknowledges',
        path: LOG_FILE
      }
    ])
  if (size === acknowledged) return []
  await truncateDurably(logFile, acknowledged)
  return [
    {
      code: 'TORN_TAIL',
      severity: 'notice',
      message: `cut ${size - acknowledged} unacknowledged bytes left by a crashed writer`,
      path: LOG_FILE,
      data: { bytes: size - acknowledged }
    }
  ]
}

/** The directory's answers to a command's object references: stored sizes and verified bytes. */
const directoryObjects = (dir: string): ObjectLookup => ({
  sizeOf: async (digest) => {
    const st = await fsp
      .lstat(path.join(dir, objectPath(digest)))
      .catch((e: unknown) => (errnoOf(e) === 'ENOENT' ? null : Promise.reject(e)))
    // A link or another file named like the object is not the object.
    return st === null || !st.isFile() ? null : st.size
  },
  read: async (ref) => readStoredObject(dir, ref)
})

/**
 * Writes a planned command: its objects, then all its lines in one write + fsync, then HEAD.
 * Until HEAD is replaced nothing is acknowledged: a failed write (a full disk) takes back what
 * this command wrote, so it leaves no torn tail, orphan object or temporary file.
 */
const writePlan = async (handle: CaseHandle, plan: CommandPlan): Promise<void> => {
  const headText = canonicalJson(plan.newHead)
  if (E.isLeft(headText)) return fail('INTERNAL_ERROR', 'HEAD is not canonicalisable')
  const logFile = path.join(handle.dir, LOG_FILE)
  const createdObjects: string[] = []
  let acknowledged = false
  try {
    for (const object of plan.provided.values()) {
      const written = await writeObject(handle.dir, object)
      if (written.created !== null) createdObjects.push(written.created)
    }
    const { fh } = await openRegular(logFile, { shown: LOG_FILE, write: true })
    try {
      await writeAll(fh, plan.bytes, handle.cursor.bytes)
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
}

/** Moves the handle past an acknowledged command. */
const advanceCursor = (handle: CaseHandle, commandId: string, plan: CommandPlan): void => {
  const { newHead } = plan
  handle.cursor.commands.set(commandId, {
    firstSeq: handle.cursor.seq + 1,
    lastSeq: newHead.seq,
    start: handle.cursor.bytes,
    end: newHead.bytes
  })
  handle.cursor.lastCommand = commandId
  handle.cursor.seq = newHead.seq
  handle.cursor.hash = newHead.hash
  handle.cursor.bytes = newHead.bytes
  handle.cursor.state = plan.rules.state()
  for (const x of plan.sealed) handle.cursor.ids.add(x.envelope.id)
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

const corruptError = (findings: Finding[]): FailureError => new FailureError(corrupt(findings))

const truncateDurably = async (file: string, length: number): Promise<void> => {
  const { fh } = await openRegular(file, { shown: path.basename(file), write: true })
  try {
    await fh.truncate(length)
    await fh.sync()
  } finally {
    await fh.close()
  }
}
