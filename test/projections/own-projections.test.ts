/**
 * A controller's own projections, replayed beside the defaults (vba-case-research/fp's
 * replayCase): two with one name are the caller's mistake, INVALID_ARGUMENT naming the name (it
 * was INTERNAL_ERROR, the kind of a library bug), and nothing else of the replay changes.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import { initCase, recordNote, replayCase, defaultProjections, type Projection } from '../../src/fp.js'
import { failureKind } from '../../src/failures/codes.js'
import { left, right, tempDir } from '../helpers/fs.js'

const own = suite('own projections')

const counter = (name: string): Projection<number, number> => ({
  name,
  version: 1,
  init: () => 0,
  evolve: (n) => n + 1,
  view: (n) => n
})

own('an own projection is replayed beside the defaults; a name twice is INVALID_ARGUMENT', async () => {
  const dir = path.join(tempDir('own-projections'), 'case')
  right(await initCase({ dir, title: 'own views' })())
  right(await recordNote(dir, { text: 'a note', author: 'controller' })())
  const r = right(await replayCase(dir, [...defaultProjections(), counter('events.count')])())
  assert.equal(r.views['events.count'], { version: 1, view: 1 })
  for (const projections of [
    [counter('mine'), counter('mine')],
    [...defaultProjections(), counter('summary')]
  ]) {
    const f = left(await replayCase(dir, projections)())
    assert.is(f.code, 'INVALID_ARGUMENT')
    assert.is(failureKind(f.code), 'permanent')
    assert.match(f.message, /two projections are named "(mine|summary)"/)
  }
})

own.run()
