/**
 * bench/mcp: what an MCP tool call adds to the same query through the library. Two copies of one
 * prepared case of the demo world (SQLite world, demo core repository); the same sequence of
 * distinct questions goes to `vba mcp` over stdio (the SDK's Client) for one copy and to
 * `queryInCase` in this process (the library's recorded query, the same path `vba case query`
 * takes) for the other, interleaved, so both logs grow alike; the same over Streamable HTTP
 * (`vba mcp --http`, the SDK's StreamableHTTPClientTransport) for a third copy. Also the bare
 * query (nothing recorded) and a call answered from the case. Target: the MCP call adds under
 * 20 ms on either transport.
 *
 *   node dist/bench/mcp.js [--runs N] [--dir DIR]   (DIR: where the cases live, e.g. /dev/shm to leave fsync out)
 */
import * as path from 'node:path'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawn } from 'node:child_process'
import { writeDemoWorld } from '../src/demo/world.js'
import { initCase } from '../src/fp.js'
import { loadProfile } from '../src/fp.js'
import { createProjectResearch } from '../src/research/project-research.js'
import { openSourceResearch } from '../src/research/source/open.js'
import { enrichmentConfig } from '../src/commands/prepare.js'
import { prepareRevision } from '../src/fp.js'
import { queryInCase } from '../src/fp.js'
import { machine, median, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  runs: { type: 'string', default: '150' },
  dir: { type: 'string', default: os.tmpdir() }
})
const RUNS = Number(values.runs)
const WARMUP = 10

const must = <A>(r: { _tag: 'Left'; left: { code: string; message: string } } | { _tag: 'Right'; right: A }): A => {
  if (r._tag === 'Left') throw new Error(`${r.left.code}: ${r.left.message}`)
  return r.right
}
const ms = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e6

