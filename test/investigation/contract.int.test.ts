/**
 * The contract tells the truth (issue 30): an allowed table the snapshot does not hold is named
 * absent, as the start found it (recorded with the settings, so the prompt renders from the log);
 * the contract says what no query reaches and when a conclusion is accepted, and the decider
 * accepts a conclusion citing an open hypothesis, as the contract says.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { openVba } from '../../src/index.js'
import { forger } from '../../src/testing.js'
import { verifyCase } from '../../src/fp.js'
import { scriptedModel, latestEvidence } from '../../src/investigation/scripted-model.js'
import { right, tempDir } from '../helpers/fs.js'

const world = await writeDemoWorld(path.join(tempDir('contract-world'), 'world'))
// The allowlist names a table the demo world does not hold (beside the demo profile: its paths hold).
const profile = path.join(world.dir, 'absent.toml')
writeFileSync(profile, readFileSync(world.profile, 'utf8').replace('world = [', 'world = ["quest_template_addon", '))

const contract = suite('a contract that tells the truth')

contract(
  'an allowed table absent from the snapshot is named absent; client data is out of reach; a conclusion may cite an open hypothesis; verify renders every prompt again',
  async () => {
    const vba = await openVba({ profile })
    try {
      const dir = path.join(tempDir('contract-case'), 'case')
      await vba.cases.create(dir, { title: 'Quest 11117' })
      await vba.investigations.prepare(dir, {
        report: 'Netted wolpertingers vanish.',
        entities: [{ type: 'creature', id: 23487 }]
      })
      await vba.investigations.start(dir)
      const first = await vba.investigations.nextPrompt(dir)
      assert.match(first.text, /^ {2}world: creature_queststarter, creature_template, /m)
      assert.not.match(first.text, /^ {2}world: quest_template_addon/m)
      assert.match(
        first.text,
        '  world, allowed but absent from this snapshot (a query is refused): quest_template_addon'
      )
      assert.match(first.text, 'No query reaches: client data (DBC/DB2 files')
      assert.match(first.text, 'whatever the status of its hypotheses (an open one too)')
      const model = scriptedModel([
        JSON.stringify({ interpretation: { summary: 'The creature despawns when netted.' } }),
        JSON.stringify({
          next: {
            kind: 'tool',
            operation: 'project.query',
            arguments: { kind: 'database.count', table: 'smart_scripts', filters: [] }
          }
        }),
        (p) =>
          JSON.stringify({
            next: {
              kind: 'hypothesis',
              action: 'propose',
              statement: 'SmartAI despawns it.',
              evidence: [latestEvidence(p)]
            }
          }),
        JSON.stringify({
          next: { kind: 'conclusion', summary: 'SmartAI despawns it.', hypotheses: ['H1'], evidence: [] }
        })
      ])
      const r = await vba.investigations.advance(dir, { model: model.model, maxTurns: 6 })
      assert.is(r.state, 'CONCLUDED', 'the open hypothesis H1 is cited, as the contract allows')
      const verified = right(await verifyCase(dir)())
      assert.ok(verified.valid, JSON.stringify(verified.findings))
      // The absent tables are recorded with the start: a forged list is not what the prompts were rendered from.
      const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n')
      const start = lines.findIndex((l) => l.includes('"InvestigationStarted"'))
      forger(dir).rewrite(start + 1, (d) => {
        const data = d as { settings: { contract: { snapshot: { absent_tables: unknown[] } } } }
        data.settings.contract.snapshot.absent_tables = []
        return data
      })
      const forged = right(await verifyCase(dir)())
      assert.not.ok(forged.valid)
      assert.ok(
        forged.findings.some((f) => f.message.includes('prompt')),
        JSON.stringify(forged.findings.map((f) => f.message))
      )
    } finally {
      await vba.close()
    }
  }
)

contract.run()
