/**
 * `vba mcp --http` with the SDK's own Client over Streamable HTTP: the token (from the variable or
 * a file, never argv), the Host and Origin checks, a whole investigation, and two clients making
 * 50 calls each on one case at once: no conflict surfaced, every answer attributed to its client;
 * a session that outlives a restart of the server.
 */
import { suite } from 'uvu'
import { hostname } from 'node:os'
import * as assert from 'uvu/assert'
import { writeFileSync } from 'node:fs'
import { request } from 'node:http'
import * as path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { verifyCase } from '../../src/fp.js'
import { right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import {
  caseEvents as events,
  connectHttp as connect,
  MCP_TOKEN as TOKEN,
  mcpWorld,
  rejection,
  startHttp,
  textOf,
  WOLF
} from '../helpers/mcp.js'

const { profile, newCase } = await mcpWorld('case-http', 300)
const serve = (dir: string) => startHttp(['--config', profile, '--case', dir])

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } }
}

/** A raw POST of `message` (an initialize request unless told; or a DELETE) with `headers`: the status and the body. */
const post = (
  port: number,
  headers: Record<string, string>,
  message: unknown = INITIALIZE,
  method = 'POST'
): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const body = method === 'POST' ? JSON.stringify(message) : ''
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }
      },
      (res) => {
        let text = ''
        res.on('data', (d) => {
          text += d
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
      }
    )
    req.on('error', reject)
    req.end(body)
  })

const http = suite('vba mcp --http')

http(
  'refuses a missing or wrong token, a foreign Origin and a foreign Host; the token never comes from argv',
  async () => {
    const dir = newCase()
    const server = await serve(dir)
    const port = server.port
    try {
      const ok = { authorization: `Bearer ${TOKEN}` }
      const missing = await post(port, {})
      assert.is(missing.status, 401)
      assert.match(missing.body, 'TOKEN_MISSING')
      const wrong = await post(port, { authorization: 'Bearer not-the-token-at-all' })
      assert.is(wrong.status, 401)
      assert.match(wrong.body, 'TOKEN_INVALID')
      const origin = await post(port, { ...ok, origin: 'http://evil.example' })
      assert.is(origin.status, 403)
      assert.match(origin.body, 'ORIGIN_NOT_ALLOWED')
      const host = await post(port, { ...ok, host: `evil.example:${port}` })
      assert.is(host.status, 403)
      assert.match(host.body, 'HOST_NOT_ALLOWED')
      const own = await post(port, { ...ok, origin: `http://localhost:${port}` })
      assert.is(own.status, 200, own.body)
      // the scheme's case is free (RFC 9110): a client sending "bearer" is not told its token is missing
      const lower = await post(port, { authorization: `bearer ${TOKEN}` })
      assert.is(lower.status, 200, lower.body)
      const lowerWrong = await post(port, { authorization: 'bearer not-the-token-at-all' })
      assert.match(lowerWrong.body, 'TOKEN_INVALID')
    } finally {
      await server.stop()
    }
    assert.equal(
      events(dir).filter((e) => e.type === 'InvestigationStarted'),
      [],
      'refused requests change nothing'
    )
    // Bound to every address, it answers a Host naming any address or the name of this machine,
    // and still refuses another (every Host was refused, the wildcard being no name a client sends).
    const wild = await startHttp(['--config', profile, '--case', dir], '0.0.0.0:0')
    try {
      const ok = { authorization: `Bearer ${TOKEN}` }
      for (const host of [`127.0.0.1:${wild.port}`, `localhost:${wild.port}`, `${hostname()}:${wild.port}`]) {
        const r = await post(wild.port, { ...ok, host })
        assert.is(r.status, 200, `${host}: ${r.body}`)
      }
      const foreign = await post(wild.port, { ...ok, host: `evil.example:${wild.port}` })
      assert.is(foreign.status, 403)
      assert.match(foreign.body, 'HOST_NOT_ALLOWED')
    } finally {
      await wild.stop()
    }
    const noToken = vba(['mcp', '--config', profile, '--case', dir, '--http', '127.0.0.1:0'], {
      env: { VBA_MCP_TOKEN: '' }
    })
    assert.is(noToken.code, 2, noToken.stderr)
    assert.match(noToken.stderr, /^vba: INVALID_ARGUMENT: vba mcp --http needs a bearer token/m)
    const argv = vba(['mcp', '--config', profile, '--case', dir, '--http', '127.0.0.1:0', '--token', TOKEN])
    assert.ok(argv.code !== 0, argv.stderr)
    assert.not.match(argv.stderr + argv.stdout, TOKEN, 'no option takes the token')
    const file = path.join(tempDir('mcp-http-token'), 'token')
    writeFileSync(file, `${TOKEN}\n`)
    const help = vba(['mcp', '--help'])
    assert.match(help.stdout, '--token-file')
  }
)

