/**
 * The Streamable HTTP sessions clients ended (a DELETE on the endpoint), kept outside the process:
 * a session id is sealed, not stored (http-sessions.ts), so a restarted server would take back an
 * ended session as it takes back a live one. One file per session key (so per bearer token),
 * `$XDG_STATE_HOME/vba/mcp-ended-sessions/KEY` (else `~/.local/state/vba/…`), one line per ended
 * session: the MAC of its id, which names it without being it. Nothing of this is in the case.
 */
import { createHash } from 'node:crypto'
import { appendFile } from 'node:fs/promises'
import * as os from 'node:os'
import * as path from 'node:path'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import { makeDirs } from '../adapters/make-dirs.js'
import { errnoOf } from '../adapters/fs-util.js'
import { isFileRefusal, readRegular } from '../adapters/regular-file.js'

/** The sessions ended on one key, by this process or by one before a restart. */
export interface EndedSessions {
  /** Records that the client ended the session `id`; rejects (IO_ERROR) when it cannot be recorded. */
  readonly end: (id: string) => Promise<void>
  /** Whether the session `id` was ended; rejects (IO_ERROR) when the record cannot be read. */
  readonly isEnded: (id: string) => Promise<boolean>
}

/** The directory the ended sessions are kept in: `$XDG_STATE_HOME/vba/mcp-ended-sessions`, else `~/.local/state/vba/…`. */
export const endedSessionsDir = (env: Readonly<Record<string, string | undefined>> = process.env): string => {
  const xdg = env['XDG_STATE_HOME']
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'vba', 'mcp-ended-sessions')
  // Never relative to where the server runs (an empty or relative HOME would put the folder in a
  // case directory): HOME when absolute, else the account's home, else the state is refused.
  const home = [env['HOME'], os.homedir(), accountHome()].find((h) => h !== undefined && path.isAbsolute(h))
  if (home === undefined)
    throw new FailureError(
      failure('IO_ERROR', 'no absolute home folder (HOME) nor XDG_STATE_HOME: set one for vba mcp --http', {})
    )
  return path.join(home, '.local', 'state', 'vba', 'mcp-ended-sessions')
}

/** The account's home as the system knows it (undefined when it cannot say). */
const accountHome = (): string | undefined => {
  try {
    return os.userInfo().homedir
  } catch {
    return undefined
  }
}

/** The record is read whole at most this large (~250,000 ended sessions); larger, no session is taken back. */
const MAX_RECORD_BYTES = 8 << 20

/** What names a session in the record: the MAC that ends its id (`v1.NONCE.PAYLOAD.MAC`). */
const markOf = (id: string): string => id.slice(id.lastIndexOf('.') + 1)

const ioError = (what: string, file: string, e: unknown): FailureError =>
  new FailureError(
    failure(
      'IO_ERROR',
      `the ended MCP sessions cannot be ${what} ${file} (${(e as NodeJS.ErrnoException).code ?? String(e).slice(0, 100)})`,
      { path: file }
    )
  )

/** The ended sessions of the session key `key`, kept in `dir` (created, mode 0700, on the first end). */
export const endedSessions = (dir: string, key: Buffer): EndedSessions => {
  const file = path.join(
    dir,
    createHash('sha256').update('vba mcp ended sessions\0').update(key).digest('hex').slice(0, 32)
  )
  const marks = async (): Promise<Set<string>> => {
    try {
      // Bounded, and only a regular file (readRegular refuses a larger one, a FIFO or a device).
      return new Set((await readRegular(file, { maxBytes: MAX_RECORD_BYTES })).toString('utf8').split('\n'))
    } catch (e) {
      if (errnoOf(e) === 'ENOENT') return new Set()
      throw ioError('read from', file, isFileRefusal(e) ? { code: e.failure.code } : e)
    }
  }
  return {
    end: async (id) => {
      try {
        await makeDirs(dir, 0o700)
        // One short line appended (O_APPEND): two servers ending sessions at once do not mix them.
        await appendFile(file, `${markOf(id)}\n`, { mode: 0o600 })
      } catch (e) {
        throw ioError('recorded in', file, e)
      }
    },
    isEnded: async (id) => (await marks()).has(markOf(id))
  }
}
