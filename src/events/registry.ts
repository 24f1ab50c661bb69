/**
 * The event type registry: every event type's codec per schema version, and the upcasters that
 * lift an older version's data to the next one. Old events are never rewritten; they are upcast
 * on read, so a case written years ago decodes into today's types and replays unchanged.
 */
import * as t from 'io-ts'
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'
import type { Actor } from './codecs.js'
import { describeErrors } from './decode.js'
import { unknownMember } from './strict.js'

/** Lifts data of version `v` to version `v + 1`. The result is checked by the next codec. */
export type Upcaster = (data: unknown) => unknown

/** One event type. `codecs[i]` is the codec of version `i + 1`; the last one is current. */
export interface EventDefinition<T extends string, C extends t.Mixed> {
  readonly type: T
  readonly codec: C
  readonly latest: number
  readonly versions: readonly t.Mixed[]
  readonly upcasters: readonly Upcaster[]
}

/**
 * Declares an event type. `previous` lists older versions oldest first, each with the upcaster
 * from it to the version after it.
 *
 * @example
 * defineEvent('NoteRecorded', NoteRecordedV2, [{ codec: NoteRecordedV1, upcast: (d) => ({ ...d, format: 'plain' }) }])
 */
export const defineEvent = <T extends string, C extends t.Mixed>(
  type: T,
  codec: C,
  previous: ReadonlyArray<{ readonly codec: t.Mixed; readonly upcast: Upcaster }> = []
): EventDefinition<T, C> => ({
  type,
  codec,
  latest: previous.length + 1,
  versions: [...previous.map((p) => p.codec), codec],
  upcasters: previous.map((p) => p.upcast)
})

/**
 * What a command that begins with an event of this type was asked to do, read from the event (its
 * current version): a retried command id whose recorded first event has another intent is
 * COMMAND_ID_CONFLICT. Null for a type no retried command begins with.
 */
export type Intent<D> = ((e: { readonly actor: Actor; readonly data: D }) => Readonly<Record<string, unknown>>) | null

/**
 * One event type of the catalog: its codec and versions, the actors its deciders write it as, the
 * event types a command that begins with it may hold after it (names checked against the catalog
 * in catalog.ts), and its intent. Its check and fold (src/domain/event-handling.ts) and the
 * report's timeline (src/projections/report/timeline.ts) complete it on their floors, each mapped
 * by type.
 */
export interface EventTypeDefinition<
  T extends string,
  C extends t.Mixed,
  A extends readonly Actor[] = readonly Actor[],
  M extends readonly string[] = readonly string[]
> extends EventDefinition<T, C> {
  readonly actors: A
  readonly members: M
  readonly intent: Intent<t.TypeOf<C>>
}

/**
 * What {@link defineEventType} takes besides the type and its data: `previous` lists older versions
 * oldest first, each with its upcaster.
 */
export interface EventTypeSpec<C extends t.Mixed, A extends readonly Actor[], M extends readonly string[]> {
  readonly previous?: ReadonlyArray<{ readonly codec: t.Mixed; readonly upcast: Upcaster }>
  readonly actors: A
  readonly members: M
  readonly intent: Intent<t.TypeOf<C>>
}

/** The data codec of an event type: the record of the members given, or the codec given. */
export type DataCodec<D extends t.Props | t.Mixed> = D extends t.Mixed ? D : t.TypeC<Extract<D, t.Props>>

/**
 * Declares an event type of the catalog. Its data is a record of the members given (its codec
 * named after the type), or the codec given when it is not a plain record (it carries its name).
 *
 * @example
 * defineEventType('BudgetToppedUp', { amount: PositiveInt, reason: t.string }, { actors: ['operator'], members: [], intent: ({ data }) => data })
 */
export const defineEventType = <
  T extends string,
  D extends t.Props | t.Mixed,
  const A extends readonly [Actor, ...Actor[]],
  const M extends readonly string[]
>(
  type: T,
  data: D,
  spec: EventTypeSpec<DataCodec<D>, A, M>
): EventTypeDefinition<T, DataCodec<D>, A, M> => ({
  ...defineEvent(type, (data instanceof t.Type ? data : t.type(data as t.Props, type)) as DataCodec<D>, spec.previous),
  actors: spec.actors,
  members: spec.members,
  intent: spec.intent
})

export type DecodeFailure = Failure<'EVENT_UNKNOWN_TYPE' | 'EVENT_UNKNOWN_VERSION' | 'EVENT_DATA_INVALID'>

// eslint-disable-next-line @typescript-eslint/no-explicit-any
// biome-ignore lint/suspicious/noExplicitAny: a definition of any data codec (the registry holds all of them)
type AnyDefinition = EventDefinition<string, any>

/** A closed set of event definitions, looked up by type name. */
export interface EventRegistry<D extends AnyDefinition> {
  readonly definitions: ReadonlyMap<string, D>
  /** Decodes `data` stored as `type`@`version` and upcasts it to the current version. */
  readonly decode: (type: string, version: number, data: unknown) => E.Either<DecodeFailure, unknown>
}

export const makeRegistry = <D extends AnyDefinition>(defs: readonly D[]): EventRegistry<D> => {
  const definitions = new Map<string, D>(defs.map((d) => [d.type, d]))
  if (definitions.size !== defs.length) throw new TypeError('duplicate event type in registry')
  const decode = (type: string, version: number, data: unknown): E.Either<DecodeFailure, unknown> => {
    const def = definitions.get(type)
    if (def === undefined)
      return E.left(failure('EVENT_UNKNOWN_TYPE', `unknown event type ${JSON.stringify(type)}`, { type }))
    const stored = def.versions[version - 1]
    if (stored === undefined || !Number.isInteger(version)) {
      return E.left(
        failure('EVENT_UNKNOWN_VERSION', `${type} has no version ${version} (current: ${def.latest})`, {
          type,
          version,
          latest: def.latest
        })
      )
    }
    // Members the stored version does not name are refused, not carried along unchecked.
    const extra = unknownMember(stored, data)
    if (extra !== null)
      return E.left(
        failure('EVENT_DATA_INVALID', `${type}@${version} data has a member its schema does not name: ${extra}`, {
          type,
          version,
          member: extra
        })
      )
    // Fast path: current-version data that already satisfies its codec is returned as it is.
    if (version === def.latest && stored.is(data)) return E.right(data)
    const first = stored.decode(data)
    if (E.isLeft(first)) {
      return E.left(
        failure('EVENT_DATA_INVALID', `${type}@${version} data is invalid: ${describeErrors(first.left)}`, {
          type,
          version
        })
      )
    }
    let current: unknown = first.right
    for (let v = version; v < def.latest; v++) {
      const upcast = def.upcasters[v - 1]
      const next = def.versions[v]
      if (upcast === undefined || next === undefined) throw new TypeError(`registry for ${type} is incomplete`)
      const lifted = next.decode(upcast(current))
      if (E.isLeft(lifted)) {
        return E.left(
          failure(
            'EVENT_DATA_INVALID',
            `${type}@${version} cannot be upcast to version ${v + 1}: ${describeErrors(lifted.left)}`,
            { type, version }
          )
        )
      }
      current = lifted.right
    }
    return E.right(current)
  }
  return { definitions, decode }
}