http(
  'a whole investigation over Streamable HTTP; two clients x 50 calls at once: no conflict, no misattribution',
  async () => {
    const dir = newCase()
    const server = await serve(dir)
    const url = server.url
    try {
      const a = await connect(url, 'agent-a')
      const b = await connect(url, 'agent-b')
      try {
        const ask = (c: Client, entry: number) =>
          c.callTool({
            name: 'database_count',
            arguments: { table: 'creature_template', filters: [{ column: 'entry', operator: 'eq', value: entry }] }
          })
        const [ra, rb] = await Promise.all([
          Promise.all(Array.from({ length: 50 }, (_, i) => ask(a, 1 + i))),
          Promise.all(Array.from({ length: 50 }, (_, i) => ask(b, 1001 + i)))
        ])
        const all = [...ra.map((r) => ['agent-a', r] as const), ...rb.map((r) => ['agent-b', r] as const)]
        for (const [, r] of all) assert.not.ok(r.isError, textOf(r))
        // Every answer's evidence was reserved for the client that asked.
        const byEvidence = new Map<string, string>()
        const reservations = new Map<string, string>()
        for (const e of events(dir)) {
          if (e.type === 'BudgetReserved' && e.data['requester'] !== null)
            reservations.set(String(e.data['reservation_id']), (e.data['requester'] as { name: string }).name)
          if (e.type === 'CaptureRecorded')
            byEvidence.set(String(e.data['evidence_id']), reservations.get(String(e.data['reservation_id'])) ?? '')
        }
        for (const [client, r] of all) {
          const id = (r.structuredContent as { evidence_id: string }).evidence_id
          assert.is(byEvidence.get(id), client, `${id} was asked by ${client}`)
        }
        assert.is(new Set(all.map(([, r]) => (r.structuredContent as { evidence_id: string }).evidence_id)).size, 100)
        // The investigation, decided by agent-a.
        assert.not.ok(
          (await a.callTool({ name: 'interpretation_record', arguments: { summary: 'the net despawns it' } })).isError
        )
        const read = await a.callTool({
          name: 'source_read',
          arguments: { path: WOLF, start_line: 1, end_line: 20 }
        })
        const e = (read.structuredContent as { evidence_id: string }).evidence_id
        const steps: Array<[string, Record<string, unknown>]> = [
          ['hypothesis_propose', { statement: 'the net spell despawns it', evidence: [e] }],
          ['hypothesis_update', { hypothesis_id: 'H1', status: 'supported', evidence: [e], note: 'DespawnOrUnsummon' }],
          ['conclude', { summary: `despawned by the net spell (${e})`, hypotheses: ['H1'], evidence: [e] }]
        ]
        for (const [name, args] of steps) {
          const r = await a.callTool({ name, arguments: args })
          assert.not.ok(r.isError, `${name}: ${textOf(r)}`)
        }
        assert.equal(
          (await b.listTools()).tools.map((t) => t.name),
          ['case_status'],
          'the other session sees the concluded case too'
        )
      } finally {
        await a.close()
        await b.close()
      }
    } finally {
      await server.stop()
    }
    const v = right(await verifyCase(dir)())
    assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
    const deciders = events(dir)
      .filter((x) => x.type === 'ModelResponded')
      .map((x) => (x.data['provenance'] as { requester: { name: string } }).requester.name)
    assert.equal(deciders, ['agent-a', 'agent-a', 'agent-a', 'agent-a'])
  }
)

