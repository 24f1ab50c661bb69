/** Case preparation against the real MariaDB fixture world and a real repository. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import { readObject } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig, type RevisionInputs } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { resolvePointer } from '../../src/domain/enrichment-config.js'
import type { Fact } from '../../src/research/enrich.js'
import { mariaWorld, mariaProfile } from '../helpers/world.js'
import { buildTestRepo } from '../helpers/git-repo.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import { forger } from '../helpers/forger.js'
import { digestOf } from '../../src/domain/rules/digest.js'
import { digestedIndex } from '../../src/domain/inputs-decider.js'

const { shared } = await mariaWorld()
const repo = buildTestRepo()
const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
const profileFile = mariaProfile(
  shared,
  `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n${adapter}`
)
const profile = right(await loadProfile(profileFile)())
const config = right(enrichmentConfig(profile))
const research = createProjectResearch(profile, { openSource: openSourceResearch })

const newCase = async (): Promise<string> => {
  const dir = path.join(tempDir('prep'), 'case')
  right(await initCase({ dir })())
  return dir
}
const factsOf = async (dir: string): Promise<Fact[]> => {
  const views = right(await replayCase(dir, defaultProjections())()).views
  const revisions = (
    views['revisions']?.view as { revisions: Array<{ facts: { digest: string; size: number } | null }> }
  ).revisions
  const ref = revisions[revisions.length - 1]?.facts
  if (ref === null || ref === undefined) throw new Error('no facts')
  return (JSON.parse(right(await readObject(dir, ref)()).toString('utf8')) as { facts: Fact[] }).facts
}
const quest: RevisionInputs = {
  report: 'Players cannot catch the wild wolpertingers for quest 11117 any more.',
  entities: [{ type: 'quest', id: 11117 }]
}

const prep = suite('case preparation')

prep(
  'a quest expands to its starter creature, start item and the SmartAI rows of that creature, with resolvable provenance',
  async () => {
    const dir = await newCase()
    const r = right(await prepareRevision(dir, research, config, quest)())
    assert.is(r.status, 'completed')
    assert.is(r.revision, 1)
    const facts = await factsOf(dir)
    const entity = (type: string, id: number) =>
      facts.find((f) => f.type === 'entity' && f.entity_type === type && f.id === id)
    assert.ok(entity('quest', 11117), 'the quest')
    assert.ok(entity('creature', 23486), 'its starter creature')
    assert.ok(entity('item', 32907), 'its start item')
    const smart = facts.find(
      (f) => f.type === 'relationship' && f.relation === 'creature_smartai' && f.from.value === 23486
    )
    assert.ok(
      smart !== undefined && smart.type === 'relationship' && smart.to.rows === 1,
      'one SmartAI row of the creature (source_type 0 only)'
    )
    // texts become their own facts; the quest fact references them instead of copying
    const q = entity('quest', 11117)
    if (q?.type !== 'entity') throw new Error('quest fact')
    assert.equal(Object.keys(q.texts).sort(), ['LogDescription', 'QuestDescription'])
    assert.not.ok('QuestDescription' in q.values)
    const text = facts.find((f) => f.fact_id === q.texts['QuestDescription'])
    assert.ok(
      text?.type === 'project_description' && text.role === 'quest giver text' && text.describes === 'template_text'
    )
    // every provenance resolves to the original value in its capture
    for (const f of facts) {
      if (f.type === 'project_description')
        assert.is(resolvePointer(await capture(dir, f.provenance.capture), f.provenance.pointer), f.text)
      if (f.type === 'entity') {
        const row = resolvePointer(await capture(dir, f.provenance.capture), f.provenance.pointer) as Record<
          string,
          unknown
        >
        assert.ok(Object.values(row).includes(f.id), `${f.entity_type} ${f.id}: the row holds the id`)
        for (const [k, v] of Object.entries(f.values)) assert.equal(row[k], v)
      }
      if (f.type === 'relationship') {
        const origin = resolvePointer(await capture(dir, f.from.provenance.capture), f.from.provenance.pointer)
        assert.is(origin, f.from.value, `${f.relation} origin value`)
      }
    }
    const coverage = facts.find((f) => f.type === 'project_context_coverage')
    assert.ok(coverage !== undefined)
  }
)

/** A capture object, decoded. */
const capture = async (dir: string, digest: string): Promise<unknown> => {
  const report = right(await verifyCase(dir)())
  assert.ok(report.valid)
  const { readFileSync: read } = await import('node:fs')
  const hex = digest.slice(7)
  return JSON.parse(read(path.join(dir, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), 'utf8'))
}

