/**
 * Database research against a real MariaDB (private instance) and the same rows in SQLite,
 * compared with what the mariadb client returns for the same predicate.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { spawn } from 'node:child_process'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch, type ProjectResearch } from '../../src/research/project-research.js'
import type { Capture } from '../../src/events/capture.js'
import type { Failure } from '../../src/failures/failure.js'
import { findBinaries } from '../../scripts/lib/mariadb-instance.js'
import { mariaWorld, mariaProfile, sqliteProfile, READER_USER } from '../helpers/world.js'
import { ALLOWED_WORLD_TABLES } from '../../src/demo/world-fixture.js'
import { right, left, tempDir } from '../helpers/fs.js'
import { HOSTILE, REFUSALS, request } from '../helpers/hostile.js'
import { vba } from '../helpers/cli.js'
import mysql from 'mysql2'
import { pipelined, sent as sentQuery } from '../../src/adapters/db/mysql-pipeline.js'

// A server of its own: the hostile tests switch on the server-wide general log (and read the
// reader's statements from it) and the timeout test write-locks world.smart_scripts.
const { shared, sql } = await mariaWorld({ own: true })
const open = async (file: string): Promise<ProjectResearch> => createProjectResearch(right(await loadProfile(file)()))
const maria = await open(mariaProfile(shared))
const lite = await open(sqliteProfile())
const BOTH: Array<[string, ProjectResearch]> = [
  ['mariadb', maria],
  ['sqlite', lite]
]

const ask = async (r: ProjectResearch, q: unknown): Promise<Capture> => right(await r.query(q)())
const refuse = async (r: ProjectResearch, q: unknown): Promise<Failure> => left(await r.query(q)())
type RowsResult = {
  rows: Array<Record<string, unknown>>
  has_more: boolean
  next_offset: number | null
  complete_filtered_rows: boolean
  row_count: number
  row_limit_capped: boolean
  byte_limit_reached: boolean
}
const rowsOf = (c: Capture): RowsResult => c.result as unknown as RowsResult

/** Rows from the mariadb client as arrays of strings ('NULL' for NULL). */
const client = (query: string): string[][] =>
  sql(query, { database: 'world' })
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split('\t'))
const asClientText = (v: unknown): string =>
  v === null
    ? 'NULL'
    : typeof v === 'object'
      ? `0x${Buffer.from((v as { $base64: string }).$base64, 'base64')
          .toString('hex')
          .toUpperCase()}`
      : typeof v === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(v)
        ? v.replace('T', ' ')
        : String(v)

// ---------------------------------------------------------------------------------------------
const kinds = suite('database kinds on MariaDB and SQLite')

kinds('database.tables lists allowed tables that exist, never the others', async () => {
  const shown = client('SHOW TABLES')
    .map((r) => r[0] ?? '')
    .filter((t) => ALLOWED_WORLD_TABLES.includes(t))
    .sort()
  for (const [name, r] of BOTH) {
    const c = await ask(r, { kind: 'database.tables' })
    const tables = (c.result['tables'] as Array<{ table: string }>).map((t) => t.table)
    assert.equal(tables, shown, name)
    assert.ok(tables.includes('creature_template'), name)
    assert.not.ok(tables.includes('account_secrets'), name)
    assert.equal(c.origin, {
      type: 'database',
      client: name === 'mariadb' ? 'mysql2' : 'better-sqlite3',
      database: 'world',
      snapshot_id: 'world-test-fixture-1'
    })
    const filtered = await ask(r, { kind: 'database.tables', text: 'quest' })
    assert.equal(
      (filtered.result['tables'] as Array<{ table: string }>).map((t) => t.table),
      ['creature_queststarter', 'quest_template']
    )
  }
})

