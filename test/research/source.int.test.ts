/**
 * Source research against a real repository built by the test (packed, with deltas, a symlink, a
 * submodule entry, a binary file, a missing object, an edited working tree and a moved branch),
 * read only through the library. Lines and hashes are compared with the system git's view.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { createHash } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch, type ProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import type { Capture } from '../../src/events/capture.js'
import { buildTestRepo, FILES, LONG_FILE_LINES, git } from '../helpers/git-repo.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import { limitExceeded } from '../helpers/clock.js'

const repo = buildTestRepo()

const profileFile = (repository: string, commit: string, extra = '', analysis = ''): string => {
  const file = path.join(tempDir('src-profile'), 'project.toml')
  writeFileSync(
    file,
    `[source]\nrepository = ${JSON.stringify(repository)}\nurl = "https://example.org/core.git"\ncommit = "${commit}"\n\n[source_analysis]\nenabled = true\nregistration_prefixes = ["AddSC_"]\n${analysis}\n${extra}`
  )
  return file
}
const open = async (file: string): Promise<ProjectResearch> =>
  createProjectResearch(right(await loadProfile(file)()), { openSource: openSourceResearch })
const r = await open(profileFile(repo.dir, repo.commit))
const ask = async (q: unknown, on: ProjectResearch = r): Promise<Capture> => right(await on.query(q)())
const refuse = async (q: unknown, on: ProjectResearch = r): Promise<string> => left(await on.query(q)()).code
type Res = Record<string, unknown>
const res = (c: Capture): Res => c.result as Res

/** The committed bytes of a path, via the system git (for comparison only). */
const committed = (p: string, commit = repo.commit): Buffer =>
  execFileSync('git', ['cat-file', 'blob', `${commit}:${p}`], { cwd: repo.bare })

// ---------------------------------------------------------------------------------------------
const read = suite('source.read')
const LONG = 'src/server/game/Long.cpp'

read('returns exactly the committed lines, with blob id, SHA-256 and size from the git objects', async () => {
  const c = await ask({ kind: 'source.read', path: LONG, start_line: 195, end_line: 205 })
  const expected = committed(LONG).toString('utf8').split('\n').slice(194, 205)
  assert.equal(
    (res(c)['lines'] as Array<{ line: number; text: string }>).map((l) => l.text),
    expected
  )
  assert.equal(
    (res(c)['lines'] as Array<{ line: number }>).map((l) => l.line),
    Array.from({ length: 11 }, (_, i) => 195 + i)
  )
  const file = c.origin.type === 'git' ? c.origin.files[0] : undefined
  assert.is(file?.blob, git(repo.bare, 'rev-parse', `${repo.commit}:${LONG}`))
  assert.is(file?.sha256, createHash('sha256').update(committed(LONG)).digest('hex'))
  assert.is(file?.size, committed(LONG).length)
  assert.is(c.origin.type === 'git' ? c.origin.commit : '', repo.commit)
  assert.is(res(c)['line_limit_exceeded'], undefined, 'plain shape within the limit')
  assert.is(res(c)['truncated'], false)
  assert.is(res(c)['eof'], false)
})

read('115-215 over the 80-line limit: 115-194, next 195, truncated, incomplete', async () => {
  const c = res(await ask({ kind: 'source.read', path: LONG, start_line: 115, end_line: 215 }))
  assert.is(c['requested_line_count'], 101)
  assert.is(c['line_limit'], 80)
  assert.is(c['line_limit_exceeded'], true)
  assert.is(c['returned_line_count'], 80)
  assert.is(c['returned_start_line'], 115)
  assert.is(c['returned_end_line'], 194)
  assert.is(c['next_start_line'], 195)
  assert.is(c['truncated'], true)
  assert.is(c['requested_range_complete'], false)
  assert.match(String(c['read_notice']), 'read from 195 keeping end_line 215')
})

read('continuation reads a whole file without gaps or overlaps', async () => {
  const seen: number[] = []
  let start = 1
  let calls = 0
  for (;;) {
    const c = res(await ask({ kind: 'source.read', path: LONG, start_line: start, end_line: 10_000 }))
    for (const l of c['lines'] as Array<{ line: number }>) seen.push(l.line)
    calls++
    if (c['next_start_line'] === null) {
      assert.is(c['eof'], true)
      assert.is(c['truncated'], false)
      break
    }
    start = c['next_start_line'] as number
  }
  assert.equal(
    seen,
    Array.from({ length: LONG_FILE_LINES }, (_, i) => i + 1)
  )
  assert.is(calls, Math.ceil(LONG_FILE_LINES / 80))
})

