/**
 * Worker identities of a fleet. A worker name is recorded with every lease it holds (and shown by
 * `vba queue list`); a worker running several slots holds one identity per slot, `NAME:N`, each a
 * valid worker name itself, so a lease always names the slot that holds it.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'

/** 1-128 characters of letters, digits, `. _ : @ -`, starting with a letter or digit. */
export const WORKER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$/

/** Most slots one worker runs. */
export const MAX_SLOTS = 64

/** Slots a worker runs when it is not told: one case at a time. */
export const DEFAULT_SLOTS = 1

const SLOT_SUFFIX_MAX = `:${MAX_SLOTS}`.length

/** Checks a worker name (`slots` > 1: leaves room for the slot suffix). */
export const checkWorkerName = (name: string, slots = 1): E.Either<Failure, string> => {
  const max = slots > 1 ? 128 - SLOT_SUFFIX_MAX : 128
  return WORKER_NAME_PATTERN.test(name) && name.length <= max
    ? E.right(name)
    : E.left(
        failure(
          'INVALID_ARGUMENT',
          `a worker name is 1-${max} characters of letters, digits, . _ : @ - (starting with a letter or digit)`,
          { worker: name.slice(0, 140) }
        )
      )
}

/** The identity of slot `n` (1-based) of a worker running `slots` slots: the name itself for one slot. */
export const slotName = (name: string, n: number, slots: number): string => (slots === 1 ? name : `${name}:${n}`)
