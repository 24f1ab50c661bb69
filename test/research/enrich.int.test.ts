/**
 * Enrichment that leaves nothing out silently: lookups page through every matching row within
 * max_queries, and what they could not fetch is in the coverage fact with what, how many and why.
 * Against the fixture world in SQLite, recorded in real cases that must verify (the rules check
 * the coverage against the captures behind it).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import { readObject } from '../../src/fp.js'
import { openCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import type { Fact } from '../../src/research/enrich.js'
import { FactsDocument } from '../../src/domain/facts-document.js'
import { factsIndex } from '../../src/projections/prompt-v2/facts-index.js'
import { sqliteProfile } from '../helpers/world.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'

const enrichment = (maxQueries: number): string => `
[enrichment]
max_queries = ${maxQueries}
page_rows = 1

[enrichment.entities.creature]
table = "creature_template"
id_column = "entry"
columns = ["entry", "name", "AIName"]

[[enrichment.relationships]]
relation = "creature_smartai"
from_table = "creature_template"
from_column = "entry"
from_id_column = "entry"
when_column = "AIName"
when_value = "SmartAI"
table = "smart_scripts"
column = "entryorguid"
columns = ["entryorguid", "source_type", "id", "action_type"]
filters = [{ column = "source_type", operator = "eq", value = 0 }]
`

const prepared = async (maxQueries: number): Promise<{ facts: Fact[]; dir: string }> => {
  const profile = right(await loadProfile(sqliteProfile(enrichment(maxQueries)))())
  const research = createProjectResearch(profile)
  const dir = path.join(tempDir('enrich'), 'case')
  right(await initCase({ dir })())
  right(
    await prepareRevision(dir, research, right(enrichmentConfig(profile)), {
      report: 'The wild wolpertinger despawns.',
      entities: [{ type: 'creature', id: 23487 }]
    })()
  )
  await research.close()
  const s = right(await openCase(dir)()).cursor.state
  const doc = JSON.parse(right(await readObject(dir, s.facts ?? { digest: '', size: 0 })()).toString('utf8')) as {
    facts: Fact[]
  }
  return { facts: doc.facts, dir }
}

const paging = suite('enrichment pages and says what it left out')

paging('with room, every matching row is fetched page by page, and the coverage is complete', async () => {
  const { facts, dir } = await prepared(10)
  const rel = facts.find((f) => f.type === 'relationship')
  assert.ok(rel?.type === 'relationship')
  assert.is(rel.to.rows, 2, 'both source_type 0 rows of creature 23487, one page each')
  assert.is(rel.to.complete, true)
  assert.is(rel.to.pages.length, 2)
  assert.is(rel.from.id, 23487, 'from_id_column names the origin row')
  const coverage = facts.find((f) => f.type === 'project_context_coverage')
  assert.ok(coverage?.type === 'project_context_coverage' && coverage.complete, JSON.stringify(coverage))
  assert.ok(right(await verifyCase(dir)()).valid)
})

paging(
  'cut short by max_queries: the relationship says not all rows were fetched, the coverage says what, how many and why',
  async () => {
    // 1 lookup + 1 page + 1 count: no room for the second page
    const { facts, dir } = await prepared(3)
    const rel = facts.find((f) => f.type === 'relationship')
    assert.ok(rel?.type === 'relationship')
    assert.is(rel.to.rows, 1)
    assert.is(rel.to.complete, false)
    const coverage = facts.find((f) => f.type === 'project_context_coverage')
    assert.ok(coverage?.type === 'project_context_coverage')
    assert.is(coverage.complete, false)
    const gap = coverage.left_out.find((g) => g.reason === 'rows_not_fetched')
    assert.ok(gap !== undefined, JSON.stringify(coverage.left_out))
    assert.match(gap.what, 'smart_scripts rows of creature_smartai = 23487: rows from offset 1 on')
    assert.is(gap.count, 1, 'how many: the count query said 2 match, 1 was fetched')
    assert.match(gap.detail ?? '', 'max_queries (3) reached while paging; 2 rows match')
    assert.ok(right(await verifyCase(dir)()).valid, 'an honest partial coverage verifies')
  }
)

paging(
  'a refused enrichment question is recorded with its request and code, and the prompt shows the code',
  async () => {
    const extra = `${enrichment(10)}
[[enrichment.relationships]]
relation = "creature_loot"
from_table = "creature_template"
from_column = "entry"
table = "creature_loot_template"
column = "Entry"
`
    const profile = right(await loadProfile(sqliteProfile(extra))())
    const research = createProjectResearch(profile)
    const dir = path.join(tempDir('enrich'), 'case')
    right(await initCase({ dir })())
    right(
      await prepareRevision(dir, research, right(enrichmentConfig(profile)), {
        report: 'The wild wolpertinger despawns.',
        entities: [{ type: 'creature', id: 23487 }]
      })()
    )
    await research.close()
    const s = right(await openCase(dir)()).cursor.state
    const facts = right(
      FactsDocument.decode(
        JSON.parse(right(await readObject(dir, s.facts ?? { digest: '', size: 0 })()).toString('utf8'))
      )
    ).facts
    const coverage = facts.find((f) => f.type === 'project_context_coverage')
    assert.ok(coverage?.type === 'project_context_coverage')
    const gap = coverage.left_out.find((g) => g.code === 'TABLE_NOT_ALLOWED')
    assert.ok(gap !== undefined, JSON.stringify(coverage.left_out))
    assert.is(gap.reason, 'refused')
    assert.equal(gap.request, {
      kind: 'database.rows',
      table: 'creature_loot_template',
      columns: ['Entry'],
      filters: [{ column: 'Entry', operator: 'eq', value: 23487 }],
      offset: 0,
      limit: 1
    })
    assert.match(gap.detail ?? '', 'creature_loot_template is not on the allowlist')
    // the facts index of the prompt shows the code and the request of every item left out
    const lines = factsIndex(facts).join('\n')
    assert.match(
      lines,
      /- creature_loot = 23487: database.rows creature_loot_template \[Entry\] where Entry = 23487 offset 0 limit 1 \(refused, TABLE_NOT_ALLOWED\): table creature_loot_template is not on the allowlist of world/
    )
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

paging.run()

const strict = suite('[enrichment] and every profile section refuse what they do not know')

const profileWith = async (extra: string): Promise<{ code: string; message: string } | null> => {
  const r = await loadProfile(sqliteProfile(extra))()
  return r._tag === 'Left' ? { code: r.left.code, message: r.left.message } : null
}

strict('typos, keys that do not fit together, and columns no lookup selects', async () => {
  const bad: Array<[string, string]> = [
    [enrichment(3).replace('from_column = "entry"', 'from_colum = "entry"'), 'unknown key from_colum'],
    [enrichment(3).replace('max_queries = 3', 'max_querys = 3'), 'unknown key "max_querys"'],
    [
      enrichment(3).replace('relation = "creature_smartai"', 'relation = "creature_smartai"\nsource_symbol = true'),
      'a source_symbol relationship searches the source'
    ],
    [
      enrichment(3).replace('from_id_column = "entry"', 'from_id_column = "guid"'),
      'from_id_column guid is not among the columns selected from creature_template'
    ],
    [
      enrichment(3).replace('table = "smart_scripts"\n', ''),
      'a relationship names table and column, or sets source_symbol = true'
    ],
    [enrichment(3).replace('when_value = "SmartAI"\n', ''), 'when_column and when_value go together'],
    ['\n[loop]\nmax_invalid_respones = 5\n', 'unknown key [loop].max_invalid_respones'],
    ['\n[budget]\ntotl = 5\n', 'unknown key [budget].totl'],
    ['\n[loop]\nprompt_max_chars = 4000\n', '[loop] prompt_max_chars must be a whole number from 8000 to 2000000'],
    [
      '\n[source_analysis]\ncode_path_prefixes = ["../src/"]\n',
      '[source_analysis].code_path_prefixes: "../src/" is not a relative path prefix'
    ],
    ['\n[limits]\ntime_ms = 1e12\n', '[limits] time_ms must be a whole number from 1 to 600000'],
    ['\n[budget]\ntotal = 2.5\n', '[budget] total must be a whole number'],
    ['\n[source_analysis]\ncontext_lines = -1\n', '[source_analysis] context_lines must be a whole number']
  ]
  for (const [extra, message] of bad) {
    const f = await profileWith(extra)
    assert.is(f?.code, 'CONFIG_INVALID', message)
    assert.match(f?.message ?? '', message)
  }
  assert.is(await profileWith(enrichment(3)), null, 'the valid profile loads')
})

strict('[database] connect_timeout_ms is a bounded whole number', async () => {
  const base = readFileSync(sqliteProfile(), 'utf8')
  for (const v of ['-1', '0', '1e12', 'nan', '1.5']) {
    const file = path.join(tempDir('timeout'), 'project.toml')
    const { writeFileSync } = await import('node:fs')
    writeFileSync(
      file,
      base.replace(
        'snapshot_id = "world-test-fixture-1"',
        `snapshot_id = "world-test-fixture-1"\nconnect_timeout_ms = ${v}`
      )
    )
    const r = await loadProfile(file)()
    assert.is(r._tag, 'Left', v)
  }
})

strict('the shipped profiles load strictly, enrichment included', async () => {
  for (const f of ['config/project.example.toml', 'config/trinitycore.toml', 'config/azerothcore.toml']) {
    const p = right(await loadProfile(path.join(repoRoot(), f))())
    if (!f.includes('example'))
      assert.ok(
        right(enrichmentConfig(p)).relationships?.some((r) => r.source_symbol === true && r.path_prefix === 'src/'),
        'script names are searched under src/'
      )
  }
})

strict.run()
