/**
 * What a rule sees: the case state before the event, the command the event belongs to so far,
 * the event, and the obligations (object checks) it may leave; and how it reports: `bad` for a
 * violation of the event, `expect` for what the rest of its command owes.
 */
import type { RecordedEvent } from '../../events/chain.js'
import type { Binding } from '../../events/settings.js'
import type { CaseState, ObjectRefLite } from '../case-state.js'
import type { EntityRef } from '../enrichment-config.js'
import type { ExtractedEntity } from '../../events/catalog.js'
import type { RuleId } from './ids.js'

/** What a command still owes after one of its events (met by a later event of the same command). */
export interface Expectation {
  readonly seq: number
  readonly rule: RuleId
  readonly message: string
  readonly met: (e: RecordedEvent) => boolean
}

/** A recorded answer and the decision recorded with it, to be derived again once its raw object is read. */
export interface DecisionObligation {
  readonly kind: 'decision'
  readonly seq: number
  readonly ref: ObjectRefLite & { readonly media_type?: string }
  readonly turn: number
  readonly at: string
  /** The case state before the answer (a snapshot: read only). */
  readonly state: CaseState
  /** The events the command recorded after the answer. */
  readonly decided: ReadonlyArray<Pick<RecordedEvent, 'type' | 'actor' | 'data'>>
}

/** Checks that need object contents, for whoever reads objects (see objects.ts). */
export type Obligation =
  | {
      readonly kind: 'capture'
      readonly seq: number
      readonly ref: ObjectRefLite
      readonly queryKind: string
      readonly requestDigest: string
    }
  | {
      readonly kind: 'facts'
      readonly seq: number
      readonly ref: ObjectRefLite
      readonly revision: number
      readonly factCount: number
      readonly complete: boolean
      /** The revision's enrichment captures (behind its coverage). */
      readonly captures: readonly ObjectRefLite[]
      /** Every capture of the case recorded before the facts (what provenance may point into). */
      readonly known: readonly ObjectRefLite[]
      /** The revision's entities and its recorded enrichment settings (null: version 1), to derive the facts again. */
      readonly entities: readonly EntityRef[]
      /** The revision's report and the entities extracted from it (null: inputs version 1), to extract them again. */
      readonly report: ObjectRefLite | null
      readonly extracted: readonly ExtractedEntity[] | null
      readonly enrichment: ObjectRefLite | null
    }
  | DecisionObligation
  /** Captures and the binding in force when they were recorded: their origins must match it. */
  | {
      readonly kind: 'binding'
      readonly seq: number
      readonly binding: Binding
      readonly captures: readonly ObjectRefLite[]
    }
  /** A recorded prompt, to be rendered again from the state before it (checked by src/projections/prompt-derivation.ts). */
  | {
      readonly kind: 'prompt'
      readonly seq: number
      readonly ref: ObjectRefLite
      readonly turn: number
      readonly version: string
      readonly state: CaseState
    }

/** Reads an object's bytes by reference; undefined when it is not there (reported elsewhere). */
export type ReadObject = (ref: ObjectRefLite) => Uint8Array | undefined

/** The command an event belongs to, as far as the fold has seen it. */
export interface CommandContext {
  readonly commandId: string
  readonly events: readonly RecordedEvent[]
  readonly expectations: readonly Expectation[]
  /** Whether `events` holds a CommandSigned (kept by the fold: asking each event was quadratic in a command's length). */
  readonly signed: boolean
  /** A command that records a model's answer: the answer and the state before it, derived again at its end. */
  readonly answer: {
    readonly seq: number
    readonly ref: ObjectRefLite & { readonly media_type?: string }
    readonly turn: number
    readonly at: string
    readonly state: CaseState
  } | null
}

/** What the check of one event of type `E` is given. */
export interface RuleContext<E extends RecordedEvent = RecordedEvent> {
  /** The case state before the event. */
  readonly s: CaseState
  readonly cmd: CommandContext
  readonly e: E
  readonly obligations: Obligation[]
  readonly bad: (rule: RuleId, message: string) => void
  readonly expect: (rule: RuleId, message: string, met: (x: RecordedEvent) => boolean) => void
  /** `rule` cannot be checked for this event (an old version lacks what it needs); `reason` says why, the same for every event it concerns. */
  readonly skip: (rule: RuleId, reason: string) => void
}

/** A rule that could not be checked, why, and the events it concerns (reported as RULE_NOT_APPLIED). */
export interface NotApplied {
  readonly rule: RuleId
  readonly reason: string
  readonly seqs: readonly number[]
}

/** `out` with `v` appended (a new array when `out` is null): a check allocates only what it reports. */
export const appended = <T>(out: T[] | null, v: T): T[] => {
  if (out === null) return [v]
  out.push(v)
  return out
}

/** Whether an event of the command so far meets `pred`. */
export const inCommand = (cmd: CommandContext, pred: (e: RecordedEvent) => boolean): boolean => cmd.events.some(pred)

/** The event of type `T` a check is about. */
export type EventOf<T extends RecordedEvent['type']> = Extract<RecordedEvent, { type: T }>
