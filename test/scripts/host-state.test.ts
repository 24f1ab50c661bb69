/**
 * The suite's host check (scripts/lib/host-state.ts): a folder whose mode or owner changed between two
 * readings is named, and so is a MariaDB that could create temporary tables before and not after.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, mkdirSync } from 'node:fs'
import * as path from 'node:path'
import { foldersUp, hostChanges, readHostState, tmpWarnings } from '../../scripts/lib/host-state.js'
import { tempDir } from '../helpers/fs.js'

process.env['VBA_TEST_HOST_MARIADB'] = 'off'

const check = suite('the host check')

check('a folder above the one read loses its sticky bit: named with both modes', async () => {
  const parent = tempDir('host-state')
  const child = path.join(parent, 'run')
  mkdirSync(child)
  chmodSync(parent, 0o1777)
  const before = await readHostState([child])
  assert.ok(
    before.folders.some((f) => f.path === parent && f.mode === '1777'),
    'the parent is read'
  )
  assert.equal(hostChanges(before, await readHostState([child])), [], 'nothing changed: nothing named')
  chmodSync(parent, 0o755)
  const after = await readHostState([child])
  assert.equal(hostChanges(before, after), [`${parent}: mode 1777 before the suite, 0755 after`])
  assert.equal(tmpWarnings(after, parent), [
    `${parent} has mode 0755, not 1777: other users (the machine's MariaDB) cannot write there`
  ])
})

check('foldersUp lists the folder and every folder above it, root last', () => {
  assert.equal(foldersUp('/a/b/c'), ['/a/b/c', '/a/b', '/a', '/'])
})

check('a MariaDB that stops creating temporary tables is named; one unreachable both times is not', () => {
  const at = (mariadb: string) => ({ folders: [], mariadb })
  assert.equal(hostChanges(at('ok'), at('ok')), [])
  assert.equal(hostChanges(at('unreachable (ECONNREFUSED)'), at('unreachable (ECONNREFUSED)')), [])
  assert.equal(hostChanges(at('ok'), at('cannot create a temporary table: Errcode: 13')), [
    "the machine's MariaDB could create temporary tables before the suite and not after: cannot create a temporary table: Errcode: 13"
  ])
})

check.run()