http(
  'a session outlives a restart: the client goes on with its session id, attributed to it; a forged id is 404',
  async () => {
    const dir = newCase()
    const first = await serve(dir)
    const client = await connect(first.url, 'agent-resumed')
    let second: Awaited<ReturnType<typeof serve>> | null = null
    try {
      const before = await client.callTool({ name: 'source_files', arguments: { text: 'wolpertinger' } })
      assert.not.ok(before.isError, textOf(before))
      await first.stop()
      second = await startHttp(['--config', profile, '--case', dir], `127.0.0.1:${first.port}`)
      // The same client, the same transport and session id, on the restarted server.
      const after = await client.callTool({
        name: 'source_read',
        arguments: { path: WOLF, start_line: 1, end_line: 5 }
      })
      assert.not.ok(after.isError, textOf(after))
      assert.match(second.stderr(), 'vba mcp: resumed session of agent-resumed on /mcp')
      assert.ok(
        (await client.listTools()).tools.some((t) => t.name === 'conclude' || t.name === 'interpretation_record')
      )
      const forged = await post(first.port, {
        authorization: `Bearer ${TOKEN}`,
        'mcp-session-id': 'v1.AAAAAAAAAAAAAAAA.WyJ4Il0.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
      })
      assert.is(forged.status, 404, forged.body)
      assert.match(forged.body, 'SESSION_UNKNOWN')
    } finally {
      await client.close()
      await first.stop()
      await second?.stop()
    }
    const reserved = events(dir).filter((e) => e.type === 'BudgetReserved')
    assert.is(reserved.length, 2)
    for (const e of reserved) assert.is((e.data['requester'] as { name: string }).name, 'agent-resumed')
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

/** A tools/call of case_status in the session `id` over a raw POST (as a client that kept the id would). */
const callIn = (port: number, id: string) =>
  post(
    port,
    { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' },
    { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'case_status', arguments: {} } }
  )

/** A client named `name` on `url` and its transport (whose session it can end with a DELETE). */
const openClient = async (url: URL, name: string) => {
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } }
  })
  const client = new Client({ name, version: '1.0' })
  await client.connect(transport)
  return { client, transport, id: transport.sessionId ?? '' }
}

http('a session the client ended (DELETE) stays ended across restarts; one it did not end goes on', async () => {
  const dir = newCase()
  let server = await serve(dir)
  const port = server.port
  const restart = async () => {
    await server.stop()
    server = await startHttp(['--config', profile, '--case', dir], `127.0.0.1:${port}`)
  }
  const ended = await openClient(server.url, 'agent-ended')
  const kept = await openClient(server.url, 'agent-kept')
  const later = await openClient(server.url, 'agent-ended-later')
  try {
    assert.is((await callIn(port, ended.id)).status, 200)
    await ended.transport.terminateSession()
    const refused = await callIn(port, ended.id)
    assert.is(refused.status, 404, refused.body)
    await restart()
    const afterRestart = await callIn(port, ended.id)
    assert.is(afterRestart.status, 404, afterRestart.body)
    assert.match(afterRestart.body, 'SESSION_UNKNOWN')
    assert.not.match(server.stderr(), 'resumed session of agent-ended on')
    // Not ended: it goes on after the restart, attributed to its client.
    const goesOn = await kept.client.callTool({ name: 'case_status', arguments: {} })
    assert.not.ok(goesOn.isError, textOf(goesOn))
    assert.match(server.stderr(), 'vba mcp: resumed session of agent-kept on /mcp')
    // Ended after a restart (taken back, then ended): ended after the next restart too.
    await later.transport.terminateSession()
    await restart()
    const endedLater = await callIn(port, later.id)
    assert.is(endedLater.status, 404, endedLater.body)
    assert.match(endedLater.body, 'SESSION_UNKNOWN')
    assert.is((await callIn(port, kept.id)).status, 200, 'the session not ended still goes on')
  } finally {
    await Promise.allSettled([ended.client.close(), kept.client.close(), later.client.close()])
    await server.stop()
  }
  // Where the end cannot be recorded, it is refused with a coded message and the session goes on.
  const notADir = path.join(tempDir('mcp-state-file'), 'state')
  writeFileSync(notADir, 'a file, not a folder')
  const unwritable = await startHttp(['--config', profile, '--case', dir], '127.0.0.1:0', {
    XDG_STATE_HOME: notADir
  })
  const stays = await openClient(unwritable.url, 'agent-stays')
  try {
    const end = await rejection(stays.transport.terminateSession())
    assert.is(end.code, 500, end.message)
    const ended = await post(
      unwritable.port,
      { authorization: `Bearer ${TOKEN}`, 'mcp-session-id': stays.id, 'mcp-protocol-version': '2025-06-18' },
      undefined,
      'DELETE'
    )
    assert.is(ended.status, 500)
    assert.match(ended.body, 'IO_ERROR: the end of the session cannot be recorded')
    assert.not.match(ended.body, notADir, 'the client is not told the server paths')
    assert.match(unwritable.stderr(), /vba mcp: IO_ERROR: the ended MCP sessions cannot be recorded in \S+ \(ENOTDIR\)/)
    assert.is((await callIn(unwritable.port, stays.id)).status, 200, 'the session was not ended')
  } finally {
    await stays.client.close()
    await unwritable.stop()
  }
})

http.run()
