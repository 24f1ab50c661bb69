/**
 * Trusting the snapshot index (issue 23, point 10): an index directory another user owns, or that
 * others may write, is not used (SOURCE_INDEX_UNTRUSTED; research reads git and gives the true
 * answer even when the index's filters were forged consistently); `vba index verify` run by a user
 * who cannot remove a damaged index says so instead of "removed".
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as path from 'node:path'
import { openSnapshot, type SnapshotNotice } from '../../src/adapters/git/snapshot.js'
import { INDEX_VERSION, indexDirOf } from '../../src/adapters/git/index-cache.js'
import { chunkDigests } from '../../src/adapters/git/index-format.js'
import { generateRepo } from '../../bench/generated-repo.js'
import { answerAll } from '../helpers/snapshot-answers.js'
import { tempDir } from '../helpers/fs.js'
import { VBA_BIN } from '../helpers/cli.js'

// Everything this file builds lives under one private folder it owns: the "another user" case opens
// that folder (never its parents) to other users, and asserts first that its parents let them pass.
const privateRoot = tempDir('trust')
const genDir = path.join(privateRoot, 'core.git')
const genCommit = generateRepo(genDir, 120)
// Text in many files: a forged filter that zeroes bits hides some of them from a search.
const QUERIES: unknown[] = [
  { kind: 'source.search', text: 'AddSC_' },
  { kind: 'source.search', text: 'uint32 id)' }
]

/** A forger with write access to the cache: clears filter bits and re-seals both digests. */
const forgeFilters = (dir: string): void => {
  const filters = readFileSync(path.join(dir, 'filters.dat'))
  filters.fill(0)
  writeFileSync(path.join(dir, 'filters.dat'), filters)
  const text = readFileSync(path.join(dir, 'index.json'), 'utf8')
  const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as Record<string, unknown>
  body['filters_sha256'] = chunkDigests(filters)
  const json = JSON.stringify(body)
  writeFileSync(path.join(dir, 'index.json'), `${createHash('sha256').update(json).digest('hex')}\n${json}`)
}

const answersWith = async (root: string | undefined): Promise<{ answers: string[]; notices: SnapshotNotice[] }> => {
  const notices: SnapshotNotice[] = []
  const snap = await openSnapshot(
    genDir,
    genCommit,
    root === undefined ? {} : { index: root, onNotice: (n) => notices.push(n) }
  )
  try {
    await snap.entries()
    return { answers: await answerAll(snap, QUERIES), notices }
  } finally {
    snap.close()
  }
}

const trust = suite('an index others could write is not trusted')

trust(
  'writable by every user, or owned by another user: SOURCE_INDEX_UNTRUSTED, and the answer comes from git',
  async () => {
    const truth = (await answersWith(undefined)).answers
    const variants: Array<[string, (dir: string) => void]> = [
      ['writable by others', (dir) => chmodSync(dir, 0o777)],
      ['a file writable by others', (dir) => chmodSync(path.join(dir, 'filters.dat'), 0o666)]
    ]
    if (process.getuid?.() === 0) variants.push(['owned by another user', (dir) => chownSync(dir, 65534, 65534)])
    for (const [label, loosen] of variants) {
      const root = tempDir('trust-cache')
      await answersWith(root) // builds the index
      const dir = indexDirOf(root, genCommit)
      forgeFilters(dir)
      const forged = await answersWith(root)
      assert.equal(forged.notices, [], `${label}: the digests cannot tell a consistent forgery`)
      assert.not.equal(forged.answers, truth, `${label}: a trusted forged index hides hits`)
      loosen(dir)
      const r = await answersWith(root)
      assert.equal(
        r.notices.map((n) => n.code),
        ['SOURCE_INDEX_UNTRUSTED'],
        label
      )
      assert.equal(r.answers, truth, `${label}: answered from git`)
      assert.ok(existsSync(dir), `${label}: left for its owner`)
    }
  }
)

trust.run()

// ---------------------------------------------------------------------------------------------
const verify = suite('vba index verify says whether it could remove a damaged index')

verify('a user who may not remove the index is told so (exit 1), and the index stays', () => {
  const cacheHome = path.join(privateRoot, 'xdg')
  const profile = path.join(privateRoot, 'profile', 'project.toml')
  mkdirSync(path.dirname(profile), { recursive: true })
  writeFileSync(
    profile,
    `[source]\nrepository = ${JSON.stringify(genDir)}\nurl = "https://example.org/core.git"\ncommit = "${genCommit}"\n`
  )
  const main = VBA_BIN
  const env = { ...process.env, XDG_CACHE_HOME: cacheHome }
  assert.is(spawnSync(process.execPath, [main, 'index', 'build', '--config', profile], { env }).status, 0)
  const dir = indexDirOf(path.join(cacheHome, 'vba'), genCommit)
  forgeFilters(dir)
  let r: SpawnSyncReturns<string>
  if (process.getuid?.() === 0) {
    // Another user reads what root built (everything on the way readable, nothing writable).
    // Only the private folder is opened up; the folders above it must already let others pass.
    for (let up = path.dirname(privateRoot); ; up = path.dirname(up)) {
      assert.ok((statSync(up).mode & 0o001) !== 0, `${up} must be traversable by other users for this test`)
      if (path.dirname(up) === up) break
    }
    const before = statSync(path.dirname(privateRoot)).mode
    assert.is(spawnSync('chmod', ['-R', 'a+rX', privateRoot]).status, 0)
    assert.is(statSync(path.dirname(privateRoot)).mode, before, 'the parent of the private folder is unchanged')
    r = spawnSync(
      'setpriv',
      [
        '--reuid=65534',
        '--regid=65534',
        '--clear-groups',
        process.execPath,
        main,
        'index',
        'verify',
        '--config',
        profile,
        '--json'
      ],
      { env, encoding: 'utf8' }
    )
  } else {
    chmodSync(path.join(cacheHome, 'vba', 'snapshots', `v${INDEX_VERSION}`), 0o555)
    r = spawnSync(process.execPath, [main, 'index', 'verify', '--config', profile, '--json'], { env, encoding: 'utf8' })
    chmodSync(path.join(cacheHome, 'vba', 'snapshots', `v${INDEX_VERSION}`), 0o755)
  }
  assert.is(r.status, 1, r.stderr)
  const report = JSON.parse(r.stdout) as { valid: boolean; removed: boolean; not_removed?: string }
  assert.is(report.valid, false)
  assert.is(report.removed, false)
  assert.match(report.not_removed ?? '', /EACCES|EPERM/)
  assert.match(r.stderr, 'could NOT be removed')
  assert.not.match(r.stderr, 'was removed')
  assert.ok(existsSync(dir), 'the index is still there')
})

verify.run()
