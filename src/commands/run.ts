/**
 * How a command writes a case: the only way the library writes into one. A command opens the
 * case (checking its chain and rules), decides with the domain decider on the folded state, and
 * appends the decision as one atomic command; the writer checks the same rules again before
 * anything is written. A retried command id returns the recorded outcome instead of deciding
 * again; the same id with another intent is COMMAND_ID_CONFLICT.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, failureKind, type Failure } from '../failures/failure.js'
import type { CaseState } from '../domain/case-state.js'
import { command, decide, type CaseCommandType, type CommandData } from '../domain/decider.js'
import type { EventDraft } from '../events/chain.js'
import type { EventEnvelope } from '../events/envelope.js'
import { canonicalJson } from '../events/canonical.js'
import { intentOf, type EventType } from '../events/catalog.js'
import { Identifier } from '../events/codecs.js'
import type { CaseHandle } from '../adapters/case-store/open.js'
import { locate } from '../adapters/case-store/directory-store.js'
import type { CaseAt, Lease } from '../adapters/case-store/store.js'
import { appendCommand, recordedOutcome, type AppendOutcome, type RawCommand } from '../adapters/case-store/append.js'
import { nothingToAppend } from '../adapters/case-store/plan.js'
import { FailureError, must } from '../failures/error.js'
import { systemEnv, type Env } from '../adapters/env.js'
import { definedMembers, optional } from '../optional.js'

/** Options every typed command takes. @category cases */
export interface CommandOptions {
  /** Idempotency key; a retry with the same id returns the recorded outcome (default: a new id). */
  readonly commandId?: string
  /** Refuse (GENERATION_CONFLICT) unless the case is at this generation. */
  readonly expectedGeneration?: number
  readonly env?: Env
  /** How long to wait for another live writer (ms, default 5000). */
  readonly waitMs?: number
  /** Append only while this lease on a queued case holds (a worker's appends). */
  readonly lease?: Lease
  /** What the command was asked to do, checked against a recorded command of the same id (COMMAND_ID_CONFLICT when it differs). */
  readonly sameIntent?: (recorded: readonly EventEnvelope[]) => boolean
}

/** Whether two values are the same JSON (canonical forms equal). */
export const sameJson = (a: unknown, b: unknown): boolean => {
  const x = canonicalJson(a)
  const y = canonicalJson(b)
  return E.isRight(x) && E.isRight(y) && x.right === y.right
}

/**
 * An intent check: the recorded command's first event is of `type` and its intent (the `intent`
 * of its definition, src/events/catalog.ts) has every member of `expected`, as the same JSON.
 */
export const intentIs =
  (type: EventType, expected: Readonly<Record<string, unknown>>) =>
  (recorded: readonly EventEnvelope[]): boolean => {
    const first = recorded[0]
    if (first === undefined || first.type !== type) return false
    const intent = intentOf(first)
    return intent !== null && Object.entries(expected).every(([k, v]) => sameJson(intent[k], v))
  }

/** Opens the case at `at` (a directory, or a case id in a store). */
export const openAt = async (at: CaseAt): Promise<CaseHandle> => {
  const { store, ref } = locate(at)
  return store.open(ref)
}

export interface Decided {
  readonly events: readonly EventDraft[]
  readonly objects?: readonly Uint8Array[]
}

/** A decider's events (and the objects they reference) as a decision to append. */
export const asDecided = (
  r: E.Either<Failure, readonly EventDraft[]>,
  objects?: readonly Uint8Array[]
): E.Either<Failure, Decided> =>
  E.map((events: readonly EventDraft[]) => (objects === undefined ? { events } : { events, objects }))(r)

/** The decision of a command of `type` with `data` (and the objects its events reference), at the time it is decided. */
export const deciding =
  <T extends CaseCommandType>(type: T, data: CommandData[T], objects?: readonly Uint8Array[]) =>
  (s: CaseState, now: Date): E.Either<Failure, Decided> =>
    asDecided(decide(command(type, data, now), s), objects)

