/**
 * Search that says what it missed (issue 30), on a real git repository built for the test: a
 * mixed-case name that exists only in other cases and inside identifiers (`Drakuru`), an upper-case
 * constant (`SPELL_TRESPASSER_A`), a number that also appears inside coordinates and longer numbers
 * (`52307`). The hint counts those lines and names their files without showing them as hits;
 * `ignore_case` and `whole_number` change what is a hit; research that predates the hint (as
 * re-derivation of an older capture runs it) answers without it, byte for byte as before.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openSnapshot, type GitSnapshot } from '../../src/adapters/git/snapshot.js'
import { DEFAULT_LIMITS } from '../../src/domain/limits.js'
import { DEFAULT_TEXT_EXTENSIONS } from '../../src/domain/source-paths.js'
import { decodeQuery, type SourceQuery } from '../../src/domain/query.js'
import { DEFAULT_ANALYSIS } from '../../src/research/source/open.js'
import { runSourceQuery } from '../../src/research/source/run.js'
import { captureView, viewLines } from '../../src/projections/capture-text.js'
import { requestText } from '../../src/projections/request-text.js'
import type { Capture } from '../../src/events/capture.js'
import { git } from '../helpers/git-repo.js'
import { tempDir } from '../helpers/fs.js'

const FILES: Record<string, string> = {
  // a folder whose only file no search reads (not a text extension)
  'data/dbc/Spell.dbc': 'Drakuru\n',
  'src/server/scripts/Northrend/zone_zuldrak.cpp': [
    'enum Drakuru',
    '{',
    '    NPC_DRAKURU = 28503,',
    '};',
    'class npc_overlord_drakuru_betrayal : public CreatureScript',
    '{',
    '};',
    'void AddSC_zuldrak() { new npc_overlord_drakuru_betrayal(); }',
    ''
  ].join('\n'),
  'src/server/scripts/Northrend/zone_icecrown.cpp': [
    'enum Spells',
    '{',
    '    SPELL_TRESPASSER_A = 54028,',
    '    SPELL_TRESPASSER_H = 54029,',
    '    SPELL_KNOCKBACK = 52307,',
    '};',
    ''
  ].join('\n'),
  'src/server/game/Battlefield/BattlefieldWG.h': [
    'float const WGPoints[] = { 4423.430664f, 2822.762939f, 436.283142f, 6.2052307f };',
    'uint32 const Crc[] = { 1523070, 7 };',
    ''
  ].join('\n')
}

let snap: GitSnapshot
const setup = async (): Promise<void> => {
  const dir = tempDir('vba-missed')
  git(dir, 'init', '-q')
  for (const [p, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
    writeFileSync(path.join(dir, p), text)
  }
  git(dir, 'add', '.')
  git(dir, 'commit', '-q', '-m', 'scripts')
  snap = await openSnapshot(dir, git(dir, 'rev-parse', 'HEAD'))
}

/** One query's capture, with the hint (current research) or without it (research before the hint). */
const ask = async (query: unknown, missedMatches = true, emptyScope = missedMatches): Promise<Capture> => {
  const d = decodeQuery(query)
  if (d._tag === 'Left') throw new Error(`not a query: ${JSON.stringify(query)}`)
  return runSourceQuery(
    {
      snap,
      url: 'https://example.org/core.git',
      extensions: DEFAULT_TEXT_EXTENSIONS,
      limits: { ...DEFAULT_LIMITS, time_ms: 600_000 },
      analysis: { ...DEFAULT_ANALYSIS, enabled: true, whole_numbers: missedMatches },
      now: () => 0,
      missedMatches,
      emptyScope
    },
    d.right as SourceQuery
  )
}
const result = (c: Capture): Record<string, unknown> => c.result as Record<string, unknown>
const asRecord = (v: unknown): Record<string, unknown> => (v ?? {}) as Record<string, unknown>
const text = (c: Capture): string => viewLines(captureView(c)).join('\n')
const hitLines = (c: Capture): string[] =>
  ((result(c)['hits'] ?? []) as Array<{ path: string; line: number }>).map((h) => `${h.path}:${h.line}`)

