import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as t from 'io-ts'
import { defineEvent, makeRegistry } from '../../src/events/registry.js'
import { registry } from '../../src/events/catalog.js'
import { right, left } from '../helpers/fs.js'

const upcasting = suite('registry upcasting')

upcasting('decodes version 1 NoteRecorded into the current version', () => {
  assert.equal(right(registry.decode('NoteRecorded', 1, { text: 'old' })), { text: 'old', format: 'plain' })
  assert.equal(right(registry.decode('NoteRecorded', 2, { text: 'new', format: 'markdown' })), {
    text: 'new',
    format: 'markdown'
  })
})

upcasting(
  'BudgetReserved versions 1 to 3 lift to version 4 with no requester and no request; version 3 refuses a requester with control characters; version 4 holds the request',
  () => {
    const v1 = { reservation_id: 'res-1', action: 'project.query', amount: 1, plan_id: null }
    assert.equal(right(registry.decode('BudgetReserved', 1, v1)), {
      ...v1,
      request_digest: null,
      requester: null,
      request: null
    })
    const digest = `sha256:${'a'.repeat(64)}`
    assert.equal(right(registry.decode('BudgetReserved', 2, { ...v1, request_digest: digest })), {
      ...v1,
      request_digest: digest,
      requester: null,
      request: null
    })
    const requester = { protocol: 'mcp', name: 'claude-code', version: '2.1.0' }
    assert.equal(right(registry.decode('BudgetReserved', 3, { ...v1, request_digest: digest, requester })), {
      ...v1,
      request_digest: digest,
      requester,
      request: null
    })
    const request = { kind: 'source.files', text: 'wolpertinger' }
    assert.equal(right(registry.decode('BudgetReserved', 4, { ...v1, request_digest: digest, requester, request })), {
      ...v1,
      request_digest: digest,
      requester,
      request
    })
    assert.is(
      left(
        registry.decode('BudgetReserved', 3, {
          ...v1,
          request_digest: digest,
          requester: { ...requester, name: 'evil\u001b[2J' }
        })
      ).code,
      'EVENT_DATA_INVALID'
    )
    assert.is(
      left(
        registry.decode('BudgetReserved', 3, {
          ...v1,
          request_digest: digest,
          requester: { ...requester, name: 'x'.repeat(129) }
        })
      ).code,
      'EVENT_DATA_INVALID'
    )
    assert.is(
      left(registry.decode('BudgetReserved', 3, { ...v1, request_digest: digest })).code,
      'EVENT_DATA_INVALID',
      'version 3 names its requester (or null)'
    )
  }
)

upcasting('chains upcasters across several versions', () => {
  const V1 = t.type({ a: t.number })
  const V2 = t.type({ a: t.number, b: t.string })
  const V3 = t.type({ total: t.number, b: t.string })
  const r = makeRegistry([
    defineEvent('Thing', V3, [
      { codec: V1, upcast: (d) => ({ ...(d as { a: number }), b: 'default' }) },
      {
        codec: V2,
        upcast: (d) => {
          const v = d as { a: number; b: string }
          return { total: v.a * 2, b: v.b }
        }
      }
    ])
  ])
  assert.equal(right(r.decode('Thing', 1, { a: 2 })), { total: 4, b: 'default' })
  assert.equal(right(r.decode('Thing', 2, { a: 3, b: 'x' })), { total: 6, b: 'x' })
  assert.is(left(r.decode('Thing', 1, { a: 'two' })).code, 'EVENT_DATA_INVALID')
  assert.is(left(r.decode('Thing', 4, {})).code, 'EVENT_UNKNOWN_VERSION')
  assert.is(left(r.decode('Other', 1, {})).code, 'EVENT_UNKNOWN_TYPE')
})

upcasting('an upcaster producing invalid data is a coded error, not a crash', () => {
  const r = makeRegistry([
    defineEvent('X', t.type({ n: t.number }), [{ codec: t.type({}), upcast: () => ({ n: 'no' }) }])
  ])
  assert.is(left(r.decode('X', 1, {})).code, 'EVENT_DATA_INVALID')
})

upcasting('refuses duplicate type names', () => {
  assert.throws(() => makeRegistry([defineEvent('X', t.type({})), defineEvent('X', t.type({}))]))
})

upcasting.run()