kinds('database.schema reports real columns, types, nullability and keys', async () => {
  const expected = client(
    "SELECT COLUMN_NAME, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_SCHEMA='world' AND TABLE_NAME='smart_scripts' ORDER BY ORDINAL_POSITION"
  )
  for (const [name, r] of BOTH) {
    const c = await ask(r, { kind: 'database.schema', table: 'smart_scripts' })
    const cols = c.result['columns'] as Array<{ name: string; nullable: boolean; data_type: string }>
    assert.equal(
      cols.map((x) => x.name),
      expected.map((e) => e[0]),
      name
    )
    assert.equal(
      cols.map((x) => x.nullable),
      expected.map((e) => e[1] === 'YES'),
      name
    )
    assert.equal(c.result['primary_key'], ['entryorguid', 'source_type', 'id', 'link'], name)
    assert.is(cols[0]?.data_type, 'bigint', name)
  }
})

kinds('database.rows equals the mariadb client for the same predicates, values exact', async () => {
  const cases: Array<{ q: Record<string, unknown>; sql: string }> = [
    {
      q: {
        table: 'creature_template',
        columns: ['entry', 'name', 'subname', 'npcflag', 'DamageModifier'],
        filters: [{ column: 'name', operator: 'contains', value: 'Wolpertinger' }]
      },
      sql: "SELECT entry, name, subname, npcflag, DamageModifier FROM creature_template WHERE name LIKE '%Wolpertinger%' ORDER BY entry LIMIT 50"
    },
    {
      q: {
        table: 'creature_template',
        columns: ['entry', 'VerifiedBuild'],
        filters: [
          { column: 'VerifiedBuild', operator: 'eq', value: null },
          { column: 'entry', operator: 'lt', value: 100200 }
        ]
      },
      sql: 'SELECT entry, VerifiedBuild FROM creature_template WHERE VerifiedBuild IS NULL AND entry < 100200 ORDER BY entry LIMIT 50'
    },
    {
      q: {
        table: 'smart_scripts',
        columns: ['entryorguid', 'source_type', 'id', 'comment'],
        filters: [
          { column: 'entryorguid', operator: 'in', value: [23487, 24766, -91001] },
          { column: 'source_type', operator: 'eq', value: 0 }
        ]
      },
      sql: 'SELECT entryorguid, source_type, id, comment FROM smart_scripts WHERE entryorguid IN (23487, 24766, -91001) AND source_type = 0 ORDER BY entryorguid, source_type, id, link LIMIT 50'
    },
    {
      q: {
        table: 'game_event',
        columns: ['eventEntry', 'start_time', 'occurence', 'description'],
        filters: [{ column: 'eventEntry', operator: 'ge', value: 12 }],
        order_by: [{ column: 'start_time', direction: 'desc' }]
      },
      sql: 'SELECT eventEntry, start_time, occurence, description FROM game_event WHERE eventEntry >= 12 ORDER BY start_time DESC, eventEntry LIMIT 50'
    },
    {
      q: {
        table: 'item_template',
        columns: ['entry', 'icon_checksum', 'BuyPrice'],
        filters: [{ column: 'entry', operator: 'ne', value: 32906 }]
      },
      sql: "SELECT entry, IF(icon_checksum IS NULL, NULL, CONCAT('0x', HEX(icon_checksum))), BuyPrice FROM item_template WHERE entry <> 32906 ORDER BY entry LIMIT 50"
    },
    {
      q: {
        table: 'quest_template',
        columns: ['ID', 'RewardMoney', 'QuestDescription'],
        filters: [{ column: 'LogTitle', operator: 'contains', value: 'Wolpertinger!' }]
      },
      sql: "SELECT ID, RewardMoney, REPLACE(QuestDescription, '\\n', '\\\\n') FROM quest_template WHERE LogTitle LIKE '%Wolpertinger!%' ORDER BY ID LIMIT 50"
    }
  ]
  for (const { q, sql: query } of cases) {
    const expected = client(query)
    assert.ok(expected.length > 0, `fixture has rows for ${query}`)
    for (const [name, r] of BOTH) {
      const result = rowsOf(await ask(r, { kind: 'database.rows', offset: 0, limit: 50, ...q }))
      const cols = q['columns'] as string[]
      const got = result.rows.map((row) => cols.map((c) => asClientText(row[c]).replace(/\n/g, '\\n')))
      assert.equal(got, expected, `${name}: ${query}`)
      assert.is(result.complete_filtered_rows, true)
    }
  }
  // exactness: BIGINT beyond 2^53 and DECIMAL as strings, never rounded
  for (const [name, r] of BOTH) {
    const row = rowsOf(
      await ask(r, {
        kind: 'database.rows',
        table: 'creature_template',
        columns: ['npcflag', 'DamageModifier', 'speed_walk'],
        filters: [{ column: 'entry', operator: 'in', value: [24715, 24766] }],
        offset: 0,
        limit: 5
      })
    ).rows
    assert.equal(
      row.map((x) => [x['npcflag'], x['DamageModifier']]),
      [
        ['9223372036854775807', '1.0000'],
        ['0', '123456789.1234']
      ],
      name
    )
  }
})