read('EOF: a window reaching the end, and a start beyond it', async () => {
  const end = res(await ask({ kind: 'source.read', path: LONG, start_line: 400, end_line: 480 }))
  assert.is(end['eof'], true)
  assert.is(end['truncated'], false)
  assert.is(end['next_start_line'], null)
  assert.is((end['lines'] as unknown[]).length, 31)
  // A window wholly past the end holds nothing to cite: refused (a recorded refusal in a case, not billed).
  assert.is(await refuse({ kind: 'source.read', path: LONG, start_line: 500, end_line: 510 }), 'SOURCE_LINES_PAST_END')
  const overLimitToEof = res(await ask({ kind: 'source.read', path: LONG, start_line: 380, end_line: 600 }))
  assert.is(overLimitToEof['line_limit_exceeded'], true)
  assert.is(overLimitToEof['requested_range_complete'], true, 'nothing of the range is missing')
  assert.is(overLimitToEof['next_start_line'], null)
})

read('over-long lines are cut and marked with their original length; CRLF is read as lines', async () => {
  const c = res(await ask({ kind: 'source.read', path: 'src/server/game/LongLines.cpp', start_line: 1, end_line: 3 }))
  const lines = c['lines'] as Array<{ text: string; text_truncated?: boolean; length?: number; line: number }>
  assert.is(lines[1]?.text_truncated, true)
  assert.is(lines[1]?.length, 2000)
  assert.is(lines[1]?.text.length, 400)
  assert.is(lines[1]?.line, 2)
  const crlf = res(await ask({ kind: 'source.read', path: 'src/server/game/crlf.cpp', start_line: 1, end_line: 2 }))
  assert.equal(
    (crlf['lines'] as Array<{ text: string }>).map((l) => l.text),
    ['int c = 1;', 'int d = 2; // Wolpertinger']
  )
})

read('refuses unsafe paths, reversed ranges, bad lines, missing files, links and non-text', async () => {
  for (const p of [
    '../etc/passwd',
    '/etc/passwd',
    'src/../../x',
    'src/./game/Long.cpp',
    '.git/config',
    'src/.GIT/x',
    'a//b',
    'src\\game',
    'src/\u0000x',
    'src/\nx',
    '-rf',
    'C:/x'
  ]) {
    assert.is(await refuse({ kind: 'source.read', path: p, start_line: 1, end_line: 2 }), 'PATH_INVALID', p)
  }
  assert.is(await refuse({ kind: 'source.read', path: LONG, start_line: 10, end_line: 5 }), 'QUERY_INVALID')
  for (const start of [0, -3, 1.5, '7', null])
    assert.is(await refuse({ kind: 'source.read', path: LONG, start_line: start, end_line: 9 }), 'QUERY_INVALID')
  assert.is(
    await refuse({ kind: 'source.read', path: 'src/nope.cpp', start_line: 1, end_line: 2 }),
    'SOURCE_FILE_NOT_FOUND'
  )
  assert.is(
    await refuse({
      kind: 'source.read',
      path: 'src/server/scripts/World/link_to_script.cpp',
      start_line: 1,
      end_line: 2
    }),
    'SOURCE_NOT_READABLE'
  )
  assert.is(
    await refuse({ kind: 'source.read', path: 'dep/submodule', start_line: 1, end_line: 2 }),
    'SOURCE_NOT_READABLE'
  )
  assert.is(
    await refuse({ kind: 'source.read', path: 'src/server/game/icon.cpp', start_line: 1, end_line: 2 }),
    'SOURCE_NOT_TEXT'
  )
  assert.is(
    await refuse({ kind: 'source.read', path: repo.missingPath, start_line: 1, end_line: 2 }),
    'SOURCE_OBJECT_MISSING'
  )
  assert.is(
    await refuse({ kind: 'source.read', path: repo.bigPath, start_line: 1, end_line: 2 }),
    'SOURCE_FILE_TOO_LARGE'
  )
  assert.is(await refuse({ kind: 'source.read', path: LONG, start_line: 1, end_line: 2, ref: 'HEAD' }), 'QUERY_INVALID')
})

read.run()

// ---------------------------------------------------------------------------------------------
const search = suite('source.search / symbol / schema / files / registration')

