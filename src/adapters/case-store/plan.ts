import * as E from 'fp-ts/lib/Either.js'
import { canonicalJson, sha256Digest } from '../../events/canonical.js'
import { sealEvent, type EventDraft, type SealedEvent } from '../../events/chain.js'
import { Identifier } from '../../events/codecs.js'
import type { EventEnvelope, Head } from '../../events/envelope.js'
import { collectRefs } from '../../events/refs.js'
import { fail } from '../../failures/error.js'
import { registry } from '../../events/catalog.js'
import { signerOf, type Env } from '../env.js'
import { signatureDraft } from './signing.js'
import { objectRefOf } from './objects.js'
import type { CaseHandle } from './handle.js'
import { MAX_LINE_BYTES } from './log-checker.js'
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
import { forkCaseState, type ObjectRefLite } from '../../domain/case-state.js'
import type { AppendOutcome, RawCommand } from './append.js'

/** Most events one command may append. */
export const MAX_EVENTS_PER_COMMAND = 10_000

const fingerprint = (
  drafts: ReadonlyArray<{ type: string; version: number; actor: string; data: unknown }>
): string => {
  const text = canonicalJson(drafts.map((d) => ({ type: d.type, version: d.version, actor: d.actor, data: d.data })))
  return E.isRight(text) ? sha256Digest(text.right) : 'not-canonicalisable'
}

/** A recorded command's events without its signature (what its drafts were). */
const unsigned = (events: readonly EventEnvelope[]): readonly EventEnvelope[] =>
  events[events.length - 1]?.type === 'CommandSigned' ? events.slice(0, -1) : events

const latestOf = (type: string): number => registry.definitions.get(type)?.latest ?? 1

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
  } else if (fingerprint(unsigned(events)) !== fingerprint(drafts)) {
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
  return recordedAs(handle, cmd.commandId, events)
}

/** The outcome of a command recorded before as `events`, as a retry of it returns it. */
export const recordedAs = (handle: CaseHandle, commandId: string, events: readonly EventEnvelope[]): AppendOutcome => {
  const last = events[events.length - 1]
  const receipt =
    last === undefined ? { seq: handle.cursor.seq, hash: handle.cursor.hash } : { seq: last.seq, hash: last.hash }
  return { status: 'duplicate', commandId, events, generation: handle.cursor.seq, receipt, repairs: [] }
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
 * store), and the case's rules checked on a fork of the state (RULE_VIOLATION, nothing written).
 * `ahead`: planned while the store's IO is in flight (plan-ahead.ts), the signature made off the
 * main thread.
 */
export const planCommand = async (
  handle: CaseHandle,
  cmd: RawCommand,
  env: Env,
  objects: ObjectLookup,
  ahead = false
): Promise<CommandPlan> => {
  const sealed = await sealCommand(handle, cmd, env, ahead)
  const provided = new Map((cmd.objects ?? []).map((bytes) => [objectRefOf(bytes).digest, bytes]))
  await checkObjectRefs(sealed, provided, objects)
  // Ahead of the lock, the IO callbacks that came in while the command was sealed run first.
  if (ahead) await new Promise((resolve) => setImmediate(resolve))
  const rules = await checkRules(handle, sealed, provided, objects)
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

/** The earliest date a command on the handle's head may have: the case's last event's, or its creation's. */
export const clockFloor = (handle: CaseHandle): string => handle.cursor.state.lastAt ?? handle.declaration.created_at

/**
 * The command's drafts sealed into a chain continuing the handle's head, all dated alike (never
 * before the case's last event: CLOCK_BEHIND), each with a fresh id, with the writer's signature
 * event last when the env signs.
 */
const sealCommand = async (handle: CaseHandle, cmd: RawCommand, env: Env, ahead: boolean): Promise<SealedEvent[]> => {
  const drafts = cmd.events.map((d) => ({ ...d, version: d.version ?? latestOf(d.type) }))
  const at = cmd.at ?? env.now().toISOString()
  // Time never runs backwards in a case: a clock behind the head (or the creation) is refused.
  const floor = clockFloor(handle)
  if (at < floor)
    fail(
      'CLOCK_BEHIND',
      `the command is dated ${at}, before the case's last event (${floor}): the writer's clock is behind; retry when it has caught up`,
      { at, head_at: floor }
    )
  let prev = handle.cursor.hash
  const fresh = new Set<string>()
  const seal = (d: EventDraft, i: number): SealedEvent => {
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
  }
  const sealed = drafts.map(seal)
  const signer = await signerOf(env)
  if (signer !== undefined)
    sealed.push(seal(await signatureDraft(handle.declaration.case_id, sealed, signer, ahead), sealed.length))
  return sealed
}

/**
 * Every object the events reference is provided by the command or stored, at the referenced size
 * (OBJECT_MISSING, INVALID_ARGUMENT), and every provided object is referenced.
 */
const checkObjectRefs = async (
  sealed: readonly SealedEvent[],
  provided: ReadonlyMap<string, Uint8Array>,
  objects: ObjectLookup
): Promise<void> => {
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
}

/**
 * The case's rules fed the sealed events on a fork of the handle's state (it copies what it
 * changes; the handle's state is left as it is, and replaced by the fork only once the command is
 * written), their obligations checked against the objects they name: the fold after the command,
 * or RULE_VIOLATION.
 */
const checkRules = async (
  handle: CaseHandle,
  sealed: readonly SealedEvent[],
  provided: ReadonlyMap<string, Uint8Array>,
  objects: ObjectLookup
): Promise<RuleFold> => {
  const rules = ruleFold(forkCaseState(handle.cursor.state))
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
  const first = violations[0]
  if (first !== undefined) {
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
  return rules
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

/** The outcome of a command whose plan was written: its sealed events, and the head they end at. */
export const appendedAs = (commandId: string, plan: CommandPlan, repairs: AppendOutcome['repairs']): AppendOutcome => ({
  status: 'appended',
  commandId,
  events: plan.sealed.map((s) => s.envelope),
  generation: plan.newHead.seq,
  receipt: { seq: plan.newHead.seq, hash: plan.newHead.hash },
  repairs
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
