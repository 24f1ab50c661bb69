/** Driving the real `vba mcp` (the bundle dist/vba/main.js) with the official SDK's client over stdio. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { VBA_BIN } from './cli.js'

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
