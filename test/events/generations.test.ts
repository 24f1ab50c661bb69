/**
 * Format generations: the newest generation writes exactly the registry's latest versions (adding a
 * version to an event type needs a new generation, so cases of earlier generations keep their
 * tables), and older versions are outdated only for a generation that writes newer ones.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { registry } from '../../src/events/catalog.js'
import { CURRENT_FORMAT_GENERATION, FORMAT_GENERATIONS, outdatedVersion } from '../../src/events/generations.js'

test('the current generation writes every type at its latest version (a new version needs a new generation)', () => {
  const table = FORMAT_GENERATIONS[CURRENT_FORMAT_GENERATION - 1] ?? {}
  for (const [type, def] of registry.definitions)
    assert.is(table[type] ?? 1, def.latest, `${type}: add a format generation for version ${def.latest}`)
  for (const type of Object.keys(table)) assert.ok(registry.definitions.has(type), `${type} is an event type`)
})

test('generations only grow: a later generation never writes an older version than an earlier one', () => {
  for (let g = 1; g < FORMAT_GENERATIONS.length; g++) {
    const before = FORMAT_GENERATIONS[g - 1] ?? {}
    const after = FORMAT_GENERATIONS[g] ?? {}
    for (const [type, v] of Object.entries(before)) assert.ok((after[type] ?? 1) >= v, `${type} in generation ${g + 1}`)
  }
})

test('an older version is outdated for a generation that writes a newer one; a newer generation is judged by the newest known', () => {
  assert.is(outdatedVersion(1, 'RevisionCompleted', 1), 2)
  assert.is(outdatedVersion(1, 'RevisionCompleted', 2), null)
  assert.is(outdatedVersion(1, 'InvestigationStarted', 3), 4)
  assert.is(outdatedVersion(1, 'CaptureRecorded', 1), null)
  assert.is(outdatedVersion(CURRENT_FORMAT_GENERATION + 5, 'NoteRecorded', 1), 2)
})

test.run()
