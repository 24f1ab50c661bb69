/**
 * Store URLs: `postgres://user@host:5432/database` (also `postgresql:`), `mysql://…` or
 * `mariadb://…`. A password may be in the URL, but is better named by `?password_env=VAR` (read
 * from the environment when the store opens); either way it goes to the driver only, and every
 * message shows the URL without it.
 */
import * as E from 'fp-ts/lib/Either.js'
import { failure, type Failure } from '../../failures/failure.js'

export interface StoreConnection {
  readonly client: 'pg' | 'mysql2'
  readonly host: string
  readonly port: number
  readonly user: string
  readonly password: string | undefined
  readonly database: string
  /** The URL without its password, for messages. */
  readonly display: string
}

const invalid = (message: string): E.Either<Failure, never> => E.left(failure('STORE_INVALID', message))

/** Parses a store URL (credentials never appear in a failure). */
export const parseStoreUrl = (
  text: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): E.Either<Failure, StoreConnection> => {
  let u: URL
  try {
    u = new URL(text)
  } catch {
    return invalid('the store is not a URL: use postgres://user@host:5432/database or mysql://user@host:3306/database')
  }
  const client =
    u.protocol === 'postgres:' || u.protocol === 'postgresql:'
      ? 'pg'
      : u.protocol === 'mysql:' || u.protocol === 'mariadb:'
        ? 'mysql2'
        : null
  if (client === null)
    return invalid(`unknown store scheme ${u.protocol.replace(/:$/, '')}: use postgres:// or mysql:// (mariadb://)`)
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''))
  if (!/^[A-Za-z_][A-Za-z0-9_$-]{0,62}$/.test(database))
    return invalid('the store URL names no valid database (…/database)')
  const passwordEnv = u.searchParams.get('password_env')
  for (const k of u.searchParams.keys()) if (k !== 'password_env') return invalid(`unknown store URL parameter ${k}`)
  let password = u.password === '' ? undefined : decodeURIComponent(u.password)
  if (passwordEnv !== null) {
    const v = env[passwordEnv]
    if (v === undefined)
      return E.left(
        failure('CREDENTIALS_MISSING', `environment variable ${passwordEnv} (the store's password_env) is not set`, {
          password_env: passwordEnv
        })
      )
    password = v
  }
  const shown = new URL(u.toString())
  shown.password = ''
  return E.right({
    client,
    host: u.hostname === '' ? '127.0.0.1' : u.hostname,
    port: u.port === '' ? (client === 'pg' ? 5432 : 3306) : Number(u.port),
    user: decodeURIComponent(u.username) || (client === 'pg' ? 'postgres' : 'root'),
    password,
    database,
    display: shown.toString()
  })
}
