/**
 * vba work for people: between a slot's claim and its case's result, a line per model turn and
 * research query (each may take minutes), named by the slot and the case, so a terminal shows the
 * work going on; --json keeps its step events.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { writeShortModel, writeWorld } from '../helpers/investigation.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'

const test = suite('vba work shows its progress')
let t: TestStore
const profile = writeWorld(tempDir('work-progress-world'))
const model = writeShortModel(path.join(tempDir('work-progress-model'), 'model.sh'))

test.before(async () => {
  t = await postgresStore('workprog')
})
test.after(async () => {
  await t.drop()
})

test('a line per model turn, between the claim and the result', () => {
  assert.is(vba(['store', 'migrate', '--store', t.url]).code, 0)
  assert.is(vba(['case', 'init', 'case-p', '--store', t.url]).code, 0)
  const input = path.join(tempDir('work-progress-input'), 'report.json')
  writeFileSync(
    input,
    JSON.stringify({ report: 'Quest 11117 cannot be completed.', entities: [{ type: 'quest', id: 11117 }] })
  )
  const prep = vba(['case', 'prepare', 'case-p', '--config', profile, '--input', input, '--store', t.url])
  assert.is(prep.code, 0, prep.stderr)
  const w = vba([
    'work',
    '--config',
    profile,
    '--model-command',
    model,
    '--worker',
    'pw',
    '--until-idle',
    '--store',
    t.url
  ])
  assert.is(w.code, 0, w.stderr)
  const lines = w.stdout.split('\n')
  const claimed = lines.indexOf('pw: claimed case-p')
  const turn1 = lines.findIndex((l) => /^pw: case-p turn 1 \(interpretation, prompt \d+ characters\): /.test(l))
  const turn2 = lines.findIndex((l) => /^pw: case-p turn 2 \(investigation, prompt \d+ characters\): /.test(l))
  const result = lines.findIndex((l) => l.startsWith('pw: case-p → CONCLUDED'))
  assert.ok(claimed >= 0 && claimed < turn1 && turn1 < turn2 && turn2 < result, w.stdout)
})

test.run()