kinds('contains matches %, _ and ! literally', async () => {
  for (const [name, r] of BOTH) {
    for (const text of ['%', '_', '!', 'Wolpertinger_']) {
      const res = rowsOf(
        await ask(r, {
          kind: 'database.rows',
          table: 'creature_template',
          columns: ['entry'],
          filters: [{ column: 'name', operator: 'contains', value: text }],
          offset: 0,
          limit: 10
        })
      )
      assert.is(res.rows.length, 0, `${name}: ${text}`)
    }
  }
})

kinds('paging across a whole table returns every row exactly once, and count agrees', async () => {
  const total = Number(client('SELECT COUNT(*) FROM creature_template')[0]?.[0])
  for (const [name, r] of BOTH) {
    const counted = await ask(r, { kind: 'database.count', table: 'creature_template', filters: [] })
    assert.is(counted.result['count'], total, name)
    const seen = new Set<number>()
    let offset: number | null = 0
    let pages = 0
    while (offset !== null) {
      const res = rowsOf(
        await ask(r, {
          kind: 'database.rows',
          table: 'creature_template',
          columns: ['entry'],
          filters: [],
          offset,
          limit: 500
        })
      )
      for (const row of res.rows) {
        const e = row['entry'] as number
        assert.not.ok(seen.has(e), `${name}: entry ${e} twice`)
        seen.add(e)
      }
      assert.is(res.row_limit_capped, true, 'limit 500 capped to max_rows 200')
      offset = res.next_offset
      pages++
    }
    assert.is(seen.size, total, name)
    assert.is(pages, Math.ceil(total / 200), name)
  }
})

kinds('the byte limit cuts a page and says so', async () => {
  const file = sqliteProfile('\n[limits]\nmax_result_bytes = 4096\n')
  const small = await open(file)
  const res = rowsOf(
    await ask(small, {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry', 'name', 'subname'],
      filters: [],
      offset: 0,
      limit: 200
    })
  )
  assert.is(res.byte_limit_reached, true)
  assert.is(res.has_more, true)
  assert.is(res.next_offset, res.row_count)
  assert.ok(res.row_count > 5 && res.row_count < 200)
  await small.close()
})

kinds.run()

// ---------------------------------------------------------------------------------------------
const hostile = suite('hostile input')

/** Statements the reader sent while `work` ran, from the server's general query log. */
const readerStatements = async (work: () => Promise<void>): Promise<string[]> => {
  sql("TRUNCATE mysql.general_log; SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = ON;")
  try {
    await work()
  } finally {
    sql('SET GLOBAL general_log = OFF;')
  }
  const seen = sql(
    `SELECT argument FROM mysql.general_log WHERE user_host LIKE '${READER_USER}%' AND command_type = 'Query'`
  )
  sql('TRUNCATE mysql.general_log;')
  return seen.split('\n').filter((l) => l !== '')
}