prep('a cycle terminates and the coverage shows what was cut; the same inputs again change nothing', async () => {
  const dir = await newCase()
  const inputs: RevisionInputs = {
    report: 'The drunken wolpertinger keeps summoning pens.',
    entities: [{ type: 'creature', id: 24766 }]
  }
  const r = right(await prepareRevision(dir, research, config, inputs)())
  const facts = await factsOf(dir)
  const coverage = facts.find((f) => f.type === 'project_context_coverage')
  assert.ok(coverage?.type === 'project_context_coverage')
  assert.ok(
    coverage.cycles_cut.length > 0 || coverage.left_out.some((g) => g.reason === 'max_depth'),
    JSON.stringify(coverage)
  )
  const before = readFileSync(path.join(dir, 'events.jsonl'))
  const again = right(await prepareRevision(dir, research, config, inputs)())
  assert.is(again.status, 'unchanged')
  assert.is(again.revision, r.revision)
  assert.equal(readFileSync(path.join(dir, 'events.jsonl')), before, 'no new events, no new captures')
  // new inputs make a new revision; the completed one is not rewritten
  const next = right(await prepareRevision(dir, research, config, quest)())
  assert.is(next.revision, 2)
  assert.equal(readFileSync(path.join(dir, 'events.jsonl')).subarray(0, before.length), before)
})

prep('the same revision enriched in two cases gives identical facts', async () => {
  const a = await newCase()
  const b = await newCase()
  right(await prepareRevision(a, research, config, quest)())
  right(await prepareRevision(b, research, config, quest)())
  assert.equal(await factsOf(a), await factsOf(b))
})

prep('one number that is a creature entry and a spell id: the facts keep them apart', async () => {
  const dir = await newCase()
  right(
    await prepareRevision(dir, research, config, {
      report: 'Creature 23487 and the pony keg (item 33927).',
      entities: [
        { type: 'creature', id: 23487 },
        { type: 'item', id: 33927 }
      ]
    })()
  )
  const facts = await factsOf(dir)
  const creature = facts.filter((f) => f.type === 'entity' && f.entity_type === 'creature' && f.id === 23487)
  assert.is(creature.length, 1)
  const spellRel = facts.find((f) => f.type === 'relationship' && f.relation === 'item_spell_script')
  assert.ok(
    spellRel?.type === 'relationship' && spellRel.from.value === 23487 && spellRel.from.table === 'item_template',
    'the spell is reached from the item, as a spell'
  )
  for (const f of facts) {
    if (f.type === 'relationship' && f.from.table === 'creature_template')
      assert.is.not(f.to.table, 'spell_script_names', 'nothing links the creature to the spell')
  }
  const smart = facts.find(
    (f) => f.type === 'relationship' && f.relation === 'creature_smartai' && f.from.value === 23487
  )
  assert.ok(
    smart?.type === 'relationship' && smart.to.rows === 2,
    'only source_type 0 rows of the creature, not the actionlist with the same number'
  )
})

prep('vba case prepare and show --json list the facts with provenance', async () => {
  const dir = await newCase()
  const input = path.join(tempDir('in'), 'report.json')
  writeFileSync(input, JSON.stringify(quest))
  const r = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, 'revision 1 completed')
  const again = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input])
  assert.match(again.stdout, 'nothing recorded')
  const show = JSON.parse(vba(['show', dir, '--json']).stdout) as { facts: { facts: Fact[] } }
  assert.ok(show.facts.facts.length > 5)
  assert.ok(
    show.facts.facts.every(
      (f) => f.type === 'project_context_coverage' || 'provenance' in f || f.type === 'relationship'
    )
  )
  writeFileSync(input, '{"report": 5}')
  const bad = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, 'INPUT_INVALID')
})

