/**
 * The world database as an attacker or an unusual schema gives it: columns named after
 * Object.prototype members (`__proto__`, `constructor`, `toString`, ...), a streamed query whose
 * connection is killed by the server, a boolean filter on SQLite. Run as users run it (`vba
 * research` on a private MariaDB and an SQLite file) and through the executor.
 *
 * Found by attacking the generated row reader (30c4e98) and the shared deadline timer (a901861):
 * selecting `__proto__` on MariaDB made mysql2 fail the connection, the streamed query never
 * ended and `vba research` exited with Node's code 13 and no message (the unreferenced timer kept
 * nothing alive); on SQLite the column's values vanished from the capture. A killed connection
 * left the same hang. SQLite refused `eq true` (better-sqlite3 binds no booleans).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import Database from 'better-sqlite3'
import { mysqlExecutor } from '../../src/adapters/db/executors.js'
import { FailureError } from '../../src/failures/error.js'
import { mariaWorld } from '../helpers/world.js'
import { tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

const { shared, sql } = await mariaWorld()
const dbName = `vba_hostile_${process.pid}`
const reader = `vba_hostile_r${process.pid}`
const READER_ENV = 'VBA_TEST_HOSTILE_READER_PASSWORD'
const password = `p-${process.pid}-${Date.now()}`
process.env[READER_ENV] = password

const ODD = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf']
sql(`CREATE DATABASE ${dbName}; USE ${dbName};
CREATE TABLE odd (id INT PRIMARY KEY, \`__proto__\` VARCHAR(10), \`constructor\` VARCHAR(10), \`toString\` BLOB,
  \`valueOf\` DATETIME, \`hasOwnProperty\` DECIMAL(10,2), \`isPrototypeOf\` INT, flag TINYINT(1));
INSERT INTO odd VALUES (1, 'p', 'c', 'ts', '2024-01-02 03:04:05', 1.50, 7, 1), (2, NULL, NULL, NULL, NULL, NULL, NULL, 0);
CREATE VIEW odd_view AS SELECT id, id * 2 AS \`x.y\`, id * 3 AS \`p q\`, \`constructor\` AS \`a"b\`\`c\` FROM odd;
CREATE VIEW ask_view AS SELECT id, id * 2 AS \`a?b\` FROM odd;
CREATE USER '${reader}'@'127.0.0.1' IDENTIFIED BY '${password}'; GRANT SELECT ON ${dbName}.* TO '${reader}'@'127.0.0.1';`)
process.on('exit', () => {
  try {
    sql(`DROP DATABASE IF EXISTS ${dbName}; DROP USER IF EXISTS '${reader}'@'127.0.0.1';`)
  } catch {
    // the server may be gone already
  }
})

const dir = tempDir('hostile-columns')
const sqliteFile = path.join(dir, 'odd.sqlite')
const lite = new Database(sqliteFile)
lite.exec(`CREATE TABLE odd (id INTEGER PRIMARY KEY, "__proto__" TEXT, "constructor" TEXT, "toString" BLOB,
  "valueOf" DATETIME, "hasOwnProperty" TEXT_DECIMAL(10,2), "isPrototypeOf" INT, flag TINYINT)`)
lite
  .prepare('INSERT INTO odd VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  .run(1, 'p', 'c', Buffer.from('ts'), '2024-01-02 03:04:05', '1.50', 7, 1)
lite.prepare('INSERT INTO odd VALUES (2, NULL, NULL, NULL, NULL, NULL, NULL, 0)').run()
lite.exec(`CREATE VIEW odd_view AS SELECT id, id * 2 AS "x.y", id * 3 AS "p q", "constructor" AS "a""b\`c" FROM odd;
  CREATE VIEW ask_view AS SELECT id, id * 2 AS "a?b" FROM odd`)
lite.close()

const profiles = {
  mariadb: `client = "mysql2"\nhost = "127.0.0.1"\nport = ${shared.port}\nuser = "${reader}"\npassword_env = "${READER_ENV}"`,
  sqlite: `client = "better-sqlite3"\nfilename = ${JSON.stringify(sqliteFile)}`
}
const profileFor = (kind: keyof typeof profiles): string => {
  const file = path.join(tempDir(`hostile-${kind}`), 'project.toml')
  writeFileSync(
    file,
    `[database]\n${profiles[kind]}\ndatabases = ["${dbName}"]\nsnapshot_id = "odd-1"\n\n[database.allowed_tables]\n${dbName} = ["odd", "odd_view", "ask_view"]\n`
  )
  return file
}

const research = (kind: keyof typeof profiles, query: unknown): { code: number; out: Record<string, unknown> } => {
  const r = vba(['research', '--config', profileFor(kind), '--query', '-'], { input: JSON.stringify(query) })
  let out: Record<string, unknown>
  try {
    out = JSON.parse(r.stdout) as Record<string, unknown>
  } catch {
    throw new Error(`vba research exited ${r.code} without JSON: ${r.stdout.slice(0, 300)} ${r.stderr.slice(0, 600)}`)
  }
  return { code: r.code, out }
}

const rows = (columns: readonly string[], filters: unknown[] = []): unknown => ({
  kind: 'database.rows',
  table: 'odd',
  columns,
  filters,
  offset: 0,
  limit: 10
})

const test = suite('hostile and unusual columns of the world database')

for (const kind of ['mariadb', 'sqlite'] as const) {
  test(`${kind}: selecting __proto__ is refused with a coded message, not a hang or lost values`, () => {
    const r = research(kind, rows(['id', '__proto__']))
    const error = r.out['error'] as { code: string; message: string } | undefined
    assert.is(error?.code, 'QUERY_INVALID', JSON.stringify(r.out).slice(0, 400))
    assert.match(error?.message ?? '', /__proto__/)
    assert.is(r.code, 2)
    // Filtering and ordering by it only names it in SQL: that works.
    const filtered = research(kind, {
      ...(rows(['id']) as object),
      filters: [{ column: '__proto__', operator: 'eq', value: 'p' }],
      order_by: [{ column: '__proto__', direction: 'desc' }]
    })
    assert.equal((filtered.out['result'] as { rows: unknown[] }).rows, [{ id: 1 }])
  })

  test(`${kind}: columns named after Object.prototype members come back exactly`, () => {
    const r = research(kind, rows(['id', ...ODD]))
    assert.is(r.code, 0, JSON.stringify(r.out).slice(0, 400))
    assert.equal((r.out['result'] as { rows: unknown[] }).rows, [
      {
        id: 1,
        constructor: 'c',
        toString: { $base64: Buffer.from('ts').toString('base64') },
        valueOf: '2024-01-02T03:04:05',
        hasOwnProperty: '1.50',
        isPrototypeOf: 7
      },
      { id: 2, constructor: null, toString: null, valueOf: null, hasOwnProperty: null, isPrototypeOf: null }
    ])
  })

  test(`${kind}: a boolean filter value selects as it does on the other dialect`, () => {
    const r = research(kind, rows(['id'], [{ column: 'flag', operator: 'eq', value: true }]))
    assert.is(r.code, 0, JSON.stringify(r.out).slice(0, 400))
    assert.equal((r.out['result'] as { rows: unknown[] }).rows, [{ id: 1 }])
    const off = research(kind, rows(['id'], [{ column: 'flag', operator: 'ne', value: true }]))
    assert.equal((off.out['result'] as { rows: unknown[] }).rows, [{ id: 2 }])
  })

  test(`${kind}: a table without a key, its columns named with dots, spaces and quotes, is read in their order`, () => {
    // The order's tie-breaker is every column, as the server names them.
    const r = research(kind, { ...(rows(['id']) as object), table: 'odd_view' })
    assert.is(r.code, 0, JSON.stringify(r.out).slice(0, 400))
    assert.equal((r.out['result'] as { rows: unknown[] }).rows, [{ id: 1 }, { id: 2 }])
    assert.equal(
      (r.out['result'] as { order: Array<{ column: string }> }).order.map((o) => o.column),
      ['id', 'x.y', 'p q', 'a"b`c']
    )
    const asked = research(kind, { ...(rows(['id']) as object), table: 'ask_view' })
    if (kind === 'sqlite') assert.equal((asked.out['result'] as { rows: unknown[] }).rows, [{ id: 1 }, { id: 2 }])
    else
      assert.is((asked.out['error'] as { code: string } | undefined)?.code, 'QUERY_INVALID', JSON.stringify(asked.out))
  })
}

test('mariadb: a streamed query whose connection the server kills fails at once, coded', async () => {
  const marker = `vba_kill_${process.pid}`
  const exec = await mysqlExecutor(
    {
      client: 'mysql2',
      host: '127.0.0.1',
      port: shared.port,
      user: reader,
      password_env: READER_ENV,
      databases: [dbName],
      snapshot_id: 'odd-1',
      allowed_tables: {}
    },
    // Far longer than the test: the failure must come from the kill, not the time limit.
    600_000,
    process.env,
    () => undefined
  )
  try {
    const running = exec.each({ sql: `SELECT SLEEP(300) AS ${marker}`, bindings: [] }, () => true)
    running.catch(() => undefined)
    let id = ''
    for (let i = 0; i < 200 && id === ''; i++) {
      id = sql(
        `SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(300) AS ${marker}%' AND USER = '${reader}'`
      ).trim()
      if (id === '') await new Promise((resolve) => setTimeout(resolve, 50))
    }
    assert.ok(/^\d+$/.test(id), `the query runs on the server (${id})`)
    sql(`KILL CONNECTION ${id}`)
    let failed: unknown = null
    try {
      await running
    } catch (e) {
      failed = e
    }
    assert.ok(failed instanceof FailureError, `a coded failure, got ${String(failed)}`)
    assert.is((failed as FailureError).failure.code, 'DATABASE_UNAVAILABLE')
    // The pool replaces the killed connection: the next query works.
    const [[row]] = (await exec.all([{ sql: 'SELECT 1 AS one', bindings: [] }])) as [[{ one: number }]]
    assert.is(row.one, 1)
  } finally {
    await exec.close()
  }
})

test.run()
