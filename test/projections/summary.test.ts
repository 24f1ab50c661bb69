import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { sealEvent, genesisHash, checkLine, type RecordedEvent, type EventDraft } from '../../src/events/chain.js'
import { fold, project } from '../../src/projections/projection.js'
import { summaryProjection } from '../../src/projections/summary.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { right } from '../helpers/fs.js'

const genesis = right(
  genesisHash({ format: 'vba-case', format_version: 1, case_id: 'c', created_at: '2026-01-01T00:00:00.000Z' })
)
const digest = `sha256:${'01'.repeat(32)}`

/** Given drafts, the recorded events a store would read back. */
const given = (drafts: Array<EventDraft & { command: string }>): RecordedEvent[] => {
  let prev = genesis
  return drafts.map((d, i) => {
    const s = right(
      sealEvent(d, { seq: i + 1, prev, id: `e${i + 1}`, at: `2026-01-01T00:00:0${i}.000Z`, commandId: d.command })
    )
    prev = s.envelope.hash
    const c = checkLine(s.line, { seq: i + 1, prev: s.envelope.prev, lineNo: i + 1 })
    if (c.event === undefined) throw new Error('fixture event does not decode')
    return c.event
  })
}

const events = given([
  { type: 'NoteRecorded', version: 1, actor: 'operator', data: { text: 'old' }, command: 'a' },
  { type: 'NoteRecorded', actor: 'controller', data: { text: 'new', format: 'plain' }, command: 'a' },
  { type: 'AttachmentAdded', actor: 'operator', data: { name: 'log.txt', object: { digest, size: 10 } }, command: 'b' },
  { type: 'AttachmentAdded', actor: 'operator', data: { name: 'same.txt', object: { digest, size: 10 } }, command: 'c' }
])

const summary = suite('summary projection')

summary('given four events in three commands, counts types, actors, upcasts and unique objects', () => {
  const view = project(summaryProjection, events)
  assert.equal(view, {
    generation: 4,
    last_hash: events[3]?.hash ?? null,
    first_event_at: '2026-01-01T00:00:00.000Z',
    last_event_at: '2026-01-01T00:00:03.000Z',
    events: 4,
    events_by_type: { AttachmentAdded: 2, NoteRecorded: 2 },
    events_by_actor: { controller: 1, operator: 3 },
    events_upcast: 1,
    commands: 3,
    objects: { count: 1, bytes: 10 }
  })
})

summary('delivering every event twice changes nothing (idempotent by seq)', () => {
  const once = fold([summaryProjection])
  const twice = fold([summaryProjection])
  for (const e of events) once.feed(e)
  for (const e of events) {
    twice.feed(e)
    twice.feed(e)
  }
  for (const e of events) twice.feed(e)
  assert.is(right(canonicalJson(twice.views())), right(canonicalJson(once.views())))
})

summary('the empty log has an empty summary', () => {
  const view = project(summaryProjection, [])
  assert.is(view.generation, 0)
  assert.is(view.last_hash, null)
  assert.equal(view.events_by_type, {})
})

summary.run()
