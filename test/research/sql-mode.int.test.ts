/**
 * A private MariaDB started with --sql-mode=NO_BACKSLASH_ESCAPES: there, a value escaped with
 * backslashes (as mysql2 escapes on the client) closes its string literal. The raw driver shows
 * the injection is real on this server; research pins the session's sql_mode and reads nothing
 * outside the allowlist, for the payload and for the whole hostile corpus.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import * as fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import mysql from 'mysql2/promise'
import { startMariaDb, type MariaDbInstance } from '../../scripts/lib/mariadb-instance.js'
import { loadWorld, newReaderPassword, READER_USER, PASSWORD_ENV, mariaProfile } from '../helpers/world.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { HOSTILE, INJECTION, REFUSALS, request } from '../helpers/hostile.js'
import { right, tempDir } from '../helpers/fs.js'

const SECRET = 'never-read-this'
const server: MariaDbInstance = await startMariaDb({
  dir: path.join(tempDir('mariadb-nbe'), 'server'),
  args: ['--sql-mode=NO_BACKSLASH_ESCAPES']
})
process.on('exit', () => {
  try {
    process.kill(server.pid, 'SIGTERM')
  } catch {
    // gone
  }
})
const readerPassword = newReaderPassword()
loadWorld(server.sql, readerPassword)
const shared = { port: server.port, socket: server.socket, dir: server.dir, readerPassword }
const research = createProjectResearch(right(await loadProfile(mariaProfile(shared))()))

const mode = suite('a server in NO_BACKSLASH_ESCAPES mode')

mode("the server really runs in that mode, and the raw driver's escaping is injectable there", async () => {
  assert.match(server.sql('SELECT @@GLOBAL.sql_mode'), 'NO_BACKSLASH_ESCAPES')
  const conn = await mysql.createConnection({
    host: '127.0.0.1',
    port: server.port,
    user: READER_USER,
    password: readerPassword,
    database: 'world'
  })
  try {
    const [rows] = await conn.query('SELECT name, entry FROM creature_template WHERE name = ?', [INJECTION])
    assert.ok(
      JSON.stringify(rows).includes(SECRET),
      'the payload reads account_secrets through a raw mysql2 query (the attack this test guards against)'
    )
  } finally {
    await conn.end()
  }
})

mode(
  'research pins the session mode: the payload in every filter operator reads nothing outside the allowlist',
  async () => {
    for (const operator of ['eq', 'ne', 'lt', 'ge', 'contains', 'in'] as const) {
      const value = operator === 'in' ? [INJECTION, 'x'] : INJECTION
      for (const q of [
        {
          kind: 'database.rows',
          table: 'creature_template',
          columns: ['name', 'entry'],
          filters: [{ column: 'name', operator, value }],
          offset: 0,
          limit: 50
        },
        { kind: 'database.count', table: 'creature_template', filters: [{ column: 'name', operator, value }] }
      ]) {
        const out = await research.query(q)()
        assert.ok(out._tag === 'Right', `${operator}: ${JSON.stringify(out)}`)
        assert.not.ok(JSON.stringify(out).includes(SECRET), `${operator}: read the secret`)
      }
    }
    const eq = right(
      await research.query({
        kind: 'database.rows',
        table: 'creature_template',
        columns: ['name'],
        filters: [{ column: 'name', operator: 'eq', value: INJECTION }],
        offset: 0,
        limit: 5
      })()
    )
    assert.equal(eq.result['rows'], [], 'the payload is compared as a value: no creature has that name')
  }
)

mode(
  'the hostile corpus and generated requests: coded refusals or correct reads, never the secret, nothing changed',
  async () => {
    const checksum = (): string =>
      server.sql('CHECKSUM TABLE creature_template, smart_scripts, account_secrets', { database: 'world' })
    const before = checksum()
    for (const [q, code] of HOSTILE) {
      const out = await research.query(q)()
      assert.is(out._tag === 'Left' ? out.left.code : 'read', code, JSON.stringify(q).slice(0, 120))
    }
    let reads = 0
    await fc.assert(
      fc.asyncProperty(request, async (q) => {
        const out = await research.query(q)()
        if (JSON.stringify(out).includes(SECRET)) return false
        if (out._tag === 'Left') return REFUSALS.has(out.left.code) || out.left.code === 'TABLE_NOT_FOUND'
        reads++
        return true
      }),
      fcOptions(1500)
    )
    assert.ok(reads > 30, `some requests were valid reads (${reads})`)
    assert.is(checksum(), before)
  }
)

mode.after(async () => {
  await research.close()
  await server.stop()
  delete process.env[PASSWORD_ENV]
})
mode.run()