prep('vba case prepare takes an issue exported by gh (its URL the origin) and a Markdown report', async () => {
  const dir = await newCase()
  const input = path.join(tempDir('in'), 'issue.json')
  const url = 'https://github.com/azerothcore/azerothcore-wotlk/issues/4711'
  const issue = {
    number: 4711,
    title: 'Wild Wolpertingers vanish',
    body: 'Netted wolpertingers vanish for quest 11117.',
    url,
    labels: [{ name: 'Quest' }],
    comments: []
  }
  writeFileSync(input, JSON.stringify(issue))
  const r = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, 'revision 1 completed')
  const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean)
  const recorded = lines
    .map(
      (l) =>
        JSON.parse(l) as {
          type: string
          version: number
          data: { origin?: string; report: { digest: string; size: number } }
        }
    )
    .find((e) => e.type === 'InputsRecorded')
  assert.is(recorded?.version, 2)
  assert.is(recorded?.data.origin, url)
  const text = right(await readObject(dir, recorded?.data.report ?? { digest: '', size: 0 })()).toString('utf8')
  assert.is(text, '# Wild Wolpertingers vanish\n\nNetted wolpertingers vanish for quest 11117.\n\nLabels: Quest\n')
  assert.ok(right(await verifyCase(dir)()).valid)
  const page = vba(['report', dir, '--out', path.join(tempDir('page'), 'r.html')])
  assert.is(page.code, 0, page.stderr)

  // The same report from another address is other inputs: a new revision.
  writeFileSync(input, JSON.stringify({ ...issue, url: `${url}#again` }))
  assert.match(vba(['case', 'prepare', dir, '--config', profileFile, '--input', input]).stdout, 'revision 2 completed')
  const md = path.join(tempDir('in'), 'report.md')
  writeFileSync(md, '# Quest 11117\n\nThe wolpertingers vanish when netted.\n')
  const m = vba(['case', 'prepare', dir, '--config', profileFile, '--input', md])
  assert.is(m.code, 0, m.stderr)
  assert.match(m.stdout, 'revision 3 completed')
  assert.ok(right(await verifyCase(dir)()).valid)
})

/** A report as players file them on the public tracker: links, GM commands and labels, no JSON. */
const TRACKER_REPORT = [
  '### Current Behaviour',
  '',
  'Netted wolpertingers vanish and [Wild Wolpertinger](https://www.wowhead.com/wotlk/npc=23487) gives no credit for [Wolpertinger Round-Up](https://www.wowhead.com/wotlk/quest=11117/).',
  '',
  '### Steps to reproduce the problem',
  '',
  '1. `.quest add 11117`',
  '2. `.go c 119367`',
  '3. `.cast 41621` on the wolpertinger (since 2024, 3 times)',
  '',
  'NPC 23486 hands out the net.'
].join('\n')

prep(
  'entities from a tracker-style report: each with its span, resolved by enrichment like a listed one; the unresolved in the coverage; verify extracts them again',
  async () => {
    const dir = await newCase()
    const r = right(await prepareRevision(dir, research, config, { report: TRACKER_REPORT, entities: [] })())
    assert.equal(
      r.extracted.map((x) => `${x.type} ${x.id} ${x.kind} ${x.text}`),
      [
        'creature 23487 link npc=23487',
        'quest 11117 link quest=11117',
        'creature_spawn 119367 command .go c 119367',
        'spell 41621 command .cast 41621',
        'creature 23486 label NPC 23486'
      ]
    )
    for (const x of r.extracted) assert.is(TRACKER_REPORT.slice(x.span.start, x.span.end), x.text)
    const facts = await factsOf(dir)
    const entity = (type: string, id: number) =>
      facts.find((f) => f.type === 'entity' && f.entity_type === type && f.id === id && f.source === 'input')
    assert.ok(entity('quest', 11117), 'the quest, resolved as an input')
    assert.ok(entity('creature', 23487), 'the creature')
    assert.ok(entity('creature', 23486), 'the labelled creature')
    const coverage = facts.find((f) => f.type === 'project_context_coverage')
    if (coverage?.type !== 'project_context_coverage') throw new Error('coverage')
    const unresolved = coverage.left_out.filter((g) => g.reason === 'no_lookup_configured').map((g) => g.what)
    assert.equal(unresolved, ['creature_spawn 119367', 'spell 41621'])
    const verified = right(await verifyCase(dir)())
    assert.ok(verified.valid, JSON.stringify(verified.findings))
    // status says where each entity came from
    const status = vba(['status', dir])
    assert.match(
      status.stdout,
      /entity quest 11117: found in the report: link "quest=11117" at characters \d+-\d+ of the report/
    )
    // a forged span (or a dropped entity) is not what the recorded patterns find
    const inputs = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes('"InputsRecorded"'))
    const f = forger(dir)
    f.rewrite(inputs + 1, (d) => {
      const data = d as { extracted: Array<{ span: { start: number; end: number } }> }
      const extracted = data.extracted.map((x, i) =>
        i === 0 ? { ...x, span: { start: x.span.start + 1, end: x.span.end } } : x
      )
      const index: Record<string, unknown> = { ...(d as Record<string, unknown>), extracted }
      const { revision: _r, inputs_version: _v, inputs_digest: _d, ...digested } = index
      return { ...index, inputs_digest: digestOf(digested) }
    })
    const forged = right(await verifyCase(dir)())
    assert.not.ok(forged.valid)
    const rules = forged.findings.map((x) => x.data?.['rule'])
    assert.ok(rules.includes('revision.extracted'), JSON.stringify(forged.findings))
  }
)