search('literal search: hits with line numbers, skipped files listed, incomplete because of omissions', async () => {
  const c = await ask({ kind: 'source.search', text: 'Wolpertinger' })
  const hits = res(c)['hits'] as Array<{ path: string; line: number; text: string }>
  const expected = git(
    repo.bare,
    'grep',
    '-n',
    '-F',
    'Wolpertinger',
    repo.commit,
    '--',
    '*.cpp',
    '*.h',
    '*.sql',
    '*.py'
  )
    .split('\n')
    .map((l) => l.slice(repo.commit.length + 1))
    .filter((l) => !l.startsWith(repo.bigPath) && !l.startsWith(repo.missingPath))
  assert.equal(
    hits.map((h) => `${h.path}:${h.line}:${h.text}`).sort(),
    expected.map((l) => l.replace(/\r$/, '')).sort()
  )
  const skipped = res(c)['skipped'] as { files: Array<{ path: string; reason: string }> }
  const reasons = Object.fromEntries(skipped.files.map((s) => [s.path, s.reason]))
  assert.is(reasons[repo.missingPath], 'missing_object')
  assert.is(reasons[repo.bigPath], 'too_large')
  assert.is(reasons['src/server/game/icon.cpp'], 'binary')
  assert.is(reasons['src/server/scripts/World/link_to_script.cpp'], 'symlink')
  assert.is(res(c)['complete'], false, 'an oversized and a missing file were not searched')
  assert.is(res(c)['result'], 'hits_partial')
  assert.not.ok(
    hits.some((h) => h.path.endsWith('.txt')),
    'non-text extensions are out of scope'
  )
})

search('a complete search with zero hits says so; a prefix narrows the scope', async () => {
  const none = res(
    await ask({ kind: 'source.search', text: 'NoSuchThingAnywhere', path_prefix: 'src/server/scripts/' })
  )
  assert.is(none['hit_count'], 0)
  assert.is(none['complete'], true)
  assert.is(none['result'], 'no_hits_complete')
  const scoped = res(await ask({ kind: 'source.search', text: '23487', path_prefix: 'src/server/scripts/World/' }))
  assert.equal(
    (scoped['hits'] as Array<{ path: string }>).map((h) => h.path),
    [
      'src/server/scripts/World/npc_wolpertinger.cpp',
      'src/server/scripts/World/spell_brewfest.cpp',
      'src/server/scripts/World/spell_brewfest.cpp'
    ]
  )
  assert.is(await refuse({ kind: 'source.search', text: 'x', path_prefix: '../' }), 'PATH_INVALID')
})

search('symbol search matches whole words only; Python is searched', async () => {
  const words = res(await ask({ kind: 'source.symbol', symbol: 'Wolpertinger', path_prefix: 'src/server/game/' }))
  assert.equal(
    (words['hits'] as Array<{ path: string; line: number }>).map((h) => `${h.path}:${h.line}`),
    ['src/server/game/Wordy.h:1', 'src/server/game/Wordy.h:2', 'src/server/game/crlf.cpp:2']
  )
  assert.is(await refuse({ kind: 'source.symbol', symbol: '23487' }), 'QUERY_INVALID')
  const py = res(await ask({ kind: 'source.symbol', symbol: 'wolpertinger_count' }))
  assert.equal(
    (py['hits'] as Array<{ path: string }>).map((h) => h.path),
    ['tools/extract.py']
  )
})

search('schema search looks in .sql files only', async () => {
  const c = res(await ask({ kind: 'source.schema', text: 'creature_template' }))
  assert.equal(
    (c['hits'] as Array<{ path: string; line: number }>).map((h) => `${h.path}:${h.line}`),
    ['sql/base/world.sql:1', 'sql/base/world.sql:5']
  )
})

search('files by literal substring, including links and submodules as such', async () => {
  const c = res(await ask({ kind: 'source.files', text: 'wolpertinger' }))
  assert.equal(c['files'], [
    {
      path: 'src/server/scripts/World/npc_wolpertinger.cpp',
      kind: 'blob',
      blob: git(repo.bare, 'rev-parse', `${repo.commit}:src/server/scripts/World/npc_wolpertinger.cpp`)
    }
  ])
  const sub = res(await ask({ kind: 'source.files', text: 'submodule' }))
  assert.equal(
    (sub['files'] as Array<{ kind: string }>).map((f) => f.kind),
    ['submodule']
  )
})

search('registration: symbol hits plus the registration functions of their files', async () => {
  const c = res(await ask({ kind: 'source.registration', symbol: 'npc_wild_wolpertingerAI' }))
  const regs = c['registrations'] as Array<{ path: string; name: string; line: number }>
  assert.equal(
    regs.map((x) => `${x.path}:${x.line}:${x.name}`),
    ['src/server/scripts/World/npc_wolpertinger.cpp:18:AddSC_npc_wolpertinger']
  )
})

