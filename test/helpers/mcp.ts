/**
 * Driving the real `vba mcp` (the bundle dist/vba/main.js) with the official SDK's client, over stdio
 * and over Streamable HTTP, and the world and prepared case the MCP tests share.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { cpSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase, loadProfile, prepareRevision } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { VBA_BIN } from './cli.js'
import { mariaProfile, mariaWorld, type SharedMariaDb } from './world.js'
import { buildTestRepo, type TestRepo } from './git-repo.js'
import { repoRoot, right, tempDir } from './fs.js'

export interface McpConnection {
  readonly client: Client
  /** What the server wrote to stderr so far. */
  readonly stderr: () => string
  /** Closes the client (the server sees its stdin end) and resolves once the server exited. */
  readonly close: () => Promise<void>
}

/** The environment of this process (the runner's cache home, the database password variable). */
export const processEnv = (extra: Record<string, string> = {}): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined)),
  ...extra
})

/** Starts `vba mcp ARGS` and connects a client named `name`/`version` to it. */
export const connectMcp = async (
  args: readonly string[],
  o: { readonly name?: string; readonly version?: string; readonly env?: Record<string, string> } = {}
): Promise<McpConnection> => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [VBA_BIN, 'mcp', ...args],
    env: processEnv(o.env),
    stderr: 'pipe'
  })
  let err = ''
  transport.stderr?.on('data', (d: Buffer) => {
    err += d.toString('utf8')
  })
  const client = new Client({ name: o.name ?? 'test-agent', version: o.version ?? '1.2.3' })
  try {
    await client.connect(transport)
  } catch (e) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    throw new Error(`vba mcp did not start: ${(e as Error).message}; stderr: ${err}`)
  }
  return { client, stderr: () => err, close: () => client.close() }
}

/** Resolves to the error a promise rejects with (fails when it resolves). */
export const rejection = async (p: Promise<unknown>): Promise<Error & { code?: unknown }> => {
  try {
    await p
  } catch (e) {
    return e as Error & { code?: unknown }
  }
  throw new Error('expected a rejection')
}

/** The text of a tool answer (its first content). */
export const textOf = (r: unknown): string => {
  const content = (r as { content?: unknown } | null)?.content
  const first = (Array.isArray(content) ? content[0] : undefined) as { type?: string; text?: string } | undefined
  return first?.type === 'text' ? (first.text ?? '') : ''
}

/** One line of a directory case's events.jsonl. */
export type EventLine = { seq: number; type: string; command_id: string; data: Record<string, unknown> }

/** The events of the directory case `dir`, in order. */
export const caseEvents = (dir: string): EventLine[] =>
  readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as EventLine)

/** The file of the test repository the wolpertinger bug is in. */
export const WOLF = 'src/server/scripts/World/npc_wolpertinger.cpp'

/** The world the MCP tests ask: the private MariaDB, the test repository, and one prepared case to copy. */
export interface McpWorld {
  readonly shared: SharedMariaDb
  readonly repo: TestRepo
  readonly adapter: string
  /** The [source] section of the profiles (the test repository at its commit). */
  readonly sourceSection: string
  /** A profile with the source, the MariaDB world and a budget of `budget` (then `extra`, then the adapter). */
  readonly profileWith: (budget: number, extra?: string) => string
  readonly profile: string
  /** A fresh copy of the prepared case (the wolpertinger report, quest 11117 extracted). */
  readonly newCase: () => string
}

/** The bug report of the prepared case the MCP tests copy (unless a test gives its own). */
const WOLF_REPORT = 'The wild wolpertinger vanishes when netted; quest 11117 cannot be completed.'

/**
 * Prepares the world of the MCP tests and one case `caseId` (budget `budget`, bug report `report`)
 * to copy for each test.
 */
export const mcpWorld = async (caseId: string, budget: number, report = WOLF_REPORT): Promise<McpWorld> => {
  const { shared } = await mariaWorld()
  const repo = buildTestRepo()
  const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
  const sourceSection = `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n`
  const profileWith = (total: number, extra = ''): string =>
    mariaProfile(shared, `${sourceSection}\n[budget]\ntotal = ${total}\n${extra}\n${adapter}`)
  const profile = profileWith(budget)
  const template = path.join(tempDir(`${caseId}-template`), 'case')
  const p = right(await loadProfile(profile)())
  const research = createProjectResearch(p, { openSource: openSourceResearch })
  right(await initCase({ dir: template, caseId, title: 'wolpertingers vanish' })())
  right(
    await prepareRevision(template, research, right(enrichmentConfig(p)), {
      report,
      entities: [{ type: 'quest', id: 11117 }]
    })()
  )
  await research.close()
  const newCase = (): string => {
    const dir = path.join(tempDir(`${caseId}-case`), 'case')
    cpSync(template, dir, { recursive: true })
    return dir
  }
  return { shared, repo, adapter, sourceSection, profileWith, profile, newCase }
}

/** The bearer token of the HTTP servers the tests start. */
export const MCP_TOKEN = 'test-token-0123456789abcdef'

/** A `vba mcp --http` process: its URL once it listens, what it wrote to stderr, how to stop it. */
export interface HttpServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly url: URL
  readonly port: number
  readonly stderr: () => string
  readonly stop: () => Promise<void>
}

let stateHome: string | undefined

/**
 * Starts `vba mcp ARGS --http LISTEN` with the token in VBA_MCP_TOKEN; resolves once it listens.
 * Every server of a test process keeps its ended sessions in one temporary XDG_STATE_HOME (the
 * same after a restart, never the user's).
 */
export const startHttp = async (
  args: readonly string[],
  listen = '127.0.0.1:0',
  env: Record<string, string> = {}
): Promise<HttpServer> => {
  stateHome ??= tempDir('mcp-state-home')
  const child = spawn(process.execPath, [VBA_BIN, 'mcp', ...args, '--http', listen], {
    env: processEnv({ VBA_MCP_TOKEN: MCP_TOKEN, XDG_STATE_HOME: stateHome, ...env })
  })
  let err = ''
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d
      const m = /at (http:\/\/(?:127\.0\.0\.1|0\.0\.0\.0):\d+\/mcp\S*)/.exec(err)
      if (m?.[1] !== undefined) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`vba mcp exited with ${String(code)}: ${err}`)))
  })
  const stop = (): Promise<void> =>
    child.exitCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => {
          child.once('exit', () => resolve())
          child.kill('SIGTERM')
        })
  return { child, url: new URL(url), port: Number(new URL(url).port), stderr: () => err, stop }
}

/** A client named `name` connected over Streamable HTTP to `url` with the test token. */
export const connectHttp = async (url: URL, name: string, sessionId?: string): Promise<Client> => {
  const client = new Client({ name, version: '1.0' })
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: { headers: { Authorization: `Bearer ${MCP_TOKEN}` } },
      ...(sessionId === undefined ? {} : { sessionId })
    })
  )
  return client
}
