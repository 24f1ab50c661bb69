/**
 * What the client gives and answers a controller, on real case directories over the demo world:
 * plain data (a prompt survives JSON, a spread and structuredClone), and its own mistakes refused
 * as such: inputs of the wrong shape are INPUT_INVALID naming the member (not a library bug).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba, type RevisionInputs } from '../../src/index.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { tempDir } from '../helpers/fs.js'
import { rejectsWithVbaError } from '../helpers/vba-error.js'

const world = await writeDemoWorld(path.join(tempDir('mistakes-world'), 'world'))

const rejects = rejectsWithVbaError
const lines = (dir: string): string[] => readFileSync(path.join(dir, 'events.jsonl'), 'utf8').trim().split('\n')

const mistakes = suite('the client and its controller')

mistakes(
  'prepare: inputs of the wrong shape are INPUT_INVALID naming the member; entities may be left out',
  async () => {
    const vba = await openVba({ profile: world.profile })
    try {
      const dir = path.join(tempDir('mistakes'), 'case')
      await vba.cases.create(dir)
      const bad: Array<[unknown, string]> = [
        [{ report: 42, entities: [] }, 'report'],
        [{ entities: [] }, 'report is missing'],
        [{ report: 'r', entities: 'quest 11117' }, 'entities'],
        [{ report: 'r', entities: [{ type: 'quest' }] }, 'entities.0.id'],
        [{ report: 'r', attachments: [{ name: 'log.txt', bytes: 'text' }] }, 'attachments.0.bytes'],
        [{ report: 'r', origin: 7 }, 'origin'],
        [null, 'the value'],
        ['a report', 'the value']
      ]
      for (const [inputs, member] of bad) {
        const e = await rejects(vba.investigations.prepare(dir, inputs as RevisionInputs))
        assert.is(e.code, 'INPUT_INVALID', JSON.stringify(inputs))
        assert.ok(e.permanent)
        assert.match(e.message, member)
      }
      assert.is(lines(dir).length, 1, 'nothing recorded for refused inputs')
      // Without entities: the same recorded inputs as with an empty list.
      const r = await vba.investigations.prepare(dir, { report: 'Quest 11117: the wolpertinger vanishes.' })
      assert.is(r.status, 'completed')
      const withList = path.join(tempDir('mistakes'), 'listed')
      await vba.cases.create(withList)
      const inputsOf = (d: string) =>
        lines(d)
          .map((l) => JSON.parse(l) as { type: string; data: unknown })
          .find((e) => e.type === 'InputsRecorded')?.data
      await vba.investigations.prepare(withList, { report: 'Quest 11117: the wolpertinger vanishes.', entities: [] })
      assert.equal(inputsOf(dir), inputsOf(withList))
      assert.ok((await vba.cases.verify(dir)).valid)
    } finally {
      await vba.close()
    }
  }
)

mistakes('nextPrompt is plain data: its text survives JSON, a spread and structuredClone', async () => {
  const vba = await openVba({ profile: world.profile })
  try {
    const dir = path.join(tempDir('plain'), 'case')
    await vba.cases.create(dir)
    await vba.investigations.prepare(dir, { report: 'The wild wolpertinger vanishes when netted.' })
    await vba.investigations.start(dir)
    const p = await vba.investigations.nextPrompt(dir)
    assert.ok(Object.keys(p).includes('text'), Object.keys(p).join())
    assert.ok(p.text.startsWith(p.stable) && p.text.length > p.stable.length)
    const json = JSON.parse(JSON.stringify(p)) as typeof p
    assert.equal(json, { ...p })
    assert.is(json.text, p.text)
    assert.is({ ...p }.text, p.text)
    assert.is(structuredClone(p).text, p.text)
  } finally {
    await vba.close()
  }
})

class Mine extends Error {}

/** What a call rejects with (any value). */
const thrown = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p
  } catch (e) {
    return e
  }
  throw new Error('expected a rejection')
}

