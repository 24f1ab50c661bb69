import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
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
})

dev('refuses a port that belongs to another data directory', async () => {
  const { shared } = await mariaWorld()
  const r = run('start', '--dir', path.join(tempDir('devdb2'), 'x'), '--port', String(shared.port))
  assert.is(r.status, 2)
  assert.match(r.stderr, 'refusing to touch it')
})

dev.run()