search('max_files bounds the files a search reports: the search stops at the limit, marked and partial', async () => {
  const two = await open(profileFile(repo.dir, repo.commit, '\n[limits]\nmax_files = 2\n'))
  const all = res(await ask({ kind: 'source.search', text: 'Wolpertinger' }))
  assert.ok((all['files_with_hits'] as number) > 2, 'the fixture has more files with hits')
  for (const q of [
    { kind: 'source.search', text: 'Wolpertinger' },
    { kind: 'source.search', text: '23487' }
  ]) {
    const c = res(await ask(q, two))
    assert.is(c['files_with_hits'], 2, q.kind)
    assert.ok((c['limits_reached'] as string[]).includes('files'), q.kind)
    assert.is(c['complete'], false, q.kind)
    assert.match(String(c['result']), '_partial')
  }
  await two.close()
})

search('limits are marked: matches, and a controlled error for result bytes and time', async () => {
  const small = await open(profileFile(repo.dir, repo.commit, '\n[limits]\nmax_matches = 2\n'))
  const c = res(await ask({ kind: 'source.search', text: 'line' }, small))
  assert.is(c['hit_count'], 2)
  assert.equal(c['limits_reached'], ['matches'])
  assert.is(c['complete'], false)
  const tiny = await open(profileFile(repo.dir, repo.commit, '\n[limits]\nmax_result_bytes = 2000\n'))
  assert.is(await refuse({ kind: 'source.read', path: LONG, start_line: 1, end_line: 80 }, tiny), 'RESULT_TOO_LARGE')
  // The time limit is read from the research's clock: one that passes any limit between two readings.
  const slow = createProjectResearch(right(await loadProfile(profileFile(repo.dir, repo.commit))()), {
    openSource: (p, o) => openSourceResearch(p, { ...o, now: limitExceeded() })
  })
  assert.is(await refuse({ kind: 'source.search', text: 'never-found-zzz' }, slow), 'SOURCE_TIMEOUT')
  assert.is(await refuse({ kind: 'source.context', text: 'never-found-zzz' }, slow), 'SOURCE_TIMEOUT')
  assert.is(await refuse({ kind: 'source.registration', symbol: 'never_found_zzz' }, slow), 'SOURCE_TIMEOUT')
  const standing = createProjectResearch(right(await loadProfile(profileFile(repo.dir, repo.commit))()), {
    openSource: (p, o) => openSourceResearch(p, { ...o, now: () => 0 })
  })
  right(await standing.query({ kind: 'source.search', text: 'never-found-zzz' })())
  await slow.close()
  await standing.close()
})

search.run()

// ---------------------------------------------------------------------------------------------
const context = suite('source.context')

context('follows the assignment alias and the registration, merges windows, links nothing by number', async () => {
  const c = await ask({ kind: 'source.context', text: '23487', path_prefix: 'src/server/scripts/' })
  const r2 = res(c)
  const searches = r2['searches'] as Array<{ term: string; reason: string }>
  assert.equal(
    searches.map((s) => `${s.reason}:${s.term}`),
    [
      'term:23487',
      'assignment:NPC_WILD_WOLPERTINGER',
      'assignment:SPELL_PONY_KEG',
      'registration:AddSC_npc_wolpertinger'
    ]
  )
  assert.ok(r2['limits_reached'] !== undefined)
  const hits = r2['hits'] as Array<{ search: number; path: string; line: number; context_returned: boolean }>
  const numberHits = hits.filter((h) => h.search === 0).map((h) => `${h.path}:${h.line}`)
  assert.equal(numberHits, [
    'src/server/scripts/World/npc_wolpertinger.cpp:5',
    'src/server/scripts/World/spell_brewfest.cpp:3',
    'src/server/scripts/World/spell_brewfest.cpp:4'
  ])
  // the creature and the spell come back as separate hits with their own context
  const blocks = r2['blocks'] as Array<{ path: string; start_line: number; lines: string[] }>
  const creature = blocks.filter((b) => b.path.endsWith('npc_wolpertinger.cpp'))
  const spell = blocks.filter((b) => b.path.endsWith('spell_brewfest.cpp'))
  assert.ok(creature.length >= 1 && spell.length >= 1)
  assert.ok(creature.some((b) => b.lines.includes('    NPC_WILD_WOLPERTINGER = 23487,')))
  assert.ok(spell.some((b) => b.lines.includes('constexpr uint32 SPELL_PONY_KEG = 23487;')))
  assert.not.ok(JSON.stringify(r2).includes('"links"'), 'nothing in the result links the two')
  // windows are merged per file: lines 3 and 4 of spell_brewfest share one block
  for (const p of new Set(blocks.map((b) => b.path))) {
    const bs = blocks.filter((b) => b.path === p)
    for (let i = 1; i < bs.length; i++) {
      const prev = bs[i - 1]
      const cur = bs[i]
      if (prev !== undefined && cur !== undefined)
        assert.ok(cur.start_line > prev.start_line + prev.lines.length, `${p}: blocks overlap or touch`)
    }
  }
  // the loader file is reached by the registration search but its other names are not followed
  assert.ok(hits.some((h) => h.path.endsWith('ScriptLoader.cpp')))
  assert.not.ok(searches.some((s) => s.term === 'AddSC_unrelated_boss'))
  // each file once in the origin, with blob and hash
  const files = c.origin.type === 'git' ? c.origin.files : []
  assert.equal(
    files.map((f) => f.path),
    [...new Set(files.map((f) => f.path))]
  )
  for (const f of files) assert.is(f.sha256, createHash('sha256').update(committed(f.path)).digest('hex'))
  assert.is(r2['completeness'], 'partial_configured_source_context', 'the search limit stopped the chain (4 searches)')
})

