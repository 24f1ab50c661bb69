/**
 * A snapshot index build checks every blob it reads against its git id, though the check is done
 * by the writer thread for the blobs it stores and by the main thread for the others: a blob whose
 * bytes in the object store are not those of its id stops the build (the objects cannot be read),
 * and no index is published.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { deflateSync } from 'node:zlib'
import { openSnapshot } from '../../src/adapters/git/snapshot.js'
import { indexDirOf } from '../../src/adapters/git/index-cache.js'
import { git } from '../helpers/git-repo.js'
import { tempDir } from '../helpers/fs.js'

/** A repository of loose objects: text files and one binary file. */
const repo = (): { readonly dir: string; readonly commit: string } => {
  const dir = tempDir('build-check')
  git(dir, 'init', '-q')
  for (let i = 0; i < 40; i++)
    writeFileSync(path.join(dir, `file_${i}.cpp`), `// file ${i}\nvoid AddSC_script_${i}() { }\n`.repeat(20 + i))
  writeFileSync(path.join(dir, 'icon.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3]))
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'files')
  return { dir, commit: git(dir, 'rev-parse', 'HEAD') }
}

/** Rewrites the loose object of `file` at the commit as a blob of `bytes` (so it no longer matches its id). */
const forge = (dir: string, file: string, bytes: Buffer): void => {
  const oid = git(dir, 'rev-parse', `HEAD:${file}`)
  const at = path.join(dir, '.git', 'objects', oid.slice(0, 2))
  mkdirSync(at, { recursive: true })
  writeFileSync(
    path.join(at, oid.slice(2)),
    deflateSync(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes])),
    { mode: 0o644 }
  )
}

const build = async (dir: string, commit: string, root: string): Promise<unknown> => {
  const snap = await openSnapshot(path.join(dir, '.git'), commit, { index: root })
  try {
    await snap.entries()
    return null
  } catch (e) {
    return e
  } finally {
    snap.close()
  }
}

const check = suite('an index build checks every blob against its id')

check('a sound repository builds and publishes its index', async () => {
  const { dir, commit } = repo()
  const root = tempDir('build-check-index')
  assert.is(await build(dir, commit, root), null)
  assert.ok(existsSync(indexDirOf(root, commit)))
})

for (const [what, file, bytes] of [
  ['a stored text blob (checked by the writer thread)', 'file_17.cpp', Buffer.from('// forged\nvoid Forged() { }\n')],
  ['a binary blob, not stored (checked by the main thread)', 'icon.png', Buffer.from([0x89, 0x50, 0, 9, 9, 9])]
] as const)
  check(`${what} whose bytes are not its id's stops the build: no index is published`, async () => {
    const { dir, commit } = repo()
    forge(dir, file, bytes)
    const root = tempDir('build-check-index')
    const e = await build(dir, commit, root)
    assert.ok(e instanceof Error, 'the build fails')
    assert.match(e.message, /cannot be read \(object [0-9a-f]{40} does not match its id\)/)
    assert.not.ok(existsSync(indexDirOf(root, commit)), 'no index is published')
  })

check.run()
