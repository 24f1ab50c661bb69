/**
 * The world database of the integration tests: a private MariaDB (shared by the test runner
 * through VBA_TEST_MARIADB, or started here when a file runs alone) holding the fixture world, a
 * SELECT-only reader, and the same rows as an SQLite file.
 */
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import {
  startMariaDb,
  findBinaries,
  sqlClient,
  INSTALL_HINT,
  type MariaDbInstance
} from '../../scripts/lib/mariadb-instance.js'
import { ALLOWED_WORLD_TABLES } from '../../src/demo/world-fixture.js'
import { READER_USER, loadWorld } from '../../scripts/lib/world-db.js'
import Database from 'better-sqlite3'
import { writeWorldSqliteWith } from '../../src/demo/world-sqlite.js'
import { tempDir } from './fs.js'

export interface SharedMariaDb {
  readonly port: number
  readonly socket: string
  readonly dir: string
  readonly readerPassword: string
}

export { READER_USER, loadWorld }
export const PASSWORD_ENV = 'VBA_TEST_DB_PASSWORD'

export const newReaderPassword = (): string => `r-${randomBytes(9).toString('hex')}`

let own: Promise<{ shared: SharedMariaDb; sql: MariaDbInstance['sql'] }> | undefined

/**
 * The shared test server, or one started for this process (stopped when it exits). A file that
 * changes server-wide state (the general log, a table lock) asks for `own`: a server of its own even
 * when the run shares one.
 */
export const mariaWorld = async (
  options: { readonly own?: boolean } = {}
): Promise<{ shared: SharedMariaDb; sql: MariaDbInstance['sql'] }> => {
  const fromEnv = process.env['VBA_TEST_MARIADB']
  const bin = findBinaries()
  if (bin === null) throw new Error(INSTALL_HINT)
  if (fromEnv !== undefined && options.own !== true) {
    const shared = JSON.parse(fromEnv) as SharedMariaDb
    const sql = sqlClient(bin, shared.socket)
    return { shared, sql }
  }
  own ??= (async () => {
    const instance = await startMariaDb({ dir: path.join(tempDir('mariadb'), 'server') })
    process.on('exit', () => {
      try {
        process.kill(instance.pid, 'SIGTERM')
      } catch {
        // already gone
      }
    })
    const readerPassword = newReaderPassword()
    loadWorld(instance.sql, readerPassword)
    return {
      shared: { port: instance.port, socket: instance.socket, dir: instance.dir, readerPassword },
      sql: instance.sql
    }
  })()
  return own
}

const allowlist = (): string => `world = [${ALLOWED_WORLD_TABLES.map((t) => JSON.stringify(t)).join(', ')}]`

/** Writes a profile for the MariaDB world (reader credentials via PASSWORD_ENV) and returns its path. */
export const mariaProfile = (shared: SharedMariaDb, extra = ''): string => {
  const dir = tempDir('profile')
  const file = path.join(dir, 'project.toml')
  writeFileSync(
    file,
    `[database]
client = "mysql2"
host = "127.0.0.1"
port = ${shared.port}
user = "${READER_USER}"
password_env = "${PASSWORD_ENV}"
databases = ["world"]
snapshot_id = "world-test-fixture-1"

[database.allowed_tables]
${allowlist()}
${extra}`
  )
  process.env[PASSWORD_ENV] = shared.readerPassword
  return file
}

/** Writes the fixture as SQLite plus a profile for it and returns the profile path. */
export const sqliteProfile = (extra = ''): string => {
  const dir = tempDir('sqlite-world')
  writeWorldSqliteWith(Database, path.join(dir, 'world.sqlite'))
  const file = path.join(dir, 'project.toml')
  writeFileSync(
    file,
    `[database]
client = "better-sqlite3"
filename = "world.sqlite"
databases = ["world"]
snapshot_id = "world-test-fixture-1"

[database.allowed_tables]
${allowlist()}
${extra}`
  )
  return file
}
