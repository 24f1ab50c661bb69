/** Writes the fixture world database as an SQLite file (the demo's embedded default). */
import type Database from 'better-sqlite3'
import { loadPeer } from '../adapters/peers.js'
import { WORLD_TABLES, sqliteFixtureDdl, type SqlValue } from './world-fixture.js'

const bindable = (v: SqlValue): string | number | bigint | Buffer | null =>
  v instanceof Uint8Array ? Buffer.from(v) : v

/** Writes the fixture into `file` with the given better-sqlite3 (synchronous: for tests that have the driver). */
export const writeWorldSqliteWith = (Sqlite: typeof Database, file: string): void => {
  const db = new Sqlite(file)
  try {
    db.pragma('journal_mode = DELETE')
    db.transaction(() => {
      for (const t of WORLD_TABLES) {
        for (const ddl of sqliteFixtureDdl(t)) db.exec(ddl)
        const insert = db.prepare(`INSERT INTO "${t.name}" VALUES (${t.columns.map(() => '?').join(', ')})`)
        for (const row of t.rows) insert.run(...row.map(bindable))
      }
    })()
  } finally {
    db.close()
  }
}

/** better-sqlite3, loaded on first use (an optional peer: PACKAGE_MISSING without it). */
export const loadSqlite = async (): Promise<typeof Database> =>
  (await loadPeer('better-sqlite3', 'the demo world (an SQLite world database)', () => import('better-sqlite3')))
    .default

/** Writes the fixture into `file`, loading better-sqlite3 first. */
export const writeWorldSqlite = async (file: string): Promise<void> => writeWorldSqliteWith(await loadSqlite(), file)