const missed = suite('search that says what it missed')
missed.before(setup)

missed('a mixed-case name found only in other cases: counted with its file, not shown as hits', async () => {
  const c = await ask({ kind: 'source.symbol', symbol: 'Drakuru' })
  assert.equal(hitLines(c), ['src/server/scripts/Northrend/zone_zuldrak.cpp:1'], 'only `enum Drakuru` is the word')
  assert.equal(result(c)['missed'], {
    other_case_lines: 3,
    inside_word_lines: 0,
    file_count: 1,
    files: ['src/server/scripts/Northrend/zone_zuldrak.cpp'],
    complete: true
  })
  assert.match(
    text(c),
    'missed (not hits): "Drakuru" in 3 lines in another case, in 1 file: src/server/scripts/Northrend/zone_zuldrak.cpp; ignore_case: true finds them'
  )
  assert.equal(c.settings['missed_matches'], { below: 3, paths: 5, empty_scope: true }, 'recorded with the capture')
})

missed('source.context of a word with no hits says where it is in other cases (the Trespasser trap)', async () => {
  const c = await ask({ kind: 'source.context', text: 'Trespasser', path_prefix: 'src/' })
  assert.equal(result(c)['hits'], [])
  assert.equal(result(c)['missed'], {
    other_case_lines: 2,
    inside_word_lines: 0,
    file_count: 1,
    files: ['src/server/scripts/Northrend/zone_icecrown.cpp'],
    complete: true
  })
  assert.match(text(c), 'missed (not hits): "Trespasser" in 2 lines in another case, in 1 file:')
})

missed('an upper-case constant asked as a word: the lines it is inside of are counted', async () => {
  const c = await ask({ kind: 'source.symbol', symbol: 'TRESPASSER' })
  assert.equal(hitLines(c), [])
  assert.equal(result(c)['missed'], {
    other_case_lines: 0,
    inside_word_lines: 2,
    file_count: 1,
    files: ['src/server/scripts/Northrend/zone_icecrown.cpp'],
    complete: true
  })
  assert.match(text(c), '"TRESPASSER" in 2 lines inside longer words or numbers, in 1 file')
  // the registration kind says the same of its symbol
  const reg = await ask({ kind: 'source.registration', symbol: 'TRESPASSER' })
  assert.equal((result(reg)['missed'] as Record<string, unknown>)['inside_word_lines'], 2)
})

missed('ignore_case: the other-case lines are hits; a source.files path in another case too', async () => {
  const c = await ask({ kind: 'source.search', text: 'trespasser', ignore_case: true })
  assert.equal(hitLines(c), [
    'src/server/scripts/Northrend/zone_icecrown.cpp:3',
    'src/server/scripts/Northrend/zone_icecrown.cpp:4'
  ])
  assert.is(result(c)['ignore_case'], true)
  assert.is(result(c)['missed'], undefined, 'a literal search in any case misses nothing of the kind')
  assert.match(
    requestText('source.search', { kind: 'source.search', text: 'trespasser', ignore_case: true }),
    'in any case'
  )
  const word = await ask({ kind: 'source.symbol', symbol: 'npc_drakuru', ignore_case: true })
  assert.equal(hitLines(word), ['src/server/scripts/Northrend/zone_zuldrak.cpp:3'])
  const exact = await ask({ kind: 'source.files', text: 'ZONE_ICECROWN' })
  assert.is(result(exact)['match_count'], 0)
  assert.equal(result(exact)['missed'], {
    other_case_paths: 1,
    paths: ['src/server/scripts/Northrend/zone_icecrown.cpp'],
    complete: true
  })
  const any = await ask({ kind: 'source.files', text: 'ZONE_ICECROWN', ignore_case: true })
  assert.is(result(any)['match_count'], 1)
})

