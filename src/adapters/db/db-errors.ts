/**
 * The world database's credentials and failures: the reader's password from its configured source, and
 * a driver error mapped to a coded failure that keeps the server's own code, errno and text (credentials
 * removed).
 */
import { failure, type Failure } from '../../failures/failure.js'
import type { DatabaseSection } from '../config/profile.js'
import { errnoOf } from '../fs-util.js'
import { readNamedFile } from '../regular-file.js'
import { FailureError } from '../../failures/error.js'
import { optional } from '../../optional.js'
import { UNREACHABLE_CODES } from '../unreachable-codes.js'

/** Reads the reader's password from the configured source; never echoes it. */
export const resolvePassword = async (
  db: DatabaseSection,
  env: Readonly<Record<string, string | undefined>>
): Promise<string | undefined> => {
  if (db.password_env !== undefined) {
    const value = env[db.password_env]
    if (value === undefined)
      throw new FailureError(
        failure('CREDENTIALS_MISSING', `environment variable ${db.password_env} (named by password_env) is not set`, {
          password_env: db.password_env
        })
      )
    return value
  }
  if (db.password_file !== undefined) {
    try {
      // A password is a line: a file of more than 64 KiB, a directory, device or FIFO is not one.
      const bytes = await readNamedFile(db.password_file, {
        maxBytes: 64 << 10,
        shown: `password_file ${db.password_file}`,
        code: 'CONFIG_INVALID'
      })
      return bytes.toString('utf8').replace(/\r?\n$/, '')
    } catch (e) {
      if (e instanceof FailureError) throw e
      throw new FailureError(
        failure('CREDENTIALS_MISSING', `cannot read password_file ${db.password_file} (${errnoOf(e) ?? 'error'})`, {
          password_file: db.password_file
        })
      )
    }
  }
  return undefined
}

const TIMEOUT_CODES = new Set(['ER_STATEMENT_TIMEOUT', 'ER_QUERY_TIMEOUT', 'PROTOCOL_SEQUENCE_TIMEOUT'])
const CONNECT_CODES = new Set<string>([...UNREACHABLE_CODES, 'ER_BAD_DB_ERROR', 'SQLITE_CANTOPEN', 'SQLITE_NOTADB'])

/**
 * What the server (or driver) said, for the operator: its code, error number and message, on one
 * line of at most 400 characters, with every credential in `secrets` removed. Nothing else of the
 * error (its stack, the statement, the bound values) is kept.
 */
export const serverText = (e: unknown, secrets: readonly string[] = []): string | null => {
  const err = e as { code?: unknown; errno?: unknown; sqlMessage?: unknown; message?: unknown } | null
  if (err === null || typeof err !== 'object') return null
  const said = typeof err.sqlMessage === 'string' ? err.sqlMessage : typeof err.message === 'string' ? err.message : ''
  const code = typeof err.code === 'string' ? err.code : null
  const errno = typeof err.errno === 'number' ? ` (errno ${err.errno})` : ''
  let text = said.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim()
  for (const secret of secrets) if (secret.length >= 3) text = text.split(secret).join('[credential removed]')
  if (text === '' && code === null) return null
  const line = `${code ?? 'error'}${errno}${text === '' || text === code ? '' : `: ${text}`}`
  return line.length > 400 ? `${line.slice(0, 399)}…` : line
}

/**
 * Maps a driver or knex error to a coded failure: the message says what it means in words, then
 * what the server said ({@link serverText}, credentials in `secrets` removed), so an operator can
 * diagnose the server from vba's output alone; `data` has the driver's code, errno and SQL state.
 */
export const mapDbError = (e: unknown, timeMs: number, secrets: readonly string[] = []): Failure => {
  if (e instanceof FailureError) return e.failure
  const err = e as { name?: string; code?: string; errno?: number; sqlState?: string }
  const code = typeof err?.code === 'string' ? err.code : undefined
  const said = serverText(e, secrets)
  const server = {
    driver_code: code ?? null,
    ...optional('server_errno', typeof err?.errno === 'number' ? err.errno : undefined),
    ...optional('sql_state', typeof err?.sqlState === 'string' ? err.sqlState : undefined),
    server_message: said
  }
  const saying = said === null ? '' : ` (the server said: ${said})`
  if (
    err?.name === 'KnexTimeoutError' ||
    (code !== undefined && TIMEOUT_CODES.has(code)) ||
    err?.errno === 1969 ||
    err?.errno === 3024
  ) {
    return failure('DATABASE_TIMEOUT', `the query did not finish within ${timeMs} ms`, { time_ms: timeMs })
  }
  if (code === 'ER_ACCESS_DENIED_ERROR')
    return failure(
      'DATABASE_AUTH_FAILED',
      `the world database refused the reader's user name or password (check [database] user and password_env / password_file)${saying}`,
      server
    )
  if (code === 'ER_DBACCESS_DENIED_ERROR')
    return failure(
      'DATABASE_AUTH_FAILED',
      `the reader may not use the configured database (check its grants)${saying}`,
      server
    )
  if (code !== undefined && CONNECT_CODES.has(code))
    return failure('DATABASE_UNAVAILABLE', `the world database is unavailable${saying}`, server)
  if (code === 'ER_TABLEACCESS_DENIED_ERROR' || code === 'ER_COLUMNACCESS_DENIED_ERROR')
    return failure('DATABASE_ACCESS_DENIED', `the reader may not read this${saying}`, server)
  return failure('DATABASE_QUERY_FAILED', `the world database refused the query${saying}`, server)
}
