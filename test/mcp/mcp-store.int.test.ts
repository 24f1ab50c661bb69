/**
 * `vba mcp --store URL` on a case in a SQL store on the machine's PostgreSQL, driven by the SDK's
 * Client: calls recorded in the store (verifying, with the client's name), a case leased by a
 * worker refused at start-up (exit 4, CASE_LEASED), and a lease taken during the session answered
 * as a retryable tool error that records nothing.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { openVba } from '../../src/index.js'
import { openSqlStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { vba } from '../helpers/cli.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'
import { connectMcp, mcpWorld, textOf, WOLF } from '../helpers/mcp.js'

const { profile, newCase } = await mcpWorld('case-mcp-store', 10)

const test = suite('vba mcp on a SQL store (PostgreSQL)')
let t: TestStore
let store: SqlStore

test.before(async () => {
  t = await postgresStore('mcp')
  const m = vba(['store', 'migrate', '--store', t.url])
  assert.is(m.code, 0, m.stderr)
  store = await openSqlStore(t.url)
  // A prepared case, written as a directory and imported (verified) into the store.
  const dir = newCase()
  await store.importDirectory(dir)
})

test.after(async () => {
  await store.close()
  await t.drop()
})

const mcpArgs = (): string[] => ['--config', profile, '--case', 'case-mcp-store', '--store', t.url]

test('calls are recorded in the store: the case verifies and names the client on each reservation', async () => {
  const c = await connectMcp(mcpArgs(), { name: 'store-agent', version: '3.1' })
  try {
    for (const [name, a] of [
      ['database_count', { table: 'quest_template', filters: [] }],
      ['source_read', { path: WOLF, start_line: 1, end_line: 4 }]
    ] as const) {
      const r = await c.client.callTool({ name, arguments: a })
      assert.not.ok(r.isError, textOf(r))
    }
  } finally {
    await c.close()
  }
  const v = vba(['verify', 'case-mcp-store', '--store', t.url])
  assert.is(v.code, 0, v.stdout + v.stderr)
  const api = await openVba({ store: t.url })
  try {
    const events = await api.cases.events('case-mcp-store')
    const reserved = events.filter((e) => e.type === 'BudgetReserved' && e.command_id.startsWith('mcp-'))
    assert.is(reserved.length, 2)
    for (const e of reserved)
      assert.equal(e.type === 'BudgetReserved' ? e.data.requester : null, {
        protocol: 'mcp',
        name: 'store-agent',
        version: '3.1'
      })
    assert.is(events.filter((e) => e.type === 'CaptureRecorded').length, 2)
  } finally {
    await api.close()
  }
})

test('a case a worker holds is refused at start-up (CASE_LEASED, exit 4); a lease taken during the session is a retryable tool error that records nothing', async () => {
  const lease = await store.leaseCase('case-mcp-store', 'worker-7', 60_000)
  const refused = vba(['mcp', ...mcpArgs()])
  assert.is(refused.code, 4, refused.stderr)
  assert.match(refused.stderr, /^vba: CASE_LEASED: the case is being worked on by worker-7/m)
  assert.ok(await store.release(lease))
  const c = await connectMcp(mcpArgs())
  try {
    const generation = (await store.open('case-mcp-store')).cursor.seq
    const held = await store.leaseCase('case-mcp-store', 'worker-8', 60_000)
    const q = { name: 'database_schema', arguments: { table: 'creature_template' } }
    const r = await c.client.callTool(q)
    assert.ok(r.isError)
    assert.ok(textOf(r).startsWith('CASE_LEASED: '), textOf(r))
    assert.match(textOf(r), 'retry the same call once the worker has released the case')
    assert.is((await store.open('case-mcp-store')).cursor.seq, generation, 'nothing recorded')
    assert.ok(await store.release(held))
    const again = await c.client.callTool(q)
    assert.not.ok(again.isError, textOf(again))
  } finally {
    await c.close()
  }
  assert.is(vba(['verify', 'case-mcp-store', '--store', t.url]).code, 0)
})

test.run()