hostile('is refused with a coded error before any SQL is sent', async () => {
  for (const [name, r] of BOTH) {
    const sent = await readerStatements(async () => {
      for (const [q, code] of HOSTILE)
        assert.is((await refuse(r, q)).code, code, `${name}: ${JSON.stringify(q).slice(0, 120)}`)
    })
    assert.equal(sent, [], `${name}: no statement reached the server`)
  }
  // the log does see the reader when it does read (the check above can fail)
  const reads = await readerStatements(async () => {
    await ask(maria, {
      kind: 'database.count',
      table: 'creature_template',
      filters: [{ column: 'name', operator: 'contains', value: "x' OR 1=1 --" }]
    })
  })
  assert.ok(
    reads.some((l) => l.includes('count(*)') && l.includes("'%x\\' OR 1=1 --%'")),
    reads.join('\n')
  )
  // column checks need the real schema: they are refused after reading it, before the row query
  assert.is(
    (
      await refuse(maria, {
        kind: 'database.rows',
        table: 'creature_template',
        columns: ['entry', 'secret'],
        filters: [],
        offset: 0,
        limit: 1
      })
    ).code,
    'COLUMN_UNKNOWN'
  )
})

const checksums = (): string =>
  sql(
    'CHECKSUM TABLE creature_template, quest_template, creature_queststarter, item_template, smart_scripts, spell_script_names, game_event, account_secrets',
    { database: 'world' }
  )
const grants = (): string =>
  sql(`SHOW GRANTS FOR '${READER_USER}'@'127.0.0.1'; SHOW GRANTS FOR '${READER_USER}'@'localhost'`)

hostile(
  'property: thousands of generated requests are a coded refusal or a correct read; nothing changes, even for root',
  async () => {
    const rootFile = path.join(tempDir('root-profile'), 'project.toml')
    writeFileSync(
      rootFile,
      `[database]\nclient = "mysql2"\nhost = "127.0.0.1"\nport = ${shared.port}\nuser = "root"\npassword_env = "VBA_TEST_ROOT_PASSWORD"\ndatabases = ["world", "mysql"]\nsnapshot_id = "s"\n[database.allowed_tables]\nworld = ["creature_template", "quest_template", "creature_queststarter", "item_template", "smart_scripts", "spell_script_names", "game_event"]\nmysql = ["user"]\n`
    )
    process.env['VBA_TEST_ROOT_PASSWORD'] = ''
    const root = await open(rootFile)
    const before = { sums: checksums(), grants: grants() }
    let reads = 0
    let refusals = 0
    for (const [name, r] of [
      ['root', root],
      ['reader', maria],
      ['sqlite', lite]
    ] as const) {
      await fc.assert(
        fc.asyncProperty(request, async (q) => {
          const out = await r.query(q)()
          if (out._tag === 'Left') {
            refusals++
            return (
              REFUSALS.has(out.left.code) ||
              (name === 'reader' && out.left.code === 'TABLE_NOT_FOUND') ||
              out.left.code === 'TABLE_NOT_FOUND'
            )
          }
          reads++
          const c = out.right
          if (c.kind === 'database.rows') {
            const res = rowsOf(c)
            return (
              Array.isArray(res.rows) &&
              res.rows.length <= 200 &&
              (res.has_more ? res.next_offset !== null : res.next_offset === null)
            )
          }
          return c.format === 'vba-capture' && c.origin.type === 'database'
        }),
        fcOptions(name === 'sqlite' ? 1500 : 1000)
      )
    }
    await root.close()
    assert.is(checksums(), before.sums, 'no table changed')
    assert.is(grants(), before.grants, 'grants unchanged')
    assert.ok(reads > 100, `some generated requests were valid reads (${reads})`)
    assert.ok(refusals > 1000, `most were refused (${refusals})`)
  }
)

