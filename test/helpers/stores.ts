/**
 * Real SQL stores for tests: a fresh database on the machine's PostgreSQL (dropped afterwards), and
 * a private MariaDB server started in a temporary data directory with a store user that has a
 * password (given to the store through password_env, as in production).
 */
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { startMariaDb, type MariaDbInstance } from '../../scripts/lib/mariadb-instance.js'
import { tempDir } from './fs.js'

/** Where the machine's PostgreSQL is (trust auth for postgres on this machine type). */
export const POSTGRES_ADMIN_URL = process.env['VBA_TEST_POSTGRES'] ?? 'postgres://postgres@127.0.0.1:5432/postgres'
export const POSTGRES_HINT =
  'PostgreSQL must run on 127.0.0.1:5432 with trust auth for user postgres (Debian: apt-get install postgresql; pg_ctlcluster 15 main start), or set VBA_TEST_POSTGRES to an admin URL'

export interface TestStore {
  readonly kind: 'postgres' | 'mariadb'
  /** The store URL (a MariaDB URL names its password through password_env). */
  readonly url: string
  /** Environment for password_env. */
  readonly environment: Readonly<Record<string, string>>
  readonly drop: () => Promise<void>
}

const adminQuery = async (sql: string): Promise<void> => {
  const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  try {
    await c.connect()
  } catch (e) {
    throw new Error(`${POSTGRES_HINT} (${(e as Error).message})`)
  }
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}

/** A new, empty database on the machine's PostgreSQL. */
export const postgresStore = async (tag: string): Promise<TestStore> => {
  const name = `vba_test_${tag}_${process.pid}_${randomBytes(3).toString('hex')}`.toLowerCase()
  await adminQuery(`CREATE DATABASE ${name}`)
  const u = new URL(POSTGRES_ADMIN_URL)
  u.pathname = `/${name}`
  return {
    kind: 'postgres',
    url: u.toString(),
    environment: {},
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
}

export const STORE_PASSWORD_ENV = 'VBA_TEST_STORE_PASSWORD'

/** A private MariaDB server (one per test file) that hands out databases with a password-protected store user. */
export const mariadbServer = async (): Promise<{
  readonly server: MariaDbInstance
  readonly store: (tag: string) => Promise<TestStore>
  readonly stop: () => Promise<void>
}> => {
  const server = await startMariaDb({ dir: path.join(tempDir('mariadb-store'), 'server') })
  process.on('exit', () => {
    try {
      process.kill(server.pid, 'SIGKILL')
    } catch {
      // gone
    }
  })
  const password = randomBytes(12).toString('hex')
  server.sql(`CREATE USER 'vba_store'@'%' IDENTIFIED BY '${password}';`)
  return {
    server,
    stop: () => server.stop(),
    store: async (tag) => {
      const name = `vba_${tag}_${randomBytes(3).toString('hex')}`
      server.sql(`CREATE DATABASE ${name}; GRANT ALL ON ${name}.* TO 'vba_store'@'%';`)
      return {
        kind: 'mariadb',
        url: `mysql://vba_store@127.0.0.1:${server.port}/${name}?password_env=${STORE_PASSWORD_ENV}`,
        environment: { [STORE_PASSWORD_ENV]: password },
        drop: async () => {
          server.sql(`DROP DATABASE IF EXISTS ${name};`)
        }
      }
    }
  }
}
