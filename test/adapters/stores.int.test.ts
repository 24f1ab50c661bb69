/**
 * openStore and migrateStoreAt, the one place that opens (or migrates) a store from a URL: the scheme picks the implementation; an
 * unknown scheme (or no URL) is STORE_INVALID without loading anything and without showing a
 * password; a PostgreSQL URL opens the SQL store (after migrating it, when asked).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import pg from 'pg'
import * as path from 'node:path'
import { migrateStoreAt, openStore } from '../../src/adapters/stores.js'
import { postgresStore } from '../helpers/stores.js'
import { repoRoot } from '../helpers/fs.js'

const rejects = async (p: Promise<unknown>): Promise<{ code: string; message: string }> => {
  try {
    await p
  } catch (e) {
    return (e as { failure: { code: string; message: string } }).failure
  }
  throw new Error('expected a rejection')
}

const test = suite('openStore')

test('an unknown scheme is STORE_INVALID, and the message never shows the password', async () => {
  const f = await rejects(openStore('redis://admin:s3cret-pw@db.example/cases'))
  assert.is(f.code, 'STORE_INVALID')
  assert.match(f.message, 'unknown store scheme redis')
  assert.not.match(f.message, 's3cret-pw')
  assert.is((await rejects(openStore('not a url'))).code, 'STORE_INVALID')
  assert.is((await rejects(openStore('file:///tmp/cases'))).code, 'STORE_INVALID')
  const m = await rejects(migrateStoreAt('redis://admin:s3cret-pw@db.example/cases'))
  assert.is(m.code, 'STORE_INVALID')
  assert.not.match(m.message, 's3cret-pw')
})

/** The SQL modules (knex, pg, mysql2) a fresh process has loaded after openStore(url). */
const driversLoadedBy = (url: string): string[] => {
  const module = path.join(repoRoot(), 'dist', 'src', 'adapters', 'stores.js')
  const script = `const { openStore } = await import(${JSON.stringify(module)}); await openStore(${JSON.stringify(url)}, { connectTimeoutMs: 2000 }).then((s) => s.close(), () => undefined); const { createRequire } = await import('node:module'); console.log(JSON.stringify([...new Set(Object.keys(createRequire(import.meta.url).cache).flatMap((k) => /node_modules\\/(knex|pg|mysql2)\\//.exec(k)?.[1] ?? []))].sort()))`
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })
  assert.is(r.status, 0, r.stderr)
  return JSON.parse(r.stdout) as string[]
}

test('a refused URL loads no SQL driver; a SQL URL loads knex', () => {
  assert.equal(driversLoadedBy('sqlite:///x'), [])
  assert.ok(driversLoadedBy('postgres://nobody@127.0.0.1:1/nothing').includes('knex'))
})

/** The tables of the database at `url` (as its admin sees them). */
const tablesOf = async (url: string): Promise<string[]> => {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const r = await c.query("select tablename from pg_tables where schemaname = 'public' order by 1")
    return r.rows.map((x: { tablename: string }) => x.tablename)
  } finally {
    await c.end()
  }
}

test('a postgres URL opens the SQL store: outdated until migrated, then open', async () => {
  const t = await postgresStore('openstore')
  try {
    assert.is((await rejects(openStore(t.url, { environment: t.environment }))).code, 'STORE_SCHEMA_OUTDATED')
    // Checking the schema writes nothing (knex's migrate.list() created its two tables).
    assert.equal(await tablesOf(t.url), [])
    const migrated = await migrateStoreAt(t.url, { environment: t.environment })
    assert.is(migrated.applied[migrated.applied.length - 1], migrated.latest)
    const s = await openStore(t.url, { environment: t.environment, migrate: true })
    try {
      assert.is(s.kind, 'sql')
      assert.is(s.dialect, 'postgres')
      assert.equal(await s.list(), [])
    } finally {
      await s.close()
    }
    const again = await openStore(t.url.replace(/^postgres:/, 'postgresql:'), { environment: t.environment })
    await again.close()
  } finally {
    await t.drop()
  }
})

test('a user without privileges on the tables is STORE_INVALID naming the denial, never an internal error', async () => {
  const t = await postgresStore('denied')
  const role = `vba_denied_${process.pid}`
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: t.url })
    await c.connect()
    try {
      await c.query(sql)
    } finally {
      await c.end()
    }
  }
  try {
    await migrateStoreAt(t.url, { environment: t.environment })
    await admin(`create role ${role} login`)
    const u = new URL(t.url)
    u.username = role
    const f = await rejects(openStore(u.toString(), { environment: t.environment }))
    assert.is(f.code, 'STORE_INVALID', f.message)
    assert.match(f.message, 'permission denied')
    assert.match(f.message, 'grant the privileges')
  } finally {
    // The role belongs to the cluster, not the database: dropped first, so the host is left as it was.
    await admin(`drop role if exists ${role}`)
    await t.drop()
  }
})

test.run()
