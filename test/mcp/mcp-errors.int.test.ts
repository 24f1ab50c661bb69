/**
 * Every error a client can cause over `vba mcp` carries the failure code: its JSON-RPC message
 * starts with it and `data.code` holds it (an unknown tool, method or prompt; a request the SDK's
 * schemas refuse; arguments of the wrong shape, case_status's included), and argument errors say
 * what a member takes in words, not the codec's name. Raw JSON-RPC lines over stdio (a real
 * process, the demo world's SQLite snapshot: no database server), so malformed requests reach it.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { tempDir } from '../helpers/fs.js'
import { VBA_BIN, vba } from '../helpers/cli.js'
import { caseEvents } from '../helpers/mcp.js'

const world = tempDir('mcp-errors')
const profile = path.join(world, 'demo', 'project.toml')
const dir = path.join(world, 'case')
const report = path.join(world, 'report.json')
for (const args of [
  ['demo-world', path.join(world, 'demo')],
  ['case', 'init', dir],
  ['case', 'prepare', dir, '--config', profile, '--input', report]
]) {
  if (args[0] === 'case' && args[1] === 'init')
    writeFileSync(report, JSON.stringify({ report: 'The wild wolpertinger vanishes when netted.', entities: [] }))
  const r = vba(args)
  if (r.code !== 0) throw new Error(`vba ${args.join(' ')}: ${r.stderr}`)
}

type Reply = { id?: unknown; result?: unknown; error?: { code: number; message: string; data?: { code?: unknown } } }

/** `vba mcp` on the case, spoken to in raw JSON-RPC lines. */
const server = () => {
  const child = spawn(process.execPath, [VBA_BIN, 'mcp', '--config', profile, '--case', dir])
  let buf = ''
  let n = 0
  const waiting = new Map<number, (r: Reply) => void>()
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8')
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, i)) as Reply
      buf = buf.slice(i + 1)
      if (typeof m.id === 'number') waiting.get(m.id)?.(m)
    }
  })
  const request = (method: string, params?: unknown): Promise<Reply> =>
    new Promise((resolve) => {
      const id = ++n
      waiting.set(id, resolve)
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) })}\n`
      )
    })
  const close = (): Promise<void> =>
    new Promise((resolve) => {
      child.once('exit', () => resolve())
      child.stdin.end()
    })
  return { request, close }
}

/** The reply is an error of JSON-RPC code `rpc` whose message starts with `code` and whose data names it. */
const coded = (r: Reply, rpc: number, code: string, label: string): string => {
  assert.ok(r.error !== undefined, `${label}: an error (${JSON.stringify(r).slice(0, 200)})`)
  assert.is(r.error?.code, rpc, `${label}: ${r.error?.message}`)
  assert.ok(r.error?.message.startsWith(`${code}: `), `${label}: ${r.error?.message}`)
  assert.is(r.error?.data?.code, code, `${label}: data.code`)
  assert.not.match(r.error?.message ?? '', /MCP error|"invalid_type"|\n/, label)
  return r.error?.message ?? ''
}

const errors = suite('vba mcp: the errors a client can cause are coded')

errors('unknown tools, methods and prompts, malformed requests and arguments: coded, nothing recorded', async () => {
  const s = server()
  try {
    const init = await s.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'hostile', version: '0' }
    })
    assert.ok(init.result !== undefined, JSON.stringify(init))
    const before = caseEvents(dir).length
    const call = (name: string, args: unknown) => s.request('tools/call', { name, arguments: args })

    assert.match(coded(await call('shell_exec', {}), -32602, 'TOOL_UNKNOWN', 'unknown tool'), 'offers source_files')
    for (const method of ['foo/bar', 'resources/subscribe', 'completion/complete', 'logging/setLevel'])
      assert.match(coded(await s.request(method, {}), -32601, 'METHOD_UNKNOWN', method), 'it serves initialize')
    coded(await s.request('prompts/get', { name: 'nope' }), -32602, 'PROMPT_UNKNOWN', 'unknown prompt')
    // What the SDK's own schemas refuse: -32602 in words, not -32603 with a schema dump.
    assert.match(
      coded(await s.request('resources/read', {}), -32602, 'INVALID_ARGUMENT', 'no uri'),
      'resources/read: params.uri is missing: it must be a string'
    )
    assert.match(
      coded(await s.request('prompts/get', { name: 3 }), -32602, 'INVALID_ARGUMENT', 'name a number'),
      'params.name must be a string'
    )
    coded(await s.request('tools/list', { cursor: 5 }), -32602, 'INVALID_ARGUMENT', 'cursor')
    coded(await s.request('initialize', { protocolVersion: 5 }), -32602, 'INVALID_ARGUMENT', 'initialize')
    coded(await s.request('tools/call', {}), -32602, 'INVALID_ARGUMENT', 'no tool name')
    // case_status takes nothing, as its input schema says
    coded(await call('case_status', { x: 1 }), -32602, 'INVALID_ARGUMENT', 'case_status members')
    coded(await call('case_status', [1]), -32602, 'INVALID_ARGUMENT', 'case_status list')
    assert.is((await call('case_status', {})).error, undefined, 'case_status {} answers')
    // Arguments in words, not codec names (LineNumber, Limit, Operator, Array<string>).
    const read = { path: 'src/server/scripts/World/npc_wolpertinger.cpp', end_line: 2 }
    for (const start of [0, '1', 1.5])
      assert.is(
        coded(await call('source_read', { ...read, start_line: start }), -32602, 'QUERY_INVALID', String(start)),
        'QUERY_INVALID: source.read: start_line must be a whole number from 1'
      )
    assert.match(
      coded(await call('source_read', { start_line: 1, end_line: 2 }), -32602, 'QUERY_INVALID', 'no path'),
      'path is missing: it must be a string of 1-1024 characters'
    )
    const rows = { table: 'creature_template', columns: ['entry'], filters: [], offset: 0, limit: 1 }
    assert.match(
      coded(await call('database_rows', { ...rows, limit: 0 }), -32602, 'QUERY_INVALID', 'limit'),
      'limit must be a whole number from 1'
    )
    assert.match(
      coded(
        await call('database_rows', { ...rows, filters: [{ column: 'entry', operator: 'like', value: 1 }] }),
        -32602,
        'QUERY_INVALID',
        'operator'
      ),
      'filters.0.operator must be one of "eq", "ne", "lt", "le", "gt", "ge", "contains", "in"'
    )
    assert.is(
      coded(await call('interpretation_record', { summary: 5 }), -32602, 'INVALID_ARGUMENT', 'summary'),
      'INVALID_ARGUMENT: summary must be a string'
    )
    assert.is(
      coded(
        await call('hypothesis_propose', { statement: 'x', evidence: 'E1' }),
        -32602,
        'INVALID_ARGUMENT',
        'evidence'
      ),
      'INVALID_ARGUMENT: evidence must be a list (each a string)'
    )
    assert.is(caseEvents(dir).length, before, 'nothing recorded')
    assert.ok((await s.request('ping')).result !== undefined, 'the server stays up')
  } finally {
    await s.close()
  }
})

errors.run()
