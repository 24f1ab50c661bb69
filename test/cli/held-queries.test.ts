/**
 * vba status's held queries (src/cli/held-queries.ts): an operator's `vba case query` is retried
 * with its command id; an MCP client's call, which reserves through the same case query under an
 * id of its own, is retried by the client's identical call.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import type { RecordedEvent } from '../../src/events/chain.js'
import { heldQueriesProjection, heldQueryLines } from '../../src/cli/held-queries.js'

const event = (seq: number, type: string, commandId: string, data: Record<string, unknown>): RecordedEvent =>
  ({
    seq,
    id: `e${seq}`,
    type,
    version: 1,
    at: '2026-12-07T10:00:00.000Z',
    actor: 'operator',
    command_id: commandId,
    data,
    prev: 'sha256:0',
    hash: 'sha256:1'
  }) as unknown as RecordedEvent

const reserved = (seq: number, id: string, commandId: string, requester: unknown): RecordedEvent =>
  event(seq, 'BudgetReserved', commandId, {
    reservation_id: id,
    action: 'project.query',
    amount: 1,
    plan_id: null,
    request_digest: null,
    requester,
    request: { kind: 'source.files', text: 'wolpertinger' }
  })

const held = suite('held queries')

held('an operator query is retried with its command id; an MCP call by its client; a consumed one is gone', () => {
  const p = heldQueriesProjection
  let s = p.init()
  s = p.evolve(s, reserved(1, 'res-op', 'q-7.reserve', null))
  s = p.evolve(
    s,
    event(2, 'ResearchFailed', 'q-7.run', {
      reservation_id: 'res-op',
      code: 'DATABASE_UNAVAILABLE',
      message: 'down',
      unavailable: true
    })
  )
  s = p.evolve(s, reserved(3, 'res-mcp', 'mcp-abc-def.reserve', { protocol: 'mcp', name: 'agent-a', version: '1.2' }))
  s = p.evolve(s, reserved(4, 'res-done', 'q-8.reserve', null))
  s = p.evolve(s, event(5, 'BudgetConsumed', 'q-8.run', { reservation_id: 'res-done', amount: 1 }))
  const view = p.view(s)
  assert.equal(
    view.map((h) => [h.reservation_id, h.command_id, h.by_query_command, h.requester, h.failed]),
    [
      ['res-op', 'q-7', true, null, 'DATABASE_UNAVAILABLE'],
      ['res-mcp', 'mcp-abc-def', false, 'agent-a 1.2', null]
    ]
  )
  const lines = heldQueryLines(view, 'cases/-x')
  assert.match(lines[0] ?? '', /retry with vba case query cases\/-x --config PROFILE --query FILE --command-id q-7$/)
  assert.match(
    lines[1] ?? '',
    /asked by agent-a 1\.2 over MCP, in flight or interrupted\): the client's identical call retries it/
  )
})

held.run()
