/** `mkdir -p` that ends: Node 20's recursive mkdir never returned where a file system answers ENOENT (/proc). */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, statSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { makeDirs, makeDirsSync } from '../../src/adapters/make-dirs.js'
import { tempDir } from '../helpers/fs.js'

const dirs = suite('makeDirs')

dirs('makes every missing directory, leaves existing ones, and two at once both succeed', async () => {
  const root = tempDir('make-dirs')
  const deep = path.join(root, 'a', 'b', 'c')
  await Promise.all([makeDirs(deep), makeDirs(path.join(root, 'a', 'b', 'd'))])
  assert.ok(statSync(deep).isDirectory())
  assert.ok(statSync(path.join(root, 'a', 'b', 'd')).isDirectory())
  await makeDirs(deep)
  makeDirsSync(path.join(root, 'e', 'f'))
  assert.ok(statSync(path.join(root, 'e', 'f')).isDirectory())
  await makeDirs(path.join(root, 'g'), 0o700)
  assert.is(statSync(path.join(root, 'g')).mode & 0o777, 0o700)
})

dirs('a file in the way, or a file system that refuses, is the error as it came, at once', async () => {
  const root = tempDir('make-dirs')
  writeFileSync(path.join(root, 'file'), 'x')
  const under = await makeDirs(path.join(root, 'file', 'sub')).catch((e: NodeJS.ErrnoException) => e.code)
  assert.is(under, 'ENOTDIR')
  if (existsSync('/proc/self')) {
    // Node's own recursive mkdir loops here at full CPU for ever.
    const proc = await makeDirs('/proc/vba-make-dirs/a/b').catch((e: NodeJS.ErrnoException) => e.code)
    assert.is(proc, 'ENOENT')
    assert.throws(() => makeDirsSync('/proc/vba-make-dirs/a'), /ENOENT/)
  }
})

dirs.run()