prep(
  'inputs version 1 is no way around revision.extracted: kept entities, dropped ones and hidden ones are findings; the only VALID version 1 is what an honest writer records for the same entities listed',
  async () => {
    const base = await newCase()
    right(await prepareRevision(base, research, config, { report: TRACKER_REPORT, entities: [] })())
    const at = readFileSync(path.join(base, 'events.jsonl'), 'utf8')
      .split('\n')
      .findIndex((l) => l.includes('"InputsRecorded"'))
    type Inputs = Record<string, unknown> & {
      entities: Array<{ type: string; id: number | string }>
      extracted?: Array<{ type: string; id: number }>
    }
    const downgrade = (edit: (d: Inputs) => Inputs): string => {
      const dir = path.join(tempDir('inputs-v1'), 'case')
      cpSync(base, dir, { recursive: true })
      forger(dir).rewrite(at + 1, (old) => {
        const d = edit({ ...(old as Inputs), inputs_version: 1 })
        return { ...d, inputs_digest: digestOf(digestedIndex(d as unknown as Parameters<typeof digestedIndex>[0])) }
      })
      return dir
    }
    const rulesOf = async (dir: string): Promise<unknown[]> =>
      right(await verifyCase(dir)())
        .findings.filter((f) => f.severity === 'error')
        .map((f) => f.data?.['rule'])
    // Version 1 that still holds the extracted entities.
    const kept = downgrade((d) => d)
    assert.ok((await rulesOf(kept)).includes('revision.extracted'))
    // Version 1 without them: the recorded patterns find them in the report, and the facts miss them.
    const dropped = downgrade(({ extracted: _x, ...d }) => d as Inputs)
    const droppedRules = await rulesOf(dropped)
    assert.ok(droppedRules.includes('revision.extracted'), JSON.stringify(droppedRules))
    // Version 1 with them listed instead: what `vba case prepare` records when the same entities
    // are listed (listed entities win, the patterns find nothing more: inputs version 1), so VALID.
    const listed = downgrade(({ extracted, ...d }) => ({
      ...d,
      entities: [...d.entities, ...(extracted ?? []).map((x) => ({ type: x.type, id: x.id }))]
    }))
    assert.equal(await rulesOf(listed), [])
    const honest = await newCase()
    const entities = (
      JSON.parse(readFileSync(path.join(listed, 'events.jsonl'), 'utf8').split('\n')[at] ?? '{}') as {
        data: Inputs
      }
    ).data.entities
    right(await prepareRevision(honest, research, config, { report: TRACKER_REPORT, entities })())
    const inputsOf = (dir: string): Inputs =>
      (JSON.parse(readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n')[at] ?? '{}') as { data: Inputs })
        .data
    assert.equal(inputsOf(honest), inputsOf(listed), 'the same inputs an honest writer records')
    assert.match(vba(['status', listed]).stdout, 'entity quest 11117: listed with the inputs')
  }
)

prep('a report with no ids gives no entities; a listed entity wins; --no-extract finds none', async () => {
  const none = right(
    await prepareRevision(await newCase(), research, config, {
      report: 'Players cannot catch 23487 or 11117 any more; it worked in 3.3.5.',
      entities: []
    })()
  )
  assert.equal(none.extracted, [])
  const listed = right(
    await prepareRevision(await newCase(), research, config, {
      report: TRACKER_REPORT,
      entities: [{ type: 'item', id: 23487 }]
    })()
  )
  assert.not.ok(
    listed.extracted.some((x) => x.id === 23487),
    'the listed entity names 23487; the link does not make it a creature as well'
  )
  const dir = await newCase()
  const input = path.join(tempDir('in'), 'report.json')
  writeFileSync(input, JSON.stringify({ report: TRACKER_REPORT, entities: [] }))
  const cli = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input])
  assert.is(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /^extracted quest 11117: link "quest=11117" at characters/m)
  const off = vba(['case', 'prepare', dir, '--config', profileFile, '--input', input, '--no-extract'])
  assert.is(off.code, 0, off.stderr)
  assert.match(off.stdout, 'revision 2 completed')
  assert.not.match(off.stdout, 'extracted')
  assert.ok(right(await verifyCase(dir)()).valid)
})

prep.after(async () => research.close())
prep.run()
