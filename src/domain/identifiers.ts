/**
 * SQL identifiers the query builder may use. Only plain ASCII names: letters, digits and
 * underscores, not starting with a digit, at most 64 characters (MySQL's limit). Quotes,
 * backticks, comments, semicolons, spaces, dots and Unicode look-alikes are refused before any
 * SQL exists, and the builder quotes what remains anyway.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../failures/failure.js'

export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

export type IdentifierFailure = Failure<'IDENTIFIER_INVALID'>

/** Checks one identifier; `role` names it in the message (table, column, database). */
export const checkIdentifier = (role: string, name: unknown): E.Either<IdentifierFailure, string> =>
  typeof name === 'string' && IDENTIFIER_PATTERN.test(name)
    ? E.right(name)
    : E.left(
        failure(
          'IDENTIFIER_INVALID',
          `${role} name must be 1-64 ASCII letters, digits or underscores, not starting with a digit`,
          {
            role,
            // Echo a bounded, JSON-safe rendering only: the value may be hostile.
            value: typeof name === 'string' ? name.slice(0, 80) : typeof name
          }
        )
      )