context('complete when the bounded chain ran without omissions; limits are named', async () => {
  const c = res(
    await ask({ kind: 'source.context', text: 'SPELL_WOLPERTINGER_NET', path_prefix: 'src/server/scripts/World/' })
  )
  assert.is(c['completeness'], 'complete_configured_source_context')
  assert.equal(c['limits_reached'], [])
  const tight = await open(
    profileFile(repo.dir, repo.commit, '', 'max_files = 1\nmax_blocks = 1\nmax_total_lines = 5\ncontext_lines = 3')
  )
  const t = res(await ask({ kind: 'source.context', text: '23487', path_prefix: 'src/server/scripts/' }, tight))
  assert.is(t['completeness'], 'partial_configured_source_context')
  assert.ok((t['limits_reached'] as string[]).includes('files'), JSON.stringify(t['limits_reached']))
  assert.ok((t['limits_reached'] as string[]).includes('lines'))
  const blocks = t['blocks'] as Array<{ lines: unknown[] }>
  assert.is(blocks.length, 1)
  assert.is(blocks[0]?.lines.length, 5)
  const hits = t['hits'] as Array<{ context_returned: boolean }>
  assert.ok(
    hits.some((h) => !h.context_returned),
    'hits outside the returned windows say so'
  )
})

context(
  'ranks before it cuts: direct hits first, code before data dumps without path_prefix; every hit says why it got no context',
  async () => {
    // the number is in code (two files) and in the SQL dump; with one block the term's first code hit wins
    const tight = await open(profileFile(repo.dir, repo.commit, '', 'max_blocks = 1\ncode_path_prefixes = ["src/"]'))
    const c = res(await ask({ kind: 'source.context', text: '23487' }, tight))
    const blocks = c['blocks'] as Array<{ path: string; start_line: number }>
    assert.equal(
      blocks.map((b) => b.path),
      ['src/server/scripts/World/npc_wolpertinger.cpp']
    )
    const hits = c['hits'] as Array<{
      search: number
      path: string
      line: number
      role: string
      context_returned: boolean
      no_context?: string
    }>
    const term = hits.filter((h) => h.search === 0)
    const firstDump = term.findIndex((h) => !h.path.startsWith('src/'))
    assert.ok(
      firstDump > 0 && term.slice(firstDump).every((h) => !h.path.startsWith('src/')),
      'code hits are found first'
    )
    assert.ok(term.some((h) => h.path === 'sql/base/world.sql'))
    for (const h of hits.filter((x) => !x.context_returned))
      assert.ok(['files', 'blocks', 'lines'].includes(h.no_context ?? ''), JSON.stringify(h))
    assert.ok(hits.some((h) => h.no_context === 'blocks'))
    assert.equal(c['scope'], {
      path_prefix: null,
      extensions: (c['scope'] as { extensions: string[] }).extensions,
      code_first: ['src/']
    })
    // an alias is followed in its own file first; the same name elsewhere is another symbol with its own value
    const roles = new Set(hits.map((h) => h.role))
    assert.ok(roles.has('term') && roles.has('alias'))
    // without code paths, path order: the dump comes first
    const plain = await open(profileFile(repo.dir, repo.commit, '', 'max_blocks = 1\ncode_path_prefixes = []'))
    const p = res(await ask({ kind: 'source.context', text: '23487' }, plain))
    assert.equal(
      (p['blocks'] as Array<{ path: string }>).map((b) => b.path),
      ['sql/base/world.sql']
    )
    await tight.close()
    await plain.close()
  }
)