const dir = mkdtempSync(path.join(values.dir, 'vba-bench-mcp-'))
process.env['XDG_CACHE_HOME'] = path.join(dir, 'cache')
try {
  const world = await writeDemoWorld(path.join(dir, 'world'))
  writeFileSync(
    world.profile,
    readFileSync(world.profile, 'utf8').replace(/\[budget\]\ntotal = \d+/, '[budget]\ntotal = 100000')
  )
  const profile = must(await loadProfile(world.profile)())
  const research = createProjectResearch(profile, { openSource: openSourceResearch })
  const template = path.join(dir, 'template')
  must(await initCase({ dir: template, caseId: 'bench-mcp' })())
  must(
    await prepareRevision(template, research, must(enrichmentConfig(profile)), {
      report: 'The wild wolpertinger vanishes when netted.',
      entities: [{ type: 'creature', id: 23487 }]
    })()
  )
  const viaMcp = path.join(dir, 'case-mcp')
  const viaLibrary = path.join(dir, 'case-library')
  const viaHttp = path.join(dir, 'case-http')
  cpSync(template, viaMcp, { recursive: true })
  cpSync(template, viaLibrary, { recursive: true })
  cpSync(template, viaHttp, { recursive: true })

  const main = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vba', 'main.js')
  const env = Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined))
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [main, 'mcp', '--config', world.profile, '--case', viaMcp],
    env,
    stderr: 'ignore'
  })
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(transport)
  // The library's reference (and the HTTP server's copy) starts on a case the MCP server started
  // (the prompt investigate starts it, with the same settings).
  await client.getPrompt({ name: 'investigate' })
  for (const to of [viaLibrary, viaHttp]) {
    cpSync(path.join(viaMcp, 'events.jsonl'), path.join(to, 'events.jsonl'))
    cpSync(path.join(viaMcp, 'HEAD'), path.join(to, 'HEAD'))
    cpSync(path.join(viaMcp, 'objects'), path.join(to, 'objects'), { recursive: true })
  }
  const token = 'bench-token-0123456789abcdef'
  const server = spawn(
    process.execPath,
    [main, 'mcp', '--config', world.profile, '--case', viaHttp, '--http', '127.0.0.1:0'],
    {
      env: { ...env, VBA_MCP_TOKEN: token }
    }
  )
  const url = await new Promise<string>((resolve, reject) => {
    let err = ''
    server.stderr.on('data', (d) => {
      err += d
      const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(err)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    server.once('exit', (code) => reject(new Error(`vba mcp --http exited with ${String(code)}: ${err}`)))
  })
  const httpClient = new Client({ name: 'bench-http', version: '1' })
  await httpClient.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
  )

  type Kind = 'database.count' | 'source.read'
  // Distinct questions: the i-th asks another lower bound, or another read window.
  const args = (kind: Kind, i: number): Record<string, unknown> =>
    kind === 'database.count'
      ? { table: 'creature_template', filters: [{ column: 'entry', operator: 'ge', value: i }] }
      : { path: 'src/server/scripts/World/npc_wolpertinger.cpp', start_line: 1 + (i % 20), end_line: 30 + i }

  const rows: string[] = []
  let n = 0
  // The library's command id of each question, to ask it again (answered from the case).
  const asked = new Map<string, string>()
  for (const kind of ['database.count', 'source.read'] as const) {
    const mcp: number[] = []
    const overHttp: number[] = []
    const addedHttp: number[] = []
    const lib: number[] = []
    const bare: number[] = []
    const added: number[] = []
    const viaServer = async (a: Record<string, unknown>, c = client): Promise<number> => {
      const t0 = process.hrtime.bigint()
      const r = await c.callTool({ name: kind.replace('.', '_'), arguments: a })
      if (r.isError === true) throw new Error(`mcp call failed: ${JSON.stringify(r.content)}`)
      return ms(t0)
    }
    const viaLib = async (a: Record<string, unknown>): Promise<number> => {
      const id = `bench-${++n}`
      asked.set(JSON.stringify({ ...a, kind }), id)
      const t0 = process.hrtime.bigint()
      const l = must(await queryInCase(viaLibrary, research, { ...a, kind }, id)())
      if (l.outcome !== 'recorded') throw new Error('library call failed')
      return ms(t0)
    }
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const a = args(kind, i + 1)
      // Alternate who goes first, so a disk flush or a busy neighbour hurts both alike.
      const [tm, tl] =
        i % 2 === 0
          ? [await viaServer(a), await viaLib(a)]
          : ([await viaLib(a), await viaServer(a)].reverse() as [number, number])
      const th = await viaServer(a, httpClient)
      const t0 = process.hrtime.bigint()
      must(await research.query({ ...a, kind })())
      const tb = ms(t0)
      if (i >= WARMUP) {
        overHttp.push(th)
        addedHttp.push(th - tl)
        mcp.push(tm)
        lib.push(tl)
        bare.push(tb)
        added.push(tm - tl)
      }
    }
    const [m, l, b, d] = [median(mcp), median(lib), median(bare), median(added)]
    rows.push(
      `${kind.padEnd(15)} MCP call ${m.toFixed(2)} ms | library queryInCase ${l.toFixed(2)} ms | bare query ${b.toFixed(2)} ms | MCP adds ${d.toFixed(2)} ms (median of paired differences; ${(m / l).toFixed(2)}x; target < 20 ms); recording adds ${(l - b).toFixed(2)} ms to the bare query`,
      `${''.padEnd(15)} over Streamable HTTP ${median(overHttp).toFixed(2)} ms | MCP over HTTP adds ${median(addedHttp).toFixed(2)} ms (median of paired differences; target < 20 ms)`
    )
  }
  // An identical call, answered from the case on both sides: open, the recorded outcome, the
  // capture; no query, no fsync. What is left between the two is the protocol.
  const againMcp: number[] = []
  const againLib: number[] = []
  const againAdded: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const a = args('database.count', 1 + WARMUP + (i % RUNS))
    let t0 = process.hrtime.bigint()
    const r = await client.callTool({ name: 'database_count', arguments: a })
    const tm = ms(t0)
    if ((r.structuredContent as { answered_from_case?: boolean } | undefined)?.answered_from_case !== true)
      throw new Error('expected an answer from the case')
    t0 = process.hrtime.bigint()
    const l = must(
      await queryInCase(
        viaLibrary,
        research,
        { ...a, kind: 'database.count' },
        asked.get(JSON.stringify({ ...a, kind: 'database.count' })) ?? 'none'
      )()
    )
    const tl = ms(t0)
    if (!l.answeredFromCase) throw new Error('expected the library to answer from the case')
    againMcp.push(tm)
    againLib.push(tl)
    againAdded.push(tm - tl)
  }
  rows.push(
    `answered from the case (an identical call) MCP ${median(againMcp).toFixed(2)} ms | library ${median(againLib).toFixed(2)} ms | MCP adds ${median(againAdded).toFixed(2)} ms (no query, no fsync: the protocol's own cost)`
  )
  const events = readFileSync(path.join(viaMcp, 'events.jsonl'), 'utf8').split('\n').length - 1
  process.stdout.write(
    `bench/mcp  ${new Date().toISOString().slice(0, 10)}  ${machine()}  median of ${RUNS} calls each, same questions, interleaved; logs end at ${events} events\n${rows.join('\n')}\n`
  )
  await client.close()
  await httpClient.close()
  await new Promise<void>((resolve) => {
    server.once('exit', () => resolve())
    server.kill('SIGTERM')
  })
  await research.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
