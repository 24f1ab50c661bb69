/**
 * The server's configuration and build files are searched like its code (DEFAULT_TEXT_EXTENSIONS):
 * a report about a rate or a module leads to worldserver.conf.dist or a CMakeLists.txt, where a
 * search had said no_hits_complete without reading them.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openSnapshot } from '../../src/adapters/git/snapshot.js'
import { answerAll } from '../helpers/snapshot-answers.js'
import { git } from '../helpers/git-repo.js'
import { tempDir } from '../helpers/fs.js'

const files = suite('configuration and build files')

files('worldserver.conf.dist and CMakeLists.txt are searched; a README is not', async () => {
  const dir = tempDir('vba-config-files')
  const put = (p: string, text: string): void => {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    writeFileSync(path.join(dir, p), text)
  }
  git(dir, 'init', '-q')
  put('src/server/apps/worldserver/worldserver.conf.dist', '# Rate.XP.Kill\nRate.XP.Kill = 1\n')
  put('src/server/scripts/CMakeLists.txt', 'set(SCRIPTS MammothTrap.cpp)\n')
  put('src/server/scripts/MammothTrap.cpp', 'void MammothTrap() {}\n')
  put('docs/README.md', 'Rate.XP.Kill and MammothTrap\n')
  git(dir, 'add', '.')
  git(dir, 'commit', '-q', '-m', 'core')
  const snap = await openSnapshot(dir, git(dir, 'rev-parse', 'HEAD'))
  try {
    const [rate, trap] = (
      await answerAll(snap, [
        { kind: 'source.search', text: 'Rate.XP.Kill' },
        { kind: 'source.search', text: 'MammothTrap' }
      ])
    ).map((a) => JSON.parse(a) as { result: { hits: Array<{ path: string; line: number }>; result: string } })
    assert.equal(
      rate?.result.hits.map((h) => `${h.path}:${h.line}`),
      ['src/server/apps/worldserver/worldserver.conf.dist:1', 'src/server/apps/worldserver/worldserver.conf.dist:2']
    )
    assert.equal(
      trap?.result.hits.map((h) => h.path),
      ['src/server/scripts/CMakeLists.txt', 'src/server/scripts/MammothTrap.cpp']
    )
  } finally {
    snap.close()
  }
})

files.run()
