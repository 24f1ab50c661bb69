/**
 * Feedback given again for a lab test that has it, and a second start with other settings, under
 * the ids the library picks itself (`feedback-L1`, `investigation-start`): the refusal says what
 * happened (LAB_FEEDBACK_RECORDED, INVESTIGATION_STARTED), not COMMAND_ID_CONFLICT naming an id the
 * controller never chose. The same feedback again is still the recorded outcome, and an id the
 * caller reuses for something else still COMMAND_ID_CONFLICT. Real case directories, demo world.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba, type ModelFn } from '../../src/index.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { tempDir } from '../helpers/fs.js'
import { rejectsWithVbaError } from '../helpers/vba-error.js'

const world = await writeDemoWorld(path.join(tempDir('feedback-world'), 'world'))
const again = suite('feedback and start again')

const model: ModelFn = async ({ phase }) =>
  JSON.stringify(
    phase === 'interpretation'
      ? { interpretation: { summary: 'netting despawns the creature' } }
      : { next: { kind: 'lab_test', description: 'Net a wild wolpertinger on the test realm.' } }
  )

again('another feedback for L1 is LAB_FEEDBACK_RECORDED; another start INVESTIGATION_STARTED', async () => {
  const vba = await openVba({ profile: world.profile })
  try {
    const dir = path.join(tempDir('feedback-again'), 'case')
    await vba.cases.create(dir)
    await vba.investigations.prepare(dir, { report: 'The wild wolpertinger vanishes.', entities: [] })
    await vba.investigations.start(dir)
    const waiting = await vba.investigations.advance(dir, { model })
    assert.is(waiting.reason, 'AWAITING_TEST_FEEDBACK')
    const first = await vba.investigations.feedback(dir, { requestId: 'L1', text: 'It despawns.' })
    assert.equal(await vba.investigations.feedback(dir, { requestId: 'L1', text: 'It despawns.' }), first)
    const other = await rejectsWithVbaError(vba.investigations.feedback(dir, { requestId: 'L1', text: 'It stays.' }))
    assert.is(other.code, 'LAB_FEEDBACK_RECORDED')
    assert.match(other.message, 'L1')
    // another budget: another start
    const other9 = path.join(path.dirname(world.profile), 'budget9.toml')
    writeFileSync(other9, readFileSync(world.profile, 'utf8').replace(/^total = 8$/m, 'total = 9'))
    const vba9 = await openVba({ profile: other9 })
    try {
      const restart = await rejectsWithVbaError(vba9.investigations.start(dir))
      assert.is(restart.code, 'INVESTIGATION_STARTED')
    } finally {
      await vba9.close()
    }
    const reused = await rejectsWithVbaError(
      vba.investigations.feedback(dir, { requestId: 'L1', text: 'It stays.', commandId: 'feedback-L1' })
    )
    assert.is(reused.code, 'COMMAND_ID_CONFLICT', 'an id the caller gives is its own')
    assert.is((await vba.cases.status(dir)).generation, first.generation, 'nothing recorded')
    assert.ok((await vba.cases.verify(dir)).valid)
  } finally {
    await vba.close()
  }
})

again.run()
