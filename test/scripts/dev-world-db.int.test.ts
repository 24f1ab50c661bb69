import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { mysqlFixtureSql } from '../../src/demo/world-fixture.js'
import { findBinaries, sqlClient } from '../../scripts/lib/mariadb-instance.js'
import { mariaWorld } from '../helpers/world.js'
import { repoRoot, tempDir } from '../helpers/fs.js'

const script = path.join(repoRoot(), 'scripts', 'dev-world-db')
const run = (...args: string[]) => spawnSync(script, args, { encoding: 'utf8' })

const dev = suite('scripts/dev-world-db')

dev('restores a dump into a fresh instance with a SELECT-only reader, then stops it', () => {
  const dir = path.join(tempDir('devdb'), 'world')
  const dump = path.join(tempDir('dump'), 'world.sql')
  writeFileSync(dump, mysqlFixtureSql('world').replace(/^CREATE DATABASE.*\n^USE .*\n/m, ''))
  const restored = run('restore', '--dir', dir, '--dump', dump)
  try {
    assert.is(restored.status, 0, restored.stderr)
    const password = readFileSync(path.join(dir, 'reader.local.txt'), 'utf8').trim()
    assert.not.ok(restored.stdout.includes(password), 'the password is not printed')
    const bin = findBinaries()
    if (bin === null) throw new Error('binaries')
    const asReader = sqlClient(bin, path.join(dir, 'sock'))
    assert.is(
      asReader('SELECT COUNT(*) FROM quest_template', { database: 'world', user: 'vba_reader', password }).trim(),
      '3'
    )
    assert.throws(
      () => asReader('UPDATE quest_template SET MinLevel = 1', { database: 'world', user: 'vba_reader', password }),
      /denied/
    )
    const again = run('restore', '--dir', dir, '--dump', dump)
    assert.is(again.status, 2)
    assert.match(again.stderr, 'needs a fresh one')
  } finally {
    assert.is(run('stop', '--dir', dir).status, 0)
  }
  assert.match(run('status', '--dir', dir).stdout, 'not running')
  // started again without --port, it answers where the profile written for it points
  const port = readFileSync(path.join(dir, 'port'), 'utf8').trim()
  const restarted = run('start', '--dir', dir)
  try {
    assert.is(restarted.status, 0, restarted.stderr)
    assert.match(restarted.stdout, `running on 127.0.0.1:${port} `)
  } finally {
    run('stop', '--dir', dir)
  }
})

dev('refuses a port that belongs to another data directory', async () => {
  const { shared } = await mariaWorld()
  const r = run('start', '--dir', path.join(tempDir('devdb2'), 'x'), '--port', String(shared.port))
  assert.is(r.status, 2)
  assert.match(r.stderr, 'refusing to touch it')
})

dev('restore checks its dump before it starts a server; a dump that fails leaves nothing running or half-made', () => {
  const root = tempDir('devdb3')
  const dir = path.join(root, 'world')
  const none = run('restore', '--dir', dir)
  assert.is(none.status, 2)
  assert.match(none.stderr, 'restore needs --dump FILE')
  const missing = run('restore', '--dir', dir, '--dump', path.join(root, 'wrld.sql'))
  assert.is(missing.status, 2)
  assert.match(missing.stderr, 'the dump')
  assert.match(missing.stderr, 'does not exist')
  assert.not.ok(existsSync(path.join(dir, 'data')), 'no server was started for a dump that is not there')
  const folder = run('restore', '--dir', dir, '--dump', root)
  assert.is(folder.status, 2)
  assert.match(folder.stderr, 'is a directory, not a file')

  const broken = path.join(root, 'broken.sql')
  writeFileSync(broken, 'CREATE TABLE t (a INT);\nINSERT INTO t VALUES (1, 2);\n')
  const failed = run('restore', '--dir', dir, '--dump', broken)
  assert.is(failed.status, 2, failed.stderr)
  assert.match(failed.stderr, 'the server was stopped and its data directory removed')
  assert.match(run('status', '--dir', dir).stdout, 'not running')
  // nothing is left to refuse the same command again ("needs a fresh one")
  assert.not.ok(existsSync(path.join(dir, 'data')))
})

dev.run()
