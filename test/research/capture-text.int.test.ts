/**
 * Captures as the model sees them: real captures of every kind (a real repository, the fixture
 * world in SQLite) rendered compactly. At most half the characters of their JSON, and nothing a
 * marker says is lost.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { captureView, renderCapture, viewLines } from '../../src/projections/capture-text.js'
import type { Capture } from '../../src/events/capture.js'
import { sqliteProfile } from '../helpers/world.js'
import { buildTestRepo } from '../helpers/git-repo.js'
import { repoRoot, right } from '../helpers/fs.js'

const repo = buildTestRepo()
const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
const profile = right(
  await loadProfile(
    sqliteProfile(
      `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n${adapter}\n[limits]\nmax_lines = 60\nmax_matches = 40\n`
    )
  )()
)
const research = createProjectResearch(profile, { openSource: openSourceResearch })
const ask = async (q: unknown): Promise<Capture> => right(await research.query(q)())
const text = (c: Capture): string => renderCapture(c).join('\n')

const compact = suite('compact capture text')

compact(
  'source.context, source.read, source.search and database.rows: at most half the characters of the JSON',
  async () => {
    const captures = [
      await ask({ kind: 'source.context', text: '23487', path_prefix: 'src/server/' }),
      await ask({ kind: 'source.context', text: 'NPC_WILD_WOLPERTINGER' }),
      await ask({ kind: 'source.search', text: 'Wolpertinger' }),
      await ask({ kind: 'source.registration', symbol: 'AddSC_npc_wolpertinger' }),
      await ask({
        kind: 'database.rows',
        table: 'creature_template',
        columns: ['entry', 'name', 'subname', 'npcflag', 'DamageModifier', 'AIName'],
        filters: [{ column: 'entry', operator: 'ge', value: 100000 }],
        offset: 0,
        limit: 40
      })
    ]
    const ratios = captures.map((c) => ({ kind: c.kind, ratio: text(c).length / JSON.stringify(c.result).length }))
    process.stdout.write(`compact/JSON: ${ratios.map((x) => `${x.kind} ${x.ratio.toFixed(2)}`).join(', ')}\n`)
    for (const { kind, ratio } of ratios) assert.ok(ratio <= 0.5, `${kind}: ${ratio.toFixed(2)} of the JSON`)
  }
)

compact(
  'source.read: lines cannot be halved without dropping text, but the compact form is always shorter',
  async () => {
    const read = await ask({ kind: 'source.read', path: 'src/server/game/Long.cpp', start_line: 100, end_line: 200 })
    const ratio = text(read).length / JSON.stringify(read.result).length
    process.stdout.write(`compact/JSON: source.read of 110-character lines ${ratio.toFixed(2)}\n`)
    assert.ok(ratio < 0.9, ratio.toFixed(2))
  }
)

compact('every marker is kept in words: truncation and continuation, limits, skips, paging, completeness', async () => {
  const read = await ask({ kind: 'source.read', path: 'src/server/game/Long.cpp', start_line: 100, end_line: 200 })
  assert.is(read.result['truncated'], true)
  const r = text(read)
  assert.match(r, 'source.read src/server/game/Long.cpp')
  assert.match(r, 'lines 100-159 of 430')
  // one continuation line, not three
  assert.match(r, 'continue with start_line 160 and end_line 200 (line limit 60: 101 lines were asked for)')
  assert.is(r.split('continue with').length, 2)
  assert.not.match(r, 'notice:')
  assert.match(r, '100|     // line 100 of the long file')
  const longLines = text(
    await ask({ kind: 'source.read', path: 'src/server/game/LongLines.cpp', start_line: 1, end_line: 3 })
  )
  assert.match(longLines, /\[line cut at 400 of 2000 characters\]/)
  assert.match(longLines, 'end of file reached')
  const search = await ask({ kind: 'source.search', text: 'Wolpertinger' })
  const s = text(search)
  assert.match(
    s,
    `${String(search.result['hit_count'])} hits in ${String(search.result['files_with_hits'])} of ${String(search.result['files_scanned'])} files scanned`
  )
  const skipped = search.result['skipped'] as { counts: Record<string, number> }
  for (const [reason, n] of Object.entries(skipped.counts)) assert.match(s, `${reason} ${n}`)
  assert.match(s, String(search.result['result']))
  const many = await ask({ kind: 'source.search', text: 'filler' })
  assert.equal(many.result['limits_reached'], ['matches'])
  assert.match(text(many), 'limits reached: matches (the answer is partial)')
  const rows = await ask({
    kind: 'database.rows',
    table: 'creature_template',
    columns: ['entry', 'subname', 'DamageModifier'],
    filters: [{ column: 'entry', operator: 'ge', value: 100000 }],
    offset: 0,
    limit: 5
  })
  const t = text(rows)
  assert.match(t, `has_more: more rows exist; continue with offset ${String(rows.result['next_offset'])}`)
  assert.match(t, 'not all rows matching the filters are in this page')
  assert.match(t, /entry \(INT UNSIGNED\)\|subname \(VARCHAR\(\d+\)\)\|DamageModifier \([A-Z_]*DECIMAL\(\d+,\d+\)\)/)
  assert.match(t, '100000|NULL|1.0000', 'NULL as NULL, DECIMAL exactly as written')
  const capped = await ask({
    kind: 'database.rows',
    table: 'creature_template',
    columns: ['entry'],
    filters: [],
    offset: 0,
    limit: 500
  })
  assert.match(text(capped), 'row limit: 500 rows were requested, at most 200 are returned')
  const ctx = await ask({ kind: 'source.context', text: '23487' })
  const x = text(ctx)
  assert.match(x, String(ctx.result['completeness']))
  assert.match(x, /^>\s*\d+\| {5}NPC_WILD_WOLPERTINGER = 23487,/m)
})

compact('the parts: a guard may shorten the body, never the head or the markers', async () => {
  const read = await ask({ kind: 'source.read', path: 'src/server/game/Long.cpp', start_line: 100, end_line: 200 })
  const t = captureView(read)
  assert.is(t.head.length, 1)
  assert.is(t.items.length, 60)
  assert.equal(t.tail(60), ['continue with start_line 160 and end_line 200 (line limit 60: 101 lines were asked for)'])
  // shown fewer: the continuation is the first line not shown
  assert.equal(t.tail(20), [
    '[prompt limit: lines 120-159 are not shown]; continue with start_line 120 and end_line 200'
  ])
  assert.is(viewLines(t, 20).filter((l) => /^\s*\d+\| /.test(l)).length, 20)
  const rows = captureView(
    await ask({
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry'],
      filters: [{ column: 'entry', operator: 'ge', value: 100000 }],
      offset: 10,
      limit: 30
    })
  )
  assert.is(rows.items.length, 30)
  assert.match(rows.tail(30).join('\n'), 'continue with offset 40')
  assert.equal(rows.tail(12).slice(0, 1), [
    '[prompt limit: rows at offsets 22-39 of this page are not shown]; continue with offset 22'
  ])
  assert.not.match(rows.tail(12).join('\n'), 'offset 40')
  for (const kind of ['database.count', 'database.schema', 'database.tables', 'source.files'] as const) {
    const q =
      kind === 'database.count'
        ? { kind, table: 'smart_scripts', filters: [{ column: 'entryorguid', operator: 'eq', value: 23487 }] }
        : kind === 'database.schema'
          ? { kind, table: 'smart_scripts' }
          : kind === 'database.tables'
            ? { kind }
            : { kind, text: 'wolpertinger' }
    const c = await ask(q)
    assert.ok(text(c).length > 0, kind)
    assert.ok(text(c).startsWith(kind), kind)
  }
})

compact.after(async () => research.close())
compact.run()
