/** Writes the fixture world database as an SQLite file (the demo's embedded default). */
import Database from 'better-sqlite3'
import { WORLD_TABLES, sqliteFixtureDdl, type SqlValue } from './world-fixture.js'

const bindable = (v: SqlValue): string | number | bigint | Buffer | null =>
  v instanceof Uint8Array ? Buffer.from(v) : v

export const writeWorldSqlite = (file: string): void => {
  const db = new Database(file)
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
