/**
 * Preparation tells and can be redone (issue 37, point 3), through the CLI on the demo world: the
 * summary lists the refused lookups with their codes; `vba status` and `vba show` list the facts;
 * the same inputs again say how to enrich them again, and `case prepare --again` records a new
 * revision with fresh enrichment (the old one stays, the case verifies); one title.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const prep = suite('case prepare tells and can be redone')

prep(
  'a refused lookup is named with its code; the same inputs say --again; --again enriches afresh and keeps revision 1; status and show list the facts',
  async () => {
    const root = tempDir('prepare-again')
    const world = await writeDemoWorld(path.join(root, 'world'))
    // The database as the operator first had it: a table enrichment needs is not allowed.
    const broken = path.join(root, 'world', 'broken.toml')
    writeFileSync(broken, readFileSync(world.profile, 'utf8').replace('"creature_queststarter", ', ''))
    const report = path.join(root, 'report.md')
    writeFileSync(report, '# Wolpertingers vanish\n\nNetting one for https://wowhead.com/?quest=11117 gives nothing.\n')
    const dir = path.join(root, 'case')
    assert.is(vba(['case', 'init', dir, '--title', 'Netted wolpertingers vanish']).code, 0)

    const first = vba(['case', 'prepare', dir, '--config', broken, '--input', report])
    assert.is(first.code, 0, first.stderr)
    assert.match(
      first.stdout,
      'left out (refused, TABLE_NOT_ALLOWED): quest_starter = 11117: table creature_queststarter is not on the allowlist of world'
    )
    assert.match(first.stdout, /revision 1 completed: \d+ facts from \d+ queries, partial: 1 item left out \(above\)/)
    assert.match(
      first.stdout,
      `title: "Netted wolpertingers vanish", the case's (vba case init --title); the report's own title "Wolpertingers vanish" stays the report's`
    )
    const status1 = vba(['status', dir])
    assert.match(status1.stdout, /facts of revision 1 \(\d+\):/)
    assert.match(status1.stdout, 'F1 quest 11117 (quest_template)')
    assert.match(status1.stdout, 'coverage: partial')

    const same = vba(['case', 'prepare', dir, '--config', world.profile, '--input', report])
    assert.is(same.code, 0, same.stderr)
    assert.match(
      same.stdout,
      `revision 1 already holds these inputs; nothing recorded (generation 8); to enrich them again: vba case prepare ${dir} --config ${world.profile} --input ${report} --again`
    )

    const again = vba(['case', 'prepare', dir, '--config', world.profile, '--input', report, '--again'])
    assert.is(again.code, 0, again.stderr)
    assert.match(again.stdout, 'revision 2 (the inputs of revision 1 prepared again) completed:')
    assert.not.match(again.stdout, 'left out')
    const twice = vba(['case', 'prepare', dir, '--config', world.profile, '--input', report])
    assert.match(twice.stdout, 'revision 2 already holds these inputs; nothing recorded')

    const shown = vba(['show', dir])
    assert.match(shown.stdout, '2 InputsRecorded')
    assert.match(shown.stdout, /facts of revision 2 \(\d+\):/)
    assert.match(shown.stdout, 'coverage: nothing left out')
    assert.match(shown.stdout, 'F8 quest_starter: quest_template.ID=11117 → creature_queststarter.quest (1 row)')
    const json = JSON.parse(vba(['show', dir, '--json']).stdout) as {
      views: { revisions: { view: { revisions: { revision: number; completed: boolean; complete: boolean }[] } } }
    }
    assert.equal(
      json.views.revisions.view.revisions.map((r) => [r.revision, r.completed, r.complete]),
      [
        [1, true, false],
        [2, true, true]
      ]
    )
    const v = vba(['verify', dir])
    assert.is(v.code, 0, v.stdout)
    assert.match(v.stdout, /^VALID$/m)
  }
)

prep('a report without a title of its own, and a case without one: one title, said once', async () => {
  const root = tempDir('prepare-title')
  const world = await writeDemoWorld(path.join(root, 'world'))
  const report = path.join(root, 'report.json')
  writeFileSync(report, JSON.stringify({ report: 'Quest 11117 is broken.', entities: [{ type: 'quest', id: 11117 }] }))
  const titled = path.join(root, 'titled')
  assert.is(vba(['case', 'init', titled, '--title', 'Quest 11117']).code, 0)
  const p = vba(['case', 'prepare', titled, '--config', world.profile, '--input', report])
  assert.is(p.code, 0, p.stderr)
  assert.not.match(p.stdout, 'title')
  const bare = path.join(root, 'bare')
  assert.is(vba(['case', 'init', bare]).code, 0)
  writeFileSync(report, JSON.stringify({ title: 'Quest 11117', report: 'Quest 11117 is broken.', entities: [] }))
  const q = vba(['case', 'prepare', bare, '--config', world.profile, '--input', report])
  assert.match(
    q.stdout,
    `title: the case has none (vba case init --title gives it); the report's own title "Quest 11117" stays the report's`
  )
})

prep.run()