context('is refused when not enabled in the profile', async () => {
  const file = path.join(tempDir('noctx'), 'p.toml')
  writeFileSync(file, `[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "u"\ncommit = "${repo.commit}"\n`)
  const off = await open(file)
  assert.is(await refuse({ kind: 'source.context', text: '23487' }, off), 'SOURCE_CONTEXT_DISABLED')
})

context.run()

// ---------------------------------------------------------------------------------------------
const binding = suite('commit binding')

binding('the edited working tree, the moved branch and a bare clone change nothing', async () => {
  const brewfest = 'src/server/scripts/World/spell_brewfest.cpp'
  const fromWork = res(await ask({ kind: 'source.read', path: brewfest, start_line: 1, end_line: 20 }))
  assert.equal(
    (fromWork['lines'] as Array<{ text: string }>).map((l) => l.text),
    (FILES[brewfest] ?? '').split('\n').slice(0, -1)
  )
  const bare = await open(profileFile(repo.bare, repo.commit))
  const fromBare = res(await ask({ kind: 'source.read', path: brewfest, start_line: 1, end_line: 20 }, bare))
  assert.equal(fromBare, fromWork)
  const laterHead = git(repo.dir, 'rev-parse', 'main')
  assert.is(laterHead, repo.later, 'the branch did move')
  const script = res(await ask({ kind: 'source.search', text: 'rewritten after the bound commit' }))
  assert.is(script['hit_count'], 0)
})

binding('an unknown commit or a missing repository is SOURCE_UNAVAILABLE (exit 3 from the CLI)', async () => {
  const gone = await open(profileFile(path.join(tempDir('nothing'), 'absent'), repo.commit))
  assert.is(await refuse({ kind: 'source.search', text: 'x' }, gone), 'SOURCE_UNAVAILABLE')
  const wrong = await open(profileFile(repo.dir, 'f'.repeat(40)))
  assert.is(await refuse({ kind: 'source.search', text: 'x' }, wrong), 'SOURCE_UNAVAILABLE')
  const q = path.join(tempDir('q'), 'q.json')
  writeFileSync(q, JSON.stringify({ kind: 'source.search', text: 'x' }))
  const cli = vba(['research', '--config', profileFile(repo.dir, 'f'.repeat(40)), '--query', q])
  assert.is(cli.code, 3)
  assert.is(JSON.parse(cli.stdout).error.code, 'SOURCE_UNAVAILABLE')
  const bad = vba(['research', '--config', profileFile(repo.dir, repo.commit), '--query', '-'], {
    input: '{"kind":"source.read","path":"../../etc/passwd","start_line":1,"end_line":2}'
  })
  assert.is(bad.code, 2)
  assert.is(JSON.parse(bad.stdout).error.code, 'PATH_INVALID')
})

binding('a commit whose tree names .. is a permanent refusal (SOURCE_TREE_UNSAFE, exit 2), not an outage', async () => {
  const dir = path.join(tempDir('unsafe-tree'), 'repo')
  mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q', '.')
  writeFileSync(path.join(dir, 'a.txt'), 'hello\n')
  const blob = git(dir, 'hash-object', '-w', 'a.txt')
  const tree = execFileSync('git', ['mktree'], {
    cwd: dir,
    input: `100644 blob ${blob}\t..\n100644 blob ${blob}\tok.cpp\n`,
    encoding: 'utf8'
  }).trim()
  const commit = git(dir, 'commit-tree', tree, '-m', 'a tree with ..')
  const r = await open(profileFile(dir, commit))
  assert.is(await refuse({ kind: 'source.files', text: 'ok' }, r), 'SOURCE_TREE_UNSAFE')
  const cli = vba(['research', '--config', profileFile(dir, commit), '--query', '-'], {
    input: '{"kind":"source.search","text":"hello"}'
  })
  assert.is(cli.code, 2, cli.stderr)
  assert.is(JSON.parse(cli.stdout).error.code, 'SOURCE_TREE_UNSAFE')
})

binding.run()