hostile('every read is its own read-only transaction: begin, its statements, commit, in order', async () => {
  const sent = await readerStatements(async () => {
    await ask(maria, { kind: 'database.schema', table: 'quest_template' })
    await ask(maria, { kind: 'database.count', table: 'creature_template', filters: [] })
    await ask(maria, {
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry', 'name'],
      filters: [],
      offset: 0,
      limit: 5
    })
  })
  // a connection's session set-up (once per connection) may come first
  const reads = sent.filter((l) => !/^(SET SESSION|SELECT VERSION|SELECT @@SESSION)/.test(l))
  const shape = reads.map((l) =>
    l === 'START TRANSACTION READ ONLY' ? 'begin' : l === 'COMMIT' ? 'commit' : /^select /.test(l) ? 'select' : l
  )
  // the schema (two statements, unless an earlier test read it), the count, the rows
  const schema = shape.length === 10 ? ['begin', 'select', 'select', 'commit'] : []
  assert.equal(shape, [...schema, 'begin', 'select', 'commit', 'begin', 'select', 'commit'], reads.join('\n'))
})

hostile(
  'the three statements of a read go out at once, before the first reply is read (mysql2 pipelining)',
  async () => {
    const conn = mysql.createConnection({
      host: '127.0.0.1',
      port: shared.port,
      user: READER_USER,
      password: shared.readerPassword
    })
    const marker = `pipelined-${process.pid}`
    const arrived = (): number =>
      Number(
        sql(
          `SELECT COUNT(*) FROM mysql.general_log WHERE user_host LIKE '${READER_USER}%' AND command_type = 'Query' AND (argument LIKE '%${marker}%' OR argument IN ('START TRANSACTION READ ONLY', 'COMMIT'))`
        ).trim()
      )
    try {
      await new Promise<void>((resolve, reject) => conn.connect((e) => (e ? reject(e) : resolve())))
      await readerStatements(async () => {
        const replies = pipelined(conn as unknown as mysql.PoolConnection, () => {
          const all = [
            sentQuery(conn as unknown as mysql.PoolConnection, 'START TRANSACTION READ ONLY'),
            sentQuery(conn as unknown as mysql.PoolConnection, `SELECT '${marker}' AS m, @@in_transaction AS t`),
            sentQuery(conn as unknown as mysql.PoolConnection, 'COMMIT')
          ]
          return { result: all.map((x) => x.done), commands: all.map((x) => x.command) }
        })
        // From here the client reads no reply until resumed: what the server logs came in one write.
        conn.pause()
        for (let i = 0; i < 200 && arrived() < 3; i++) await new Promise((r) => setTimeout(r, 50))
        assert.is(arrived(), 3, 'begin, select and commit reached the server before any reply was read')
        conn.resume()
        const [, rows] = await Promise.all(replies)
        assert.equal(rows, [{ m: marker, t: 1 }], 'the select ran inside the transaction')
      })
    } finally {
      conn.destroy()
    }
  }
)

hostile.run()

// ---------------------------------------------------------------------------------------------
const trust = suite('credentials, outages and timeouts')

