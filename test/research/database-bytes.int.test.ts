/**
 * database.rows stops reading at the byte limit (issue 23, point 11): rows of 1 MiB each, in
 * MariaDB and in SQLite. The adapter hands back only the rows it read before the limit was passed
 * (so memory follows max_result_bytes, not rows × row size), and the research answer is the same
 * as before: a page cut to the limit, or RESULT_TOO_LARGE when one row is larger than it.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import Database from 'better-sqlite3'
import { loadProfile } from '../../src/fp.js'
import { openWorldDb } from '../../src/adapters/db/world-db.js'
import { planRows, type DatabaseScope } from '../../src/domain/database-plan.js'
import { decodeQuery, type DatabaseRows } from '../../src/domain/query.js'
import { DEFAULT_LIMITS } from '../../src/domain/limits.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { mariaWorld } from '../helpers/world.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { VBA_BIN } from '../helpers/cli.js'

const ROWS = 40
const ROW_BYTES = 1 << 20
const { shared, sql } = await mariaWorld()
const dbName = `vba_big_${process.pid}`
// A database and a SELECT-only reader of this file's own (the shared reader's grants are checked elsewhere).
const reader = `vba_big_r${process.pid}`
const READER_ENV = 'VBA_TEST_BIG_READER_PASSWORD'
process.env[READER_ENV] = `p-${process.pid}-${Date.now()}`
sql(`CREATE DATABASE ${dbName}; USE ${dbName}; CREATE TABLE big_rows (id INT PRIMARY KEY, payload LONGTEXT NOT NULL);
INSERT INTO big_rows SELECT seq, REPEAT('x', ${ROW_BYTES}) FROM seq_1_to_${ROWS};
CREATE USER '${reader}'@'127.0.0.1' IDENTIFIED BY '${process.env[READER_ENV]}'; GRANT SELECT ON ${dbName}.* TO '${reader}'@'127.0.0.1';`)
process.on('exit', () => {
  try {
    sql(`DROP DATABASE IF EXISTS ${dbName}; DROP USER IF EXISTS '${reader}'@'127.0.0.1';`)
  } catch {
    // the server may be gone already
  }
})
const sqliteFile = path.join(tempDir('big-sqlite'), 'big.sqlite')
const lite = new Database(sqliteFile)
lite.exec('CREATE TABLE big_rows (id INTEGER PRIMARY KEY, payload TEXT NOT NULL)')
const insert = lite.prepare('INSERT INTO big_rows VALUES (?, ?)')
for (let i = 1; i <= ROWS; i++) insert.run(i, 'x'.repeat(ROW_BYTES))
lite.close()

const profileFor = (kind: 'mariadb' | 'sqlite', maxResultBytes: number, extraLimits = ''): string => {
  const file = path.join(tempDir('big-profile'), 'project.toml')
  const db =
    kind === 'mariadb'
      ? `client = "mysql2"\nhost = "127.0.0.1"\nport = ${shared.port}\nuser = "${reader}"\npassword_env = "${READER_ENV}"\ndatabases = ["${dbName}"]`
      : `client = "better-sqlite3"\nfilename = ${JSON.stringify(sqliteFile)}\ndatabases = ["${dbName}"]`
  writeFileSync(
    file,
    `[database]\n${db}\nsnapshot_id = "big-1"\n\n[database.allowed_tables]\n${dbName} = ["big_rows"]\n\n[limits]\nmax_result_bytes = ${maxResultBytes}\nmax_rows = 1000\n${extraLimits}`
  )
  return file
}

const query = (limit: number): unknown => ({
  kind: 'database.rows',
  table: 'big_rows',
  columns: ['id', 'payload'],
  filters: [],
  offset: 0,
  limit
})

const test = suite('database.rows stops reading at the byte limit (point 11)')

for (const kind of ['mariadb', 'sqlite'] as const) {
  test(`${kind}: the adapter reads only up to the limit, not all ${ROWS} rows of 1 MiB`, async () => {
    const profile = right(await loadProfile(profileFor(kind, 3 * ROW_BYTES))())
    const db = await openWorldDb(profile.database!, { limits: profile.limits })
    try {
      const schema = await db.tableSchema({ database: dbName, table: 'big_rows' })
      assert.ok(schema !== null)
      const scope: DatabaseScope = {
        databases: [dbName],
        allowedTables: { [dbName]: ['big_rows'] },
        limits: { ...DEFAULT_LIMITS, max_rows: 1000, max_result_bytes: 3 * ROW_BYTES }
      }
      const q = right(decodeQuery(query(ROWS))) as DatabaseRows
      const plan = right(planRows(scope, schema!, q))
      const read = await db.selectRows(plan, schema!, 3 * ROW_BYTES - 2048)
      assert.ok(read.stopped, 'stopped early')
      assert.is(read.rows.length, 3, 'the rows up to the one that passed the limit')
      const all = await db.selectRows(plan, schema!)
      assert.not.ok(all.stopped)
      assert.is(all.rows.length, ROWS)
    } finally {
      await db.close()
    }
  })

  test(`${kind}: research answers a cut page, or RESULT_TOO_LARGE for a row over the limit`, async () => {
    const r = createProjectResearch(right(await loadProfile(profileFor(kind, 3 * ROW_BYTES))()))
    try {
      const c = right(await r.query(query(ROWS))())
      const result = c.result as {
        row_count: number
        byte_limit_reached: boolean
        has_more: boolean
        next_offset: number
      }
      assert.is(result.row_count, 2)
      assert.ok(result.byte_limit_reached && result.has_more)
      assert.is(result.next_offset, 2)
    } finally {
      await r.close()
    }
    const small = createProjectResearch(right(await loadProfile(profileFor(kind, 256 << 10))()))
    try {
      assert.is(left(await small.query(query(300))())?.code, 'RESULT_TOO_LARGE')
      // The connection dropped mid-result is replaced: the next query works.
      const next = right(await small.query({ kind: 'database.count', table: 'big_rows', filters: [] })())
      assert.is((next.result as { count: number }).count, ROWS)
    } finally {
      await small.close()
    }
    if (kind === 'mariadb') {
      // The server stops sending too: no reader thread is left writing the rest of the result
      // (a half-closed connection kept it for the server's 60 s write timeout, with its locks).
      let busy = ''
      for (let i = 0; i < 50; i++) {
        busy = sql('SHOW PROCESSLIST')
          .split('\n')
          .filter((l) => l.includes(reader) && l.includes('big_rows'))
          .join('\n')
        if (busy === '') break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.is(busy, '', 'no server thread still sends the dropped result')
    }
  })
}

test('vba research stopped at the limit ends at once (no client timer of the dropped query keeps it alive)', () => {
  const file = profileFor('mariadb', 256 << 10, 'time_ms = 300000\n')
  const q = path.join(tempDir('big-query'), 'q.json')
  writeFileSync(q, JSON.stringify(query(300)))
  const r = spawnSync(process.execPath, [VBA_BIN, 'research', '--config', file, '--query', q], {
    encoding: 'utf8',
    timeout: 60_000,
    env: process.env
  })
  assert.is(r.signal, null, 'ended by itself')
  assert.is(r.status, 2, r.stderr)
  assert.match(r.stderr, 'RESULT_TOO_LARGE')
})

test.run()
