/**
 * What the test suite must leave as it found it on the machine it runs on: the modes and owners of
 * the system temporary directory and of the folders above the suite's own run folder, and whether
 * the machine's own MariaDB (not the suite's private one) can still create an on-disk temporary
 * table, which it cannot once the system temporary directory loses its sticky, world-writable mode.
 *
 * `npm test` (scripts/run-tests.mjs) reads this before the first test file and again after the
 * last, and fails the run when anything differs; .ci/run prints it before and after.
 */
import { statSync } from 'node:fs'
import * as path from 'node:path'

/** One folder's mode (permission bits with setuid, setgid and sticky) and owner. */
export type FolderState = { readonly path: string; readonly mode: string; readonly uid: number; readonly gid: number }

export type HostState = {
  readonly folders: readonly FolderState[]
  /** `ok`, the server's error text, or `unreachable` when no MariaDB answers there. */
  readonly mariadb: string
}

const folderState = (p: string): FolderState => {
  try {
    const s = statSync(p)
    return { path: p, mode: (s.mode & 0o7777).toString(8).padStart(4, '0'), uid: s.uid, gid: s.gid }
  } catch (e) {
    return { path: p, mode: `missing (${(e as NodeJS.ErrnoException).code ?? 'error'})`, uid: -1, gid: -1 }
  }
}

/** The folder and every folder above it, root last. */
export const foldersUp = (start: string): string[] => {
  const out: string[] = []
  for (let p = path.resolve(start); ; p = path.dirname(p)) {
    out.push(p)
    if (path.dirname(p) === p) return out
  }
}

/** Where the machine's own MariaDB listens (VBA_TEST_HOST_MARIADB=host:port overrides; `off` skips it). */
const hostMariaDb = (): { host: string; port: number } | null => {
  const v = process.env['VBA_TEST_HOST_MARIADB'] ?? '127.0.0.1:3306'
  if (v === 'off') return null
  const [host = '127.0.0.1', port = '3306'] = v.split(':')
  return { host, port: Number(port) }
}

/**
 * Asks the machine's MariaDB for an on-disk temporary table (MyISAM temporary tables are files in
 * its tmpdir). `unreachable` when nothing listens or root may not log in without a password.
 */
const mariadbTempTable = async (): Promise<string> => {
  const at = hostMariaDb()
  if (at === null) return 'not checked (VBA_TEST_HOST_MARIADB=off)'
  const mysql = await import('mysql2/promise')
  let conn: Awaited<ReturnType<typeof mysql.createConnection>>
  try {
    conn = await mysql.createConnection({
      host: at.host,
      port: at.port,
      user: 'root',
      password: '',
      connectTimeout: 3000
    })
  } catch (e) {
    return `unreachable (${(e as { code?: string }).code ?? 'error'})`
  }
  try {
    await conn.query('CREATE TEMPORARY TABLE mysql.vba_host_check (a INT) ENGINE=MyISAM')
    await conn.query('DROP TEMPORARY TABLE mysql.vba_host_check')
    return 'ok'
  } catch (e) {
    return `cannot create a temporary table: ${(e as Error).message}`
  } finally {
    await conn.end().catch(() => undefined)
  }
}

/** The state of the folders given (each with every folder above it) and of the machine's MariaDB. */
export const readHostState = async (folders: readonly string[]): Promise<HostState> => {
  const all = [...new Set(folders.flatMap(foldersUp))].sort()
  return { folders: all.map(folderState), mariadb: await mariadbTempTable() }
}

/** What changed between two readings, in words; empty when nothing did. */
export const hostChanges = (before: HostState, after: HostState): string[] => {
  const out: string[] = []
  const was = new Map(before.folders.map((f) => [f.path, f]))
  for (const f of after.folders) {
    const b = was.get(f.path)
    if (b === undefined) continue
    if (b.mode !== f.mode) out.push(`${f.path}: mode ${b.mode} before the suite, ${f.mode} after`)
    if (b.uid !== f.uid || b.gid !== f.gid)
      out.push(`${f.path}: owner ${b.uid}:${b.gid} before, ${f.uid}:${f.gid} after`)
  }
  if (before.mariadb === 'ok' && after.mariadb !== 'ok')
    out.push(`the machine's MariaDB could create temporary tables before the suite and not after: ${after.mariadb}`)
  return out
}

/** The system temporary directory should be world-writable and sticky (1777); a note when it is not. */
export const tmpWarnings = (state: HostState, systemTmp: string): string[] => {
  const t = state.folders.find((f) => f.path === systemTmp)
  return t !== undefined && t.mode !== '1777'
    ? [`${systemTmp} has mode ${t.mode}, not 1777: other users (the machine's MariaDB) cannot write there`]
    : []
}

/** One line per folder and the MariaDB check, for a log. */
export const describeHostState = (s: HostState): string =>
  [
    ...s.folders.map((f) => `  ${f.mode} ${f.uid}:${f.gid} ${f.path}`),
    `  machine's MariaDB temporary table: ${s.mariadb}`
  ].join('\n')