mistakes(
  "a callback that throws: the call rejects with the callback's own error, unchanged; the case is fine",
  async () => {
    const vba = await openVba({ profile: world.profile })
    try {
      const dir = path.join(tempDir('callbacks'), 'case')
      await vba.cases.create(dir)
      await vba.investigations.prepare(dir, { report: 'The wild wolpertinger vanishes when netted.' })
      await vba.investigations.start(dir)
      const answers = [
        '{"interpretation": {"summary": "s"}}',
        '{"next": {"kind": "conclusion", "summary": "c", "hypotheses": [], "evidence": []}}'
      ]
      const model = async ({ turn }: { turn: number }) => answers[turn - 1] ?? ''
      const broke = new Mine('my logger broke')
      const e = await thrown(
        vba.investigations.advance(dir, {
          model,
          onStep: () => {
            throw broke
          }
        })
      )
      assert.is(e, broke, `the callback's own error, not ${String(e)}`)
      const status = await vba.cases.status(dir)
      assert.is(status.state, 'INVESTIGATING', 'the step it reported is recorded')
      assert.is((await vba.investigations.advance(dir, { model })).state, 'CONCLUDED')
      const progress = new Mine('progress broke')
      const onProgress = () => {
        throw progress
      }
      assert.is(await thrown(vba.cases.verify(dir, { onProgress })), progress)
      const out = path.join(tempDir('callbacks'), 'case.tar')
      assert.is(await thrown(vba.transport.export(dir, out, { onProgress })), progress)
      assert.not.ok(existsSync(out), 'no half-written archive')
      assert.ok((await vba.cases.verify(dir)).valid)
      await vba.transport.export(dir, out)
      const into = path.join(tempDir('callbacks'), 'in')
      assert.is(await thrown(vba.transport.import(out, into, { onProgress })), progress)
      assert.not.ok(existsSync(into), 'no half-imported case')
    } finally {
      await vba.close()
    }
  }
)

mistakes(
  'a model function that returns no answer is refused as INVALID_ARGUMENT naming what it returned; nothing is recorded for it',
  async () => {
    const vba = await openVba({ profile: world.profile })
    try {
      const dir = path.join(tempDir('no-answer'), 'case')
      await vba.cases.create(dir)
      await vba.investigations.prepare(dir, { report: 'The wild wolpertinger vanishes when netted.' })
      await vba.investigations.start(dir)
      const returned: Array<[unknown, string]> = [
        [undefined, 'returned undefined'],
        [42, 'returned a number'],
        [{ content: '{}' }, 'without text (its members: content)'],
        [{ text: null }, 'whose text is null']
      ]
      for (const [value, words] of returned) {
        const before = lines(dir).length
        const e = await rejects(vba.investigations.advance(dir, { model: async () => value as string }))
        assert.is(e.code, 'INVALID_ARGUMENT', JSON.stringify(value))
        assert.ok(e.permanent)
        assert.match(e.message, words)
        const added = lines(dir)
          .slice(before)
          .map((l) => (JSON.parse(l) as { type: string }).type)
        assert.equal(added, ['ModelRequested'], 'the request, no answer, no failure, no block')
      }
      const s = await vba.cases.status(dir)
      assert.is(s.state, 'INTERPRETING')
      assert.is(s.last_model_failure, null)
      const e = await rejects(vba.investigations.advance(dir, { model: 'gpt' as never }))
      assert.is(e.code, 'INVALID_ARGUMENT')
      assert.match(e.message, 'model must be a function')
      const r = await vba.investigations.advance(dir, {
        model: async () => '{"interpretation": {"summary": "s"}}',
        maxTurns: 1
      })
      assert.is(r.state, 'INVESTIGATING')
      assert.ok((await vba.cases.verify(dir)).valid)
    } finally {
      await vba.close()
    }
  }
)

mistakes.run()