trust('a password never appears in captures, failures or CLI output', async () => {
  const secret = shared.readerPassword
  const outputs: string[] = []
  for (const q of [
    { kind: 'database.tables' },
    { kind: 'database.rows', table: 'creature_template', columns: ['entry', 'name'], filters: [], offset: 0, limit: 3 }
  ]) {
    outputs.push(JSON.stringify(await maria.query(q)()))
  }
  outputs.push(
    JSON.stringify(
      await maria.query({ kind: 'database.rows', table: 'nope', columns: ['x'], filters: [], offset: 0, limit: 1 })()
    )
  )
  // a wrong password: the failure names the problem, not the password
  const wrong = mariaProfile(shared)
  process.env['VBA_TEST_DB_PASSWORD'] = `${secret}-wrong`
  const bad = await open(wrong)
  const failed = await refuse(bad, { kind: 'database.tables' })
  assert.is(failed.code, 'DATABASE_AUTH_FAILED', 'a wrong password is reported as such')
  assert.match(failed.message, 'user name or password')
  outputs.push(JSON.stringify(failed))
  await bad.close()
  process.env['VBA_TEST_DB_PASSWORD'] = secret
  // the CLI: a query file, a bad query, a failing connection
  const qfile = path.join(tempDir('q'), 'q.json')
  writeFileSync(qfile, JSON.stringify({ kind: 'database.count', table: 'creature_template', filters: [] }))
  const profile = mariaProfile(shared)
  const good = vba(['research', '--config', profile, '--query', qfile])
  assert.is(good.code, 0, good.stderr)
  assert.is(JSON.parse(good.stdout).result.count, Number(client('SELECT COUNT(*) FROM creature_template')[0]?.[0]))
  const badQuery = vba(['research', '--config', profile, '--query', '-'], {
    input: '{"kind":"database.rows","table":"account_secrets","columns":["secret"],"filters":[],"offset":0,"limit":1}'
  })
  assert.is(badQuery.code, 2)
  assert.is(JSON.parse(badQuery.stdout).error.code, 'TABLE_NOT_ALLOWED')
  const outage = vba(['research', '--config', profile, '--query', qfile], {
    env: { VBA_TEST_DB_PASSWORD: `${secret}x` }
  })
  assert.is(outage.code, 3)
  for (const r of [good, badQuery, outage]) outputs.push(r.stdout, r.stderr)
  for (const o of outputs) assert.not.ok(o.includes(secret), `password leaked: ${o.slice(0, 200)}`)
})

trust('a closed port is DATABASE_UNAVAILABLE (refused, not waited for)', async () => {
  const file = path.join(tempDir('closed'), 'project.toml')
  writeFileSync(
    file,
    `[database]\nclient = "mysql2"\nhost = "127.0.0.1"\nport = 9\nuser = "x"\ndatabases = ["world"]\nsnapshot_id = "s"\nconnect_timeout_ms = 2000\n[database.allowed_tables]\nworld = ["creature_template"]\n`
  )
  const r = await open(file)
  const f = await refuse(r, { kind: 'database.tables' })
  assert.is(f.code, 'DATABASE_UNAVAILABLE')
  assert.match(JSON.stringify(f), 'ECONNREFUSED')
  await r.close()
  assert.is(left(await loadProfile(path.join(tempDir('none'), 'absent.toml'))()).code, 'CONFIG_NOT_FOUND')
})

trust('a query blocked past time_ms is DATABASE_TIMEOUT (server limit and client timeout)', async () => {
  const bin = findBinaries()
  if (bin === null) throw new Error('mariadb client missing')
  // Another session holds a write lock on the table for 6 s.
  const locker = spawn(bin.client, ['--no-defaults', `--socket=${shared.socket}`, '--user=root', 'world'], {
    stdio: ['pipe', 'ignore', 'ignore']
  })
  locker.stdin.write('LOCK TABLES smart_scripts WRITE; SELECT SLEEP(6); UNLOCK TABLES;\n')
  locker.stdin.end()
  // Wait until the other session really holds the lock (slow machines take longer to start it).
  for (
    let i = 0;
    i < 100 &&
    !client("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(6)%'").some(
      (r) => r[0] === '1'
    );
    i++
  ) {
    await new Promise((r) => setTimeout(r, 50))
  }
  const fast = await open(mariaProfile(shared, '\n[limits]\ntime_ms = 700\n'))
  const f = await refuse(fast, {
    kind: 'database.rows',
    table: 'smart_scripts',
    columns: ['comment'],
    filters: [],
    offset: 0,
    limit: 1
  })
  assert.is(f.code, 'DATABASE_TIMEOUT', JSON.stringify(f))
  assert.equal(locker.exitCode, null, 'it timed out while the lock was still held')
  await fast.close()
  locker.kill()
})

trust.after(async () => {
  await maria.close()
  await lite.close()
})

trust.run()