const checkGeneration = (handle: CaseHandle, expected: number | undefined): void => {
  if (expected !== undefined && expected !== handle.cursor.seq) {
    throw new FailureError(
      failure('GENERATION_CONFLICT', `expected generation ${expected}, the case is at ${handle.cursor.seq}`, {
        expected,
        actual: handle.cursor.seq
      })
    )
  }
}

/**
 * Decides on an open handle's state and appends the decision. An empty decision appends nothing
 * (the outcome then names the current generation).
 */
export const decideAndAppend = async (
  handle: CaseHandle,
  commandId: string,
  decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>,
  options: CommandOptions = {}
): Promise<AppendOutcome> => {
  const env = options.env ?? systemEnv
  if (!Identifier.is(commandId))
    throw new FailureError(
      failure(
        'INVALID_ARGUMENT',
        'command id must be 1-128 characters of letters, digits, . _ : - (starting with a letter or digit)',
        { command_id: String(commandId).slice(0, 140) }
      )
    )
  const done = await recordedOutcome(handle, commandId)
  if (done !== null) {
    if (options.sameIntent !== undefined && !options.sameIntent(done.events)) {
      throw new FailureError(
        failure('COMMAND_ID_CONFLICT', `command ${commandId} was recorded before for something else`, {
          command_id: commandId,
          first_seq: done.events[0]?.seq ?? null
        })
      )
    }
    return done
  }
  checkGeneration(handle, options.expectedGeneration)
  // One clock read per decision: the decider's times (retry times) and the events' are the same.
  const command = (h: CaseHandle): RawCommand | null => {
    const now = env.now()
    const decided = must(decide(h.cursor.state, now))
    if (decided.events.length === 0) return null
    return {
      commandId,
      expectedGeneration: h.cursor.seq,
      events: decided.events,
      at: now.toISOString(),
      ...optional('objects', decided.objects)
    }
  }
  const first = command(handle)
  // Decided again under the store's lock on the state another writer left: a refusal there that
  // the caller's own state did not give is a conflict (retryable: re-read, and the retry gets the
  // refusal itself), never a permanent error or a rule violation of the loser.
  const rebase = (h: CaseHandle): RawCommand | null => {
    try {
      return command(h)
    } catch (e) {
      if (e instanceof FailureError && failureKind(e.failure.code) === 'permanent') {
        throw new FailureError(
          failure(
            'GENERATION_CONFLICT',
            `the case moved on while command ${commandId} was decided (${e.failure.code}: ${e.failure.message}); re-read it and retry`,
            { command_id: commandId, cause: e.failure.code }
          )
        )
      }
      throw e
    }
  }
  if (first === null) return nothingToAppend(handle, commandId)
  // Without an explicit expected generation, a case that moved on meanwhile is decided again
  // under the store's lock (on the caught-up state) instead of failing with GENERATION_CONFLICT.
  return appendCommand(handle, first, {
    env,
    ...definedMembers(options, 'waitMs', 'lease', 'sameIntent'),
    ...(options.expectedGeneration === undefined ? { rebase } : {})
  })
}

/** Opens the case at `at` and runs one typed command on it. */
export const runCommand = async (
  at: CaseAt,
  defaultId: (env: Env) => string,
  decide: (s: CaseState, now: Date) => E.Either<Failure, Decided>,
  options: CommandOptions = {}
): Promise<AppendOutcome> => {
  const handle = await openAt(at)
  const env = options.env ?? systemEnv
  const commandId = options.commandId ?? defaultId(env)
  // The library's own id names what it records (feedback-L1, investigation-start): another intent
  // under it is what the decider refuses (LAB_FEEDBACK_RECORDED, INVESTIGATION_STARTED), not a
  // reused id (COMMAND_ID_CONFLICT naming an id the caller never chose).
  if (options.commandId === undefined && options.sameIntent !== undefined) {
    const done = await recordedOutcome(handle, commandId)
    if (done !== null && !options.sameIntent(done.events)) {
      const refused = decide(handle.cursor.state, env.now())
      if (E.isLeft(refused)) throw new FailureError(refused.left)
    }
  }
  return decideAndAppend(handle, commandId, decide, options)
}
