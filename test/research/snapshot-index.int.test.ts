/**
 * The pack reader and the persisted snapshot index against real repositories built here: the
 * fixture core (packed with deltas, a binary, an oversized file, a symlink, a submodule entry and a
 * missing blob) and a generated game-server-like repository (bench/generated-repo.ts; four commits,
 * packed by git gc), also repacked with REF_DELTA bases. Every capture must be byte-identical to the
 * isomorphic-git reference without an index; damaged indexes are reported and rebuilt, never served;
 * racing builders publish one good index.
 */
import { suite } from 'uvu'
import fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import * as assert from 'uvu/assert'
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync
} from 'node:fs'
import * as path from 'node:path'
import { openSnapshot, type SnapshotNotice, type SnapshotOptions } from '../../src/adapters/git/snapshot.js'
import { openObjectReader } from '../../src/adapters/git/object-reader.js'
import { indexDirOf, openIndex } from '../../src/adapters/git/snapshot-index.js'
import { INDEX_VERSION } from '../../src/adapters/git/index-cache.js'
import { chunkDigests, needleHashes, rowBytes } from '../../src/adapters/git/index-format.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import type { ProjectLimits } from '../../src/domain/limits.js'
import { generateRepo } from '../../bench/generated-repo.js'
import { buildTestRepo, git } from '../helpers/git-repo.js'
import { answerAll } from '../helpers/snapshot-answers.js'
import { left, repoRoot, right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

const fixture = buildTestRepo()
const genDir = path.join(tempDir('gen'), 'core.git')
const genCommit = generateRepo(genDir, 300)
const genParent = git(genDir, 'rev-parse', `${genCommit}~1`)
// The same objects repacked with REF_DELTA bases (pack.useDeltaBaseOffset off).
const refDir = path.join(tempDir('gen-ref'), 'core.git')
execFileSync('git', ['clone', '-q', '--bare', '--no-local', genDir, refDir])
execFileSync('git', ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '-q', '--depth=50'], {
  cwd: refDir
})

const GEN_QUERIES: unknown[] = [
  { kind: 'source.search', text: 'AddSC_' },
  { kind: 'source.search', text: 'HandleLoot(' },
  { kind: 'source.search', text: 'SPELL_AURA_MOD_STUN_' },
  { kind: 'source.search', text: 'zz-no-such-text-zz' },
  { kind: 'source.search', text: 'Sp' },
  { kind: 'source.search', text: 'uint32 id)', path_prefix: 'src/game/module_1/' },
  { kind: 'source.symbol', symbol: 'Player' },
  { kind: 'source.symbol', symbol: 'AddSC_generated_script_7' },
  { kind: 'source.registration', symbol: 'GeneratedScript_7' },
  { kind: 'source.schema', text: 'CREATE TABLE' },
  { kind: 'source.files', text: 'file_1' },
  { kind: 'source.read', path: 'src/game/module_0/file_7.cpp', start_line: 1, end_line: 60 },
  { kind: 'source.context', text: 'AddSC_generated_script_7' },
  // In any case: the case-folded filter (and the missed-match hint of few-hit answers) answer these.
  { kind: 'source.search', text: 'addsc_GENERATED_script_7(', ignore_case: true },
  { kind: 'source.symbol', symbol: 'generatedscript_7', ignore_case: true }
]
const FIXTURE_QUERIES: unknown[] = [
  { kind: 'source.search', text: 'Wolpertinger' },
  { kind: 'source.search', text: 'lost' },
  { kind: 'source.symbol', symbol: 'npc_wild_wolpertingerAI' },
  { kind: 'source.registration', symbol: 'npc_wild_wolpertingerAI' },
  { kind: 'source.schema', text: 'CREATE' },
  { kind: 'source.files', text: 'World' },
  { kind: 'source.read', path: 'src/server/game/Long.cpp', start_line: 100, end_line: 300 },
  { kind: 'source.read', path: 'src/server/game/icon.cpp', start_line: 1, end_line: 2 },
  { kind: 'source.read', path: 'src/server/game/Huge.cpp', start_line: 1, end_line: 2 },
  { kind: 'source.read', path: 'src/server/game/Lost.cpp', start_line: 1, end_line: 2 },
  { kind: 'source.read', path: 'src/server/scripts/World/link_to_script.cpp', start_line: 1, end_line: 2 },
  { kind: 'source.context', text: '23487', path_prefix: 'src/server/scripts/' }
]
const SMALL: Partial<ProjectLimits> = { max_matches: 7, max_search_bytes: 400_000, max_file_bytes: 20_000 }

const notices = (): { list: SnapshotNotice[]; options: (root: string) => SnapshotOptions } => {
  const list: SnapshotNotice[] = []
  return { list, options: (root) => ({ index: root, onNotice: (n) => list.push(n) }) }
}
const answers = async (
  dir: string,
  commit: string,
  options: SnapshotOptions,
  queries: unknown[],
  limits: Partial<ProjectLimits> = {}
): Promise<string[]> => {
  const snap = await openSnapshot(dir, commit, options)
  try {
    await snap.entries() // as the source research opens it: listing (and index) before any query
    return await answerAll(snap, queries, limits)
  } finally {
    snap.close()
  }
}
const reference = new Map<string, string[]>()
const referenceOf = async (
  dir: string,
  commit: string,
  queries: unknown[],
  limits: Partial<ProjectLimits> = {}
): Promise<string[]> => {
  const key = `${dir}|${commit}|${JSON.stringify(limits)}|${queries.length}`
  let r = reference.get(key)
  if (r === undefined) {
    r = await answers(dir, commit, { reader: 'isomorphic-git' }, queries, limits)
    reference.set(key, r)
  }
  return r
}
const codes = (list: readonly SnapshotNotice[]): string[] => list.map((n) => n.code)