missed('whole_number: 52307 no longer matches inside 6.2052307f or 1523070', async () => {
  const literal = await ask({ kind: 'source.search', text: '52307' })
  assert.equal(hitLines(literal), [
    'src/server/game/Battlefield/BattlefieldWG.h:1',
    'src/server/game/Battlefield/BattlefieldWG.h:2',
    'src/server/scripts/Northrend/zone_icecrown.cpp:5'
  ])
  const whole = await ask({ kind: 'source.search', text: '52307', whole_number: true })
  assert.equal(hitLines(whole), ['src/server/scripts/Northrend/zone_icecrown.cpp:5'])
  assert.is(result(whole)['whole_number'], true)
  assert.equal((result(whole)['missed'] as Record<string, unknown>)['inside_word_lines'], 2)
  assert.match(text(whole), 'source.search "52307" (literal) as a whole number')
  // source.context matches a number as a whole number
  const ctx = await ask({ kind: 'source.context', text: '52307' })
  assert.equal(
    ((result(ctx)['hits'] ?? []) as Array<{ path: string; search: number }>)
      .filter((h) => h.search === 0)
      .map((h) => h.path),
    ['src/server/scripts/Northrend/zone_icecrown.cpp']
  )
  assert.is(ctx.settings['whole_numbers'], true)
})

missed(
  'a path_prefix that holds no file: said, with the folders it may have meant (the result alone read as absence)',
  async () => {
    for (const [q, nearest] of [
      [{ kind: 'source.search', text: 'Drakuru', path_prefix: 'scripts/' }, ['src/server/scripts/']],
      [{ kind: 'source.symbol', symbol: 'Drakuru', path_prefix: 'src/Server' }, ['src/server']],
      [{ kind: 'source.search', text: 'Drakuru', path_prefix: 'nowhere/' }, []]
    ] as const) {
      const c = await ask(q)
      assert.is(result(c)['files_scanned'], 0)
      assert.is(result(c)['result'], 'no_hits_complete')
      assert.equal(asRecord(result(c)['missed'])['empty_scope'], { path_prefix: q.path_prefix, nearest })
      assert.match(
        text(c),
        `missed: path_prefix ${JSON.stringify(q.path_prefix)} holds no file at this commit, so nothing was searched`
      )
      assert.match(
        text(c),
        nearest.length === 0 ? 'no folder of the commit holds it' : `folders that hold it: ${nearest[0]}`
      )
    }
    // a scope whose files the extensions leave out was searched as asked: no empty scope either
    const skipped = await ask({ kind: 'source.search', text: 'Drakuru', path_prefix: 'data/' })
    assert.is(result(skipped)['files_scanned'], 0)
    assert.is(asRecord(result(skipped)['missed'])['empty_scope'], undefined)
    // a scope with files and no hits is no empty scope
    const none = await ask({ kind: 'source.search', text: 'zz-nothing-zz', path_prefix: 'src/server/' })
    assert.is(asRecord(result(none)['missed'])['empty_scope'], undefined)
    // research from before it (captures whose settings name no empty_scope) answers as it did
    const before = await ask({ kind: 'source.search', text: 'Drakuru', path_prefix: 'scripts/' }, true, false)
    assert.equal(before.settings['missed_matches'], { below: 3, paths: 5 })
    assert.is(asRecord(result(before)['missed'])['empty_scope'], undefined)
    assert.not.match(text(before), 'holds no file')
  }
)

missed(
  'defaults unchanged: research before the hint answers exactly as it did (no missed, no new settings)',
  async () => {
    for (const q of [
      { kind: 'source.symbol', symbol: 'Drakuru' },
      { kind: 'source.search', text: '52307' },
      { kind: 'source.context', text: '52307' },
      { kind: 'source.files', text: 'ZONE_ICECROWN' }
    ]) {
      const old = await ask(q, false)
      assert.is(result(old)['missed'], undefined, JSON.stringify(q))
      assert.is(old.settings['missed_matches'], undefined)
      assert.is(old.settings['whole_numbers'], undefined)
      assert.not.match(text(old), 'missed')
    }
    const ctx = await ask({ kind: 'source.context', text: '52307' }, false)
    assert.is(
      ((result(ctx)['hits'] ?? []) as Array<{ search: number }>).filter((h) => h.search === 0).length,
      3,
      'the old context matched the digits inside longer numbers'
    )
  }
)

missed.after(() => snap.close())
missed.run()