// ---------------------------------------------------------------------------------------------
const reader = suite('pack reader')

const allObjects = (dir: string): Map<string, { type: string; content: Buffer }> => {
  const out = execFileSync('git', ['cat-file', '--batch-all-objects', '--batch'], { cwd: dir, maxBuffer: 1 << 30 })
  const objects = new Map<string, { type: string; content: Buffer }>()
  let at = 0
  while (at < out.length) {
    const nl = out.indexOf(10, at)
    const [oid, type, size] = out.toString('latin1', at, nl).split(' ')
    const n = Number(size)
    objects.set(oid ?? '', { type: type ?? '', content: out.subarray(nl + 1, nl + 1 + n) })
    at = nl + 1 + n + 1
  }
  return objects
}

reader('reads every object of OFS_DELTA and REF_DELTA packs and loose objects exactly as git does', () => {
  for (const dir of [genDir, refDir, path.join(fixture.dir, '.git'), fixture.bare]) {
    const expected = allObjects(dir)
    assert.ok(expected.size > 50, `${dir} has objects`)
    for (const cacheBytes of [64 << 20, 0]) {
      const r = openObjectReader(dir, { cacheBytes })
      for (const [oid, o] of expected) {
        const got = r.read(oid)
        assert.ok(got !== null, `${oid} found in ${dir}`)
        assert.is(got.type, o.type)
        assert.ok(got.content.equals(o.content), `${oid} (${o.type}) has git's bytes`)
      }
      assert.is(r.read('f'.repeat(40)), null)
      r.close()
    }
  }
  const packs = readdirSync(path.join(refDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack'))
  const verify = execFileSync('git', ['verify-pack', '-v', path.join(refDir, 'objects', 'pack', packs[0] ?? '')], {
    encoding: 'utf8',
    maxBuffer: 1 << 28
  })
  assert.ok(/chain length = [1-9]/.test(verify), 'the REF_DELTA pack has delta chains')
})

reader('a damaged pack never yields wrong bytes: each object is either exact or refused', () => {
  const dir = path.join(tempDir('damaged-pack'), 'core.git')
  cpSync(genDir, dir, { recursive: true })
  const packDir = path.join(dir, 'objects', 'pack')
  const pack = path.join(packDir, readdirSync(packDir).find((f) => f.endsWith('.pack')) ?? '')
  const bytes = readFileSync(pack)
  for (let i = 1; i < 40; i++) {
    const at = Math.floor((bytes.length * i) / 41)
    bytes[at] = (bytes[at] ?? 0) ^ 0x55
  }
  writeFileSync(pack, bytes)
  const expected = allObjects(genDir)
  const r = openObjectReader(dir)
  let refused = 0
  for (const [oid, o] of expected) {
    try {
      const got = r.read(oid)
      assert.ok(got?.content.equals(o.content), `${oid} is exact when served`)
    } catch (e) {
      assert.match(String((e as { code?: string }).code), /OBJECT_CORRUPT|READ_ERROR/)
      refused++
    }
  }
  assert.ok(refused > 0, 'the damage was noticed')
})

reader.run()

// ---------------------------------------------------------------------------------------------
const equality = suite('captures equal the isomorphic-git reference')

const modes = async (
  dir: string,
  commit: string,
  queries: unknown[],
  limits: Partial<ProjectLimits>
): Promise<void> => {
  const ref = await referenceOf(dir, commit, queries, limits)
  assert.ok(
    ref.some((a) => a.startsWith('{')),
    'the reference answered'
  )
  assert.equal(await answers(dir, commit, {}, queries, limits), ref, 'pack reader, no index')
  assert.equal(
    await answers(dir, commit, { objectCacheBytes: 0, blobCacheBytes: 0 }, queries, limits),
    ref,
    'pack reader without caches'
  )
  const root = tempDir('index-root')
  const first = notices()
  assert.equal(
    await answers(dir, commit, first.options(root), queries, limits),
    ref,
    'index, first process (builds it)'
  )
  assert.equal(codes(first.list), ['SOURCE_INDEX_BUILT'])
  const later = notices()
  const snap = await openSnapshot(dir, commit, later.options(root))
  assert.equal(await answerAll(snap, queries, limits), ref, 'index, later process')
  assert.equal(await answerAll(snap, queries, limits), ref, 'index, warm session (re-reads)')
  snap.close()
  assert.equal(codes(later.list), [], 'a good index is used without a word')
}

equality('generated repository: every source kind, default and small limits', async () => {
  await modes(genDir, genCommit, GEN_QUERIES, {})
  await modes(genDir, genCommit, GEN_QUERIES, SMALL)
})

equality('generated repository with REF_DELTA bases, and an older commit', async () => {
  await modes(refDir, genCommit, GEN_QUERIES.slice(0, 4), {})
  await modes(genDir, genParent, GEN_QUERIES.slice(0, 4), {})
})

equality('fixture core: binary, oversized, symlink, submodule and missing blob', async () => {
  await modes(fixture.bare, fixture.commit, FIXTURE_QUERIES, {})
  await modes(fixture.bare, fixture.commit, FIXTURE_QUERIES, SMALL)
  await modes(fixture.dir, fixture.commit, FIXTURE_QUERIES.slice(0, 3), {})
})

equality('property: any needle, scope and limits give the same capture with the trigram index as without', async () => {
  const paths = git(genDir, 'ls-tree', '-r', '--name-only', genCommit).split('\n').filter(Boolean)
  const texts = paths
    .slice(0, 40)
    .map((p) => execFileSync('git', ['cat-file', 'blob', `${genCommit}:${p}`], { cwd: genDir }))
  const root = tempDir('index-prop')
  const indexed = await openSnapshot(genDir, genCommit, { index: root })
  const direct = await openSnapshot(genDir, genCommit, { blobCacheBytes: 64 << 20 })
  // Needles cut from real files (so most have hits, at any offset and length, across line ends),
  // or arbitrary text (mostly none), in every query kind that scans, with random scope and limits.
  const cut = fc
    .tuple(fc.nat({ max: texts.length - 1 }), fc.nat(), fc.integer({ min: 1, max: 40 }))
    .map(([f, at, n]) => {
      const t = texts[f] as Buffer
      const start = at % Math.max(1, t.length - n)
      return t.toString('latin1', start, start + n)
    })
  const needle = fc.oneof(
    cut,
    cut,
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.constantFrom('ü', '\r\n', 'Handle', 'AddSC_generated_script_')
  )
  const query = fc
    .tuple(
      fc.constantFrom('source.search', 'source.symbol', 'source.registration', 'source.context'),
      needle,
      fc.option(fc.constantFrom('src/', 'src/game/module_1/', 'src/game/module_2/file_2'), { nil: undefined })
    )
    .map(([kind, text, prefix]) => {
      const word = text.replace(/[^A-Za-z0-9_]/g, '').replace(/^[0-9]+/, '') || 'Player'
      const base = kind === 'source.search' || kind === 'source.context' ? { kind, text } : { kind, symbol: word }
      return prefix === undefined ? base : { ...base, path_prefix: prefix }
    })
    .chain((q) => fc.constantFrom(q, { ...q, ignore_case: true }))
  const limits = fc.record({
    max_matches: fc.integer({ min: 1, max: 300 }),
    max_search_bytes: fc.integer({ min: 10_000, max: 10_000_000 }),
    max_file_bytes: fc.integer({ min: 5_000, max: 100_000 })
  })
  await fc.assert(
    fc.asyncProperty(fc.array(query, { minLength: 1, maxLength: 3 }), limits, async (queries, l) => {
      assert.equal(await answerAll(indexed, queries, l), await answerAll(direct, queries, l))
    }),
    fcOptions(150)
  )
  indexed.close()
  direct.close()
})

equality.run()

// ---------------------------------------------------------------------------------------------
const damage = suite('a damaged index is reported and rebuilt, never served')

const built = async (): Promise<string> => {
  const root = tempDir('index-root')
  await answers(genDir, genCommit, { index: root }, [])
  assert.ok(openIndex(root, genCommit) !== null)
  return root
}
const fileOf = (root: string, name: string): string => path.join(indexDirOf(root, genCommit), name)
const flip = (file: string, at: number): void => {
  const b = readFileSync(file)
  b[at] = (b[at] ?? 0) ^ 0x01
  writeFileSync(file, b)
}
/** Where the bytes of the blob of `p` are in blobs.dat. */
const blobOffset = (root: string, p: string): number => {
  const oid = git(genDir, 'rev-parse', `${genCommit}:${p}`)
  const text = readFileSync(fileOf(root, 'index.json'), 'utf8')
  const row = (JSON.parse(text.slice(text.indexOf('\n') + 1)) as { blobs: Record<string, number[]> }).blobs[oid]
  return (row?.[2] ?? 0) + 40
}
/** Where the row that the first trigram of `needle` names in the first class of filters is (a query for it reads it). */
const rowOffset = (root: string, needle: string): number => {
  const text = readFileSync(fileOf(root, 'index.json'), 'utf8')
  const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as { filter_classes: number[][] }
  const [log = 0, count = 0, offset = 0] = body.filter_classes[0] ?? []
  return offset + ((needleHashes(Buffer.from(needle))?.[0] ?? 0) >>> (32 - log)) * rowBytes(count)
}
const HIT = 'src/game/module_0/file_7.cpp' // holds AddSC_generated_script_7
const QUERIES = [GEN_QUERIES[0], GEN_QUERIES[7], GEN_QUERIES[11]]

const damaged = async (
  name: string,
  harm: (root: string) => void,
  expected: string[],
  detail?: string
): Promise<void> => {
  const root = await built()
  harm(root)
  const ref = await referenceOf(genDir, genCommit, QUERIES)
  const first = notices()
  assert.equal(await answers(genDir, genCommit, first.options(root), QUERIES), ref, `${name}: answers`)
  assert.equal(codes(first.list), expected, `${name}: notices`)
  assert.match(first.list[0]?.message ?? '', 'damaged', name)
  if (detail !== undefined) assert.match(first.list[0]?.message ?? '', detail, name)
  const again = notices()
  assert.equal(await answers(genDir, genCommit, again.options(root), QUERIES), ref, `${name}: after`)
  assert.ok(
    codes(again.list).every((c) => c === 'SOURCE_INDEX_BUILT'),
    `${name}: the next process finds a good index`
  )
  const good = openIndex(root, genCommit)
  assert.ok(good !== null && !('reason' in good), `${name}: rebuilt`)
  assert.equal(
    readdirSync(path.join(root, 'snapshots')).filter((f) => f.startsWith('.')),
    [],
    `${name}: nothing left behind`
  )
}

damage('a flipped byte in a blob that a query reads: detected by its git id, answered from git', async () => {
  await damaged('blob byte', (root) => flip(fileOf(root, 'blobs.dat'), blobOffset(root, HIT)), ['SOURCE_INDEX_CORRUPT'])
})

damage('truncated blobs.dat, a flipped filter byte, a truncated or altered index.json, altered trees', async () => {
  await damaged('truncated blobs', (root) => truncateSync(fileOf(root, 'blobs.dat'), 1000), [
    'SOURCE_INDEX_CORRUPT',
    'SOURCE_INDEX_BUILT'
  ])
  // Filter chunks are checked when a query first loads them: the session goes on from git.
  await damaged(
    'filter byte',
    (root) => flip(fileOf(root, 'filters.dat'), rowOffset(root, 'AddSC_')),
    ['SOURCE_INDEX_CORRUPT'],
    'filters.dat does not match its digest'
  )
  await damaged('truncated index', (root) => truncateSync(fileOf(root, 'index.json'), 500), [
    'SOURCE_INDEX_CORRUPT',
    'SOURCE_INDEX_BUILT'
  ])
  await damaged('altered index', (root) => flip(fileOf(root, 'index.json'), 300), [
    'SOURCE_INDEX_CORRUPT',
    'SOURCE_INDEX_BUILT'
  ])
  await damaged(
    'tree byte',
    (root) => flip(fileOf(root, 'trees.dat'), 30),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'trees.dat does not match its digest'
  )
  await damaged('missing file', (root) => writeFileSync(fileOf(root, 'filters.dat'), ''), [
    'SOURCE_INDEX_CORRUPT',
    'SOURCE_INDEX_BUILT'
  ])
})

/** Rewrites index.json's body with `mutate` and re-seals its digest (a consistent forgery of the file). */
const resealed =
  (mutate: (body: { blobs: Record<string, unknown>; objects: Record<string, unknown>; listing: unknown[] }) => void) =>
  (root: string): void => {
    const text = readFileSync(fileOf(root, 'index.json'), 'utf8')
    const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as {
      blobs: Record<string, unknown>
      objects: Record<string, unknown>
      listing: unknown[]
    }
    mutate(body)
    const json = JSON.stringify(body)
    writeFileSync(fileOf(root, 'index.json'), `${createHash('sha256').update(json).digest('hex')}\n${json}`)
  }

damage('a re-sealed index.json with a malformed row or header is refused by its codec, not trusted', async () => {
  const hit = git(genDir, 'rev-parse', `${genCommit}:${HIT}`)
  await damaged(
    'blob row of strings',
    resealed((b) => {
      b.blobs[hit] = ['1', '2', '3', '4', '5']
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    `blob "${hit}" is malformed`
  )
  await damaged(
    'short blob row',
    resealed((b) => {
      b.blobs[hit] = [1, 2]
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'is malformed'
  )
  await damaged(
    'object row of another type',
    resealed((b) => {
      const first = Object.keys(b.objects)[0] as string
      b.objects[first] = ['blob', 0, 10]
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'object'
  )
  await damaged(
    'listing row of numbers',
    resealed((b) => {
      b.listing[3] = [1, 2, 3]
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'its listing is malformed'
  )
  await damaged(
    'blobs not an object',
    resealed((b) => {
      ;(b as { blobs: unknown }).blobs = 'none'
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'not an index of this commit'
  )
})

damage('an index of the previous version is not read: this version builds its own beside it', async () => {
  const root = await built()
  // The index moved under the previous version's name, its filters zeroed: read, it would hide every file.
  const old = path.join(root, 'snapshots', `v${INDEX_VERSION - 1}`)
  cpSync(path.join(root, 'snapshots', `v${INDEX_VERSION}`), old, { recursive: true })
  rmSync(path.join(root, 'snapshots', `v${INDEX_VERSION}`), { recursive: true })
  const filters = path.join(old, genCommit, 'filters.dat')
  writeFileSync(filters, Buffer.alloc(readFileSync(filters).length))
  const n = notices()
  assert.equal(
    await answers(genDir, genCommit, n.options(root), QUERIES),
    await referenceOf(genDir, genCommit, QUERIES)
  )
  assert.equal(codes(n.list), ['SOURCE_INDEX_BUILT'])
  assert.ok(existsSync(indexDirOf(root, genCommit)))
})

damage("another commit's index under this commit's name is refused", async () => {
  const root = tempDir('index-root')
  await answers(genDir, genParent, { index: root }, [])
  mkdirSync(path.dirname(indexDirOf(root, genCommit)), { recursive: true })
  cpSync(indexDirOf(root, genParent), indexDirOf(root, genCommit), { recursive: true })
  const n = notices()
  assert.equal(
    await answers(genDir, genCommit, n.options(root), QUERIES),
    await referenceOf(genDir, genCommit, QUERIES)
  )
  assert.equal(codes(n.list), ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'])
  assert.match(n.list[0]?.message ?? '', 'not an index of this commit')
})

damage('blobs.dat rewritten in place during a session: the next scan checks every blob again', async () => {
  const root = await built()
  const ref = await referenceOf(genDir, genCommit, QUERIES)
  const n = notices()
  // No blob cache: every read goes to blobs.dat (a cached blob would be served from memory, checked).
  const snap = await openSnapshot(genDir, genCommit, { ...n.options(root), blobCacheBytes: 0 })
  assert.equal(await answerAll(snap, QUERIES, {}), ref)
  flip(fileOf(root, 'blobs.dat'), blobOffset(root, HIT))
  assert.equal(await answerAll(snap, QUERIES, {}), ref, 'the re-read is not trusted')
  assert.equal(codes(n.list), ['SOURCE_INDEX_CORRUPT'])
  assert.equal(await answerAll(snap, QUERIES, {}), ref, 'the rest of the session reads git')
  snap.close()
  assert.is(existsSync(indexDirOf(root, genCommit)), false, 'the damaged index is gone')
})

damage(
  'blobs.dat rewritten in place during a session: a read of one file (source.read) is answered from git, never from the damaged bytes',
  async () => {
    const root = await built()
    const read = [{ kind: 'source.read', path: HIT, start_line: 1, end_line: 400 }]
    const ref = await referenceOf(genDir, genCommit, read)
    const n = notices()
    const snap = await openSnapshot(genDir, genCommit, { ...n.options(root), blobCacheBytes: 0 })
    assert.equal(await answerAll(snap, read, {}), ref, 'the first read verifies the blob')
    flip(fileOf(root, 'blobs.dat'), blobOffset(root, HIT))
    assert.equal(
      await answerAll(snap, read, {}),
      ref,
      'the read after the write is checked again, and the damaged bytes are not served'
    )
    assert.equal(codes(n.list), ['SOURCE_INDEX_CORRUPT'])
    snap.close()
  }
)

damage('filters.dat rewritten in place during a session: no file is skipped any more, the index goes', async () => {
  const root = await built()
  const ref = await referenceOf(genDir, genCommit, QUERIES)
  const n = notices()
  const snap = await openSnapshot(genDir, genCommit, n.options(root))
  assert.equal(await answerAll(snap, QUERIES, {}), ref)
  // Zero every filter byte: trusted, they would hide every file from every search.
  writeFileSync(fileOf(root, 'filters.dat'), Buffer.alloc(readFileSync(fileOf(root, 'filters.dat')).length))
  assert.equal(await answerAll(snap, QUERIES, {}), ref)
  assert.equal(codes(n.list), ['SOURCE_INDEX_CORRUPT'])
  assert.match(n.list[0]?.message ?? '', 'a filter file was written while in use')
  assert.equal(await answerAll(snap, QUERIES, {}), ref)
  snap.close()
  assert.is(existsSync(indexDirOf(root, genCommit)), false)
})

damage('folded.dat damaged: found on its first use (a search in any case), answered from git, rebuilt', async () => {
  // QUERIES' symbol search has fewer than 3 hits: its missed-match hint is the first use of folded.dat.
  await damaged(
    'folded byte',
    (root) => flip(fileOf(root, 'folded.dat'), rowOffset(root, 'addsc_generated_script_7')),
    ['SOURCE_INDEX_CORRUPT'],
    'folded.dat does not match its digest'
  )
  await damaged(
    'truncated folded',
    (root) => truncateSync(fileOf(root, 'folded.dat'), 1000),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'folded.dat does not match its digest'
  )
  await damaged(
    'missing folded',
    (root) => unlinkSync(fileOf(root, 'folded.dat')),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'a data file cannot be read (ENOENT)'
  )
  // A version 2 index (filters not sliced) re-sealed under version 3's name is refused by its header.
  await damaged(
    'version 2 header',
    resealed((b) => {
      const header = b as unknown as Record<string, unknown>
      header['version'] = 2
      delete header['filter_classes']
    }),
    ['SOURCE_INDEX_CORRUPT', 'SOURCE_INDEX_BUILT'],
    'not an index of this commit'
  )
})

damage('folded.dat rewritten in place during a session: no file is skipped any more, the index goes', async () => {
  const root = await built()
  const inAnyCase = [GEN_QUERIES[13], GEN_QUERIES[14]]
  const ref = await referenceOf(genDir, genCommit, inAnyCase)
  const n = notices()
  const snap = await openSnapshot(genDir, genCommit, n.options(root))
  assert.equal(await answerAll(snap, inAnyCase, {}), ref)
  assert.equal(codes(n.list), [], 'folded.dat checked and used')
  // Zero every bit: trusted, the folded filters would hide every file from every search in any case.
  writeFileSync(fileOf(root, 'folded.dat'), Buffer.alloc(readFileSync(fileOf(root, 'folded.dat')).length))
  assert.equal(await answerAll(snap, inAnyCase, {}), ref)
  assert.equal(codes(n.list), ['SOURCE_INDEX_CORRUPT'])
  assert.match(n.list[0]?.message ?? '', 'a filter file was written while in use')
  snap.close()
  assert.is(existsSync(indexDirOf(root, genCommit)), false)
})

damage('an index directory that cannot be written: research reads git and says so', async () => {
  const root = path.join(tempDir('index-file'), 'not-a-dir')
  writeFileSync(root, 'a file where the cache directory should be')
  const n = notices()
  assert.equal(
    await answers(genDir, genCommit, n.options(root), QUERIES),
    await referenceOf(genDir, genCommit, QUERIES)
  )
  assert.equal(codes(n.list), ['SOURCE_INDEX_UNAVAILABLE'])
})

damage.run()

// ---------------------------------------------------------------------------------------------
const race = suite('concurrent builders')

race('four processes build the same index at once: one good index, identical answers', async () => {
  const root = tempDir('index-race')
  const script = path.join(repoRoot(), 'dist', 'test', 'helpers', 'snapshot-process.js')
  // Each builder says `ready` and waits for a line on stdin: all four are released together.
  const readies: Promise<void>[] = []
  const children: ChildProcess[] = []
  const run = (): Promise<{ answers: string[]; notices: string[] }> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [script, genDir, genCommit, root, JSON.stringify(QUERIES)])
      children.push(child)
      let out = ''
      let err = ''
      readies.push(
        new Promise((ready) =>
          child.stderr.on('data', (d) => {
            err += d
            if (err.includes('ready\n')) ready()
          })
        )
      )
      child.stdout.on('data', (d) => {
        out += d
      })
      child.on('close', (code) =>
        code === 0
          ? resolve(JSON.parse(out) as { answers: string[]; notices: string[] })
          : reject(new Error(`builder failed (${code}): ${err}`))
      )
    })
  const running = [run(), run(), run(), run()]
  await Promise.all(readies)
  for (const child of children) child.stdin?.end('go\n')
  const results = await Promise.all(running)
  const ref = await referenceOf(genDir, genCommit, QUERIES)
  for (const r of results) {
    assert.equal(r.answers, ref)
    // A builder the scheduler held back until another had published opens that index (no notice).
    assert.ok(
      r.notices.length === 0 || (r.notices.length === 1 && r.notices[0] === 'SOURCE_INDEX_BUILT'),
      `each built (and published or discarded) its own copy, or opened the published one: ${r.notices.join(', ')}`
    )
  }
  assert.ok(
    results.some((r) => r.notices.includes('SOURCE_INDEX_BUILT')),
    'at least one of the racers built the index'
  )
  assert.equal(readdirSync(path.join(root, 'snapshots')), [`v${INDEX_VERSION}`], 'no build directory left behind')
  assert.equal(readdirSync(path.join(root, 'snapshots', `v${INDEX_VERSION}`)), [genCommit])
  const good = openIndex(root, genCommit)
  assert.ok(good !== null && !('reason' in good))
})

race('a builder killed mid-build leaves a directory that the next build removes', async () => {
  const root = tempDir('index-killed')
  const dead = spawnSync(process.execPath, ['-e', ''])
  const leftover = path.join(root, 'snapshots', `.build-${genCommit}-${dead.pid ?? 0}-0badc0de`)
  mkdirSync(leftover, { recursive: true })
  writeFileSync(path.join(leftover, 'blobs.dat'), 'half written')
  const living = path.join(root, 'snapshots', `.build-${genCommit}-${process.pid}-0badc0de`)
  mkdirSync(living)
  await answers(genDir, genCommit, { index: root }, [])
  assert.is(existsSync(leftover), false, "the dead builder's directory is gone")
  assert.is(existsSync(living), true, "a running builder's directory is left alone")
})

race.run()

// ---------------------------------------------------------------------------------------------
const where = suite('where the index lives')

const profileWith = (extra: string): string => {
  const file = path.join(tempDir('idx-profile'), 'project.toml')
  writeFileSync(
    file,
    `[source]\nrepository = ${JSON.stringify(genDir)}\nurl = "https://example.org/core.git"\ncommit = "${genCommit}"\n${extra}\n`
  )
  return file
}
const ask = async (file: string, env: Record<string, string>): Promise<void> => {
  const r = createProjectResearch(right(await loadProfile(file)()), { openSource: openSourceResearch, env })
  right(await r.query({ kind: 'source.search', text: 'AddSC_' })())
  await r.close()
}

where(
  'on by default in $XDG_CACHE_HOME/vba, else ~/.cache/vba; cache_dir moves it; cache = false turns it off',
  async () => {
    const xdg = tempDir('xdg')
    await ask(profileWith(''), { XDG_CACHE_HOME: xdg, HOME: tempDir('home-unused') })
    assert.ok(existsSync(indexDirOf(path.join(xdg, 'vba'), genCommit)), 'under $XDG_CACHE_HOME/vba')
    const home = tempDir('home')
    await ask(profileWith(''), { XDG_CACHE_HOME: 'relative/ignored', HOME: home })
    assert.ok(
      existsSync(indexDirOf(path.join(home, '.cache', 'vba'), genCommit)),
      'a relative XDG_CACHE_HOME is ignored (XDG base directory spec)'
    )
    const moved = profileWith('cache_dir = "snapshot-indexes"')
    await ask(moved, { XDG_CACHE_HOME: xdg })
    assert.ok(
      existsSync(indexDirOf(path.join(path.dirname(moved), 'snapshot-indexes'), genCommit)),
      'cache_dir, relative to the profile'
    )
    const offHome = tempDir('home-off')
    const offXdg = tempDir('xdg-off')
    await ask(profileWith('cache = false'), { XDG_CACHE_HOME: offXdg, HOME: offHome })
    assert.equal(readdirSync(offXdg), [])
    assert.equal(readdirSync(offHome), [])
    const both = left(await loadProfile(profileWith('cache = false\ncache_dir = "x"'))())
    assert.is(both.code, 'CONFIG_INVALID')
    assert.match(both.message, 'cache = false or a cache_dir')
  }
)

where('the CLI says when an index was damaged, on stderr, and answers exactly as before', async () => {
  const xdg = tempDir('xdg-cli')
  const file = profileWith('')
  const q = path.join(tempDir('q'), 'q.json')
  writeFileSync(q, JSON.stringify(QUERIES[0]))
  const first = vba(['research', '--config', file, '--query', q], { env: { XDG_CACHE_HOME: xdg } })
  assert.is(first.code, 0, first.stderr)
  assert.is(first.stderr, '', 'a build is not chatter when stderr is not a terminal')
  flip(fileOf(path.join(xdg, 'vba'), 'filters.dat'), rowOffset(path.join(xdg, 'vba'), 'AddSC_'))
  const second = vba(['research', '--config', file, '--query', q], { env: { XDG_CACHE_HOME: xdg } })
  assert.is(second.code, 0, second.stderr)
  assert.match(
    second.stderr,
    /^vba: SOURCE_INDEX_CORRUPT: the snapshot index of [0-9a-f]{40} is damaged \(filters\.dat does not match its digest\); it is discarded and rebuilt by the next process\n$/
  )
  assert.is(second.stdout, first.stdout)
})

where.run()

// ---------------------------------------------------------------------------------------------
const verbs = suite('vba index build | verify')

/** A forger with write access to the cache: flips filter bits (of filters.dat or folded.dat) and re-seals both digests. */
const forgeFilters = (dir: string, file: 'filters.dat' | 'folded.dat' = 'filters.dat'): void => {
  const filters = readFileSync(path.join(dir, file))
  for (let i = 0; i < filters.length; i += 97) filters[i] = 0
  writeFileSync(path.join(dir, file), filters)
  const text = readFileSync(path.join(dir, 'index.json'), 'utf8')
  const body = JSON.parse(text.slice(text.indexOf('\n') + 1)) as Record<string, unknown>
  body[file === 'filters.dat' ? 'filters_sha256' : 'folded_sha256'] = chunkDigests(filters)
  const json = JSON.stringify(body)
  writeFileSync(path.join(dir, 'index.json'), `${createHash('sha256').update(json).digest('hex')}\n${json}`)
}

verbs('build ahead of time, verify against git; a consistent forgery passes the digests but not verify', async () => {
  const xdg = tempDir('xdg-verbs')
  const env = { XDG_CACHE_HOME: xdg }
  const file = profileWith('')
  const missing = vba(['index', 'verify', '--config', file], { env })
  assert.is(missing.code, 2, missing.stderr)
  assert.match(missing.stderr, 'vba: SOURCE_INDEX_MISSING: there is no snapshot index')
  const first = vba(['index', 'build', '--config', file, '--json'], { env })
  assert.is(first.code, 0, first.stderr)
  const built = JSON.parse(first.stdout) as { commit: string; dir: string; built: boolean; bytes: number }
  assert.equal([built.commit, built.dir, built.built], [genCommit, indexDirOf(path.join(xdg, 'vba'), genCommit), true])
  assert.ok(built.bytes > 6_000_000)
  const again = vba(['index', 'build', '--config', file, '--json'], { env })
  assert.is((JSON.parse(again.stdout) as { built: boolean }).built, false, 'nothing to do the second time')
  const ok = vba(['index', 'verify', '--config', file, '--json'], { env })
  assert.is(ok.code, 0, ok.stderr)
  assert.equal(JSON.parse(ok.stdout), {
    commit: genCommit,
    dir: built.dir,
    valid: true,
    blobs: 300,
    problem_count: 0,
    problems: [],
    removed: false
  })

  forgeFilters(built.dir)
  const n = notices()
  const snap = await openSnapshot(genDir, genCommit, n.options(path.join(xdg, 'vba')))
  await snap.entries()
  snap.close()
  assert.equal(codes(n.list), [], 'the digests cannot tell a consistent forgery')
  const caught = vba(['index', 'verify', '--config', file, '--json'], { env })
  assert.is(caught.code, 1)
  const report = JSON.parse(caught.stdout) as {
    valid: boolean
    problem_count: number
    problems: string[]
    removed: boolean
  }
  assert.is(report.valid, false)
  assert.ok(report.problem_count > 10)
  assert.match(report.problems[0] ?? '', 'its trigram filter differs from the one its bytes give')
  assert.match(caught.stderr, /^vba: SOURCE_INDEX_CORRUPT: src\/game\//)
  assert.is(existsSync(built.dir), false, 'the forged index is removed')
  assert.is(vba(['index', 'build', '--config', file], { env }).code, 0)
  assert.is(vba(['index', 'verify', '--config', file], { env }).code, 0, 'rebuilt and valid')

  // The case-folded filters are re-derived too: a consistent forgery of folded.dat, then damage to it.
  forgeFilters(built.dir, 'folded.dat')
  const folded = vba(['index', 'verify', '--config', file, '--json'], { env })
  assert.is(folded.code, 1)
  assert.match(
    (JSON.parse(folded.stdout) as { problems: string[] }).problems[0] ?? '',
    'its case-folded trigram filter differs from the one its bytes give'
  )
  assert.is(vba(['index', 'build', '--config', file], { env }).code, 0)
  flip(path.join(built.dir, 'folded.dat'), 10)
  const flipped = vba(['index', 'verify', '--config', file, '--json'], { env })
  assert.is(flipped.code, 1)
  assert.equal((JSON.parse(flipped.stdout) as { problems: string[] }).problems, [
    'folded.dat does not match its digest'
  ])
})

verbs('a consistent forgery of the stored listing passes the digests but not verify', async () => {
  const xdg = tempDir('xdg-listing')
  const env = { XDG_CACHE_HOME: xdg }
  const file = profileWith('')
  assert.is(vba(['index', 'build', '--config', file], { env }).code, 0)
  const root = path.join(xdg, 'vba')
  // The file of the first hit of AddSC_ left out of the listing, index.json re-sealed.
  resealed((b) => {
    b.listing = b.listing.filter((row) => (row as string[])[0] !== HIT)
  })(root)
  const n = notices()
  const snap = await openSnapshot(genDir, genCommit, n.options(root))
  assert.ok(
    (await snap.entries()).every((e) => e.path !== HIT),
    'the forged listing is what the digests let through'
  )
  snap.close()
  assert.equal(codes(n.list), [])
  const caught = vba(['index', 'verify', '--config', file, '--json'], { env })
  assert.is(caught.code, 1)
  assert.ok((JSON.parse(caught.stdout) as { problems: string[] }).problems.includes("its listing differs from git's"))
})

verbs('index verbs refuse a profile without an index or without a source', () => {
  const off = vba(['index', 'build', '--config', profileWith('cache = false')])
  assert.is(off.code, 2)
  assert.match(off.stderr, 'vba: CONFIG_INVALID: the profile turns the snapshot index off')
  const none = path.join(tempDir('no-source'), 'project.toml')
  writeFileSync(none, '[limits]\ntime_ms = 1000\n')
  const r = vba(['index', 'verify', '--config', none])
  assert.is(r.code, 2)
  assert.match(r.stderr, 'vba: SOURCE_NOT_CONFIGURED')
})

verbs('prune removes the indexes of other commits unused for DAYS days; an open marks an index used', async () => {
  const xdg = tempDir('xdg-prune')
  const env = { XDG_CACHE_HOME: xdg }
  const root = path.join(xdg, 'vba')
  const parentProfile = path.join(tempDir('prune-profile'), 'project.toml')
  writeFileSync(
    parentProfile,
    `[source]\nrepository = ${JSON.stringify(genDir)}\nurl = "https://example.org/core.git"\ncommit = "${genParent}"\n`
  )
  assert.is(vba(['index', 'build', '--config', profileWith('')], { env }).code, 0)
  assert.is(vba(['index', 'build', '--config', parentProfile], { env }).code, 0)
  const tenDaysAgo = Date.now() / 1000 - 10 * 86_400
  for (const c of [genCommit, genParent])
    utimesSync(path.join(indexDirOf(root, c), 'index.json'), tenDaysAgo, tenDaysAgo)
  // A session opens the current commit's index: that is a use.
  await answers(genDir, genCommit, { index: root }, [])
  const old = vba(['index', 'prune', '--config', parentProfile, '--older-than', '7', '--json'], { env })
  assert.is(old.code, 0, old.stderr)
  assert.equal(
    (JSON.parse(old.stdout) as { removed: unknown[] }).removed,
    [],
    'the used index stays, the bound one is kept'
  )
  const all = vba(['index', 'prune', '--config', profileWith(''), '--older-than', '7', '--json'], { env })
  const report = JSON.parse(all.stdout) as {
    kept: string
    removed: Array<{ commit: string; bytes: number; last_used: string }>
  }
  assert.is(report.kept, genCommit)
  assert.equal(
    report.removed.map((r) => r.commit),
    [genParent]
  )
  assert.ok((report.removed[0]?.bytes ?? 0) > 1_000_000)
  assert.is(existsSync(indexDirOf(root, genParent)), false)
  assert.is(existsSync(indexDirOf(root, genCommit)), true)
  const bad = vba(['index', 'prune', '--config', profileWith(''), '--older-than', 'soon'], { env })
  assert.is(bad.code, 2)
  assert.match(bad.stderr, 'vba: INVALID_ARGUMENT: --older-than takes a number of days')
})

verbs.run()
