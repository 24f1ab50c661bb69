/**
 * `vba mcp --config PROFILE --case CASE [--store URL] [--http HOST:PORT --token-file F]`: an MCP
 * server over stdio (or Streamable HTTP, src/mcp/http.ts) bound to one prepared case, or with
 * --store and --http one case per session (`/mcp/CASE`). stdout carries the protocol only; the start-up line, snapshot index notices,
 * refused messages (too large, not JSON-RPC) and failures go to stderr. A case that cannot be served (missing, corrupt, not prepared, leased by a
 * worker) is refused before the server starts: `vba: CODE: message` and the exit code of its kind.
 * The server ends when the client closes its stdin (or on SIGINT/SIGTERM), after the calls in
 * flight are recorded.
 */
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'
import { openMcpSession } from '../mcp/session.js'
import { readNamedFile } from '../adapters/regular-file.js'
import { createMcpServer, loadMcpSdk, type McpSdk } from '../mcp/server.js'
import { isLoopback, parseListen, serveMcpHttp } from '../mcp/http.js'
import { endedSessionsDir } from '../mcp/ended-sessions.js'
import type { McpSession } from '../mcp/session.js'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import { stdioTransport } from '../mcp/stdio.js'
import { cliOpenSource } from './source-open.js'
import { storeAt, storeUrl, type StoreOption } from './stores.js'
import type { Out } from './case-verbs.js'

export interface McpOptions extends StoreOption {
  readonly config: string
  readonly case?: string
  /** HOST:PORT: serve over Streamable HTTP instead of stdio. */
  readonly http?: string
  /** A file holding the bearer token (else the variable VBA_MCP_TOKEN). */
  readonly tokenFile?: string
}

/** The bearer token of `--http`: from --token-file or VBA_MCP_TOKEN, never from the command line. */
const tokenOf = async (opts: McpOptions): Promise<string> => {
  const file = opts.tokenFile
  const raw =
    file === undefined
      ? process.env['VBA_MCP_TOKEN']
      : await readNamedFile(file, {
          maxBytes: 64 << 10,
          pipe: true,
          shown: `--token-file ${file}`,
          code: 'INVALID_ARGUMENT'
        })
          .then((b) => b.toString('utf8'))
          .catch((e: unknown) => {
            if (e instanceof FailureError) throw e
            throw new FailureError(
              failure(
                'INVALID_ARGUMENT',
                `--token-file ${file} cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'}): give a file holding the bearer token`
              )
            )
          })
  const token = raw?.trim() ?? ''
  if (token.length < 16)
    throw new FailureError(
      failure(
        'INVALID_ARGUMENT',
        `vba mcp --http needs a bearer token of at least 16 characters in --token-file FILE or the variable VBA_MCP_TOKEN (${raw === undefined ? 'neither is given' : 'the one given is shorter'})`
      )
    )
  return token
}

export const mcpVerb = async (io: Out, opts: McpOptions): Promise<void> => {
  const sdk = await loadMcpSdk()
  const profile = await loadProfile(opts.config)
  const url = storeUrl(opts)
  const store = url === undefined ? undefined : await storeAt(url)
  if (opts.case === undefined && (store === undefined || opts.http === undefined))
    throw new FailureError(
      failure(
        'INVALID_ARGUMENT',
        'vba mcp needs --case CASE (with --store and --http, the case may be chosen per session)'
      )
    )
  const research = createProjectResearch(profile, { openSource: cliOpenSource })
  const open = (caseId: string): Promise<McpSession> =>
    openMcpSession({
      at: store === undefined ? caseId : { store, caseId },
      profile,
      research,
      ...(store === undefined ? {} : { leaseOf: () => store.leaseOf(caseId) })
    })
  try {
    if (opts.http !== undefined) return await serveHttp(io, sdk, opts, open)
    const session = await open(opts.case ?? '')
    const server = createMcpServer(sdk, session)
    const closed = new Promise<void>((resolve) => {
      server.onclose = resolve
    })
    const transport = stdioTransport(sdk, { log: (line) => io.err(line) })
    const stop = (): void => {
      void transport.close()
    }
    process.once('SIGINT', stop)
    process.once('SIGTERM', stop)
    await server.connect(transport)
    io.err(`vba mcp: ${session.summary}; serving over stdio`)
    await closed
    process.off('SIGINT', stop)
    process.off('SIGTERM', stop)
    await session.idle()
  } finally {
    await research.close()
  }
}

/** Serves over Streamable HTTP until SIGINT/SIGTERM; the sessions of one case share one McpSession. */
const serveHttp = async (
  io: Out,
  sdk: McpSdk,
  opts: McpOptions,
  open: (caseId: string) => Promise<McpSession>
): Promise<void> => {
  const { host, port } = parseListen(opts.http ?? '')
  const token = await tokenOf(opts)
  const sessions = new Map<string, Promise<McpSession>>()
  const sessionOf = (caseId: string): Promise<McpSession> => {
    const known = sessions.get(caseId)
    if (known !== undefined) return known
    const opened = open(caseId)
    sessions.set(caseId, opened)
    opened.catch(() => sessions.delete(caseId))
    return opened
  }
  const bound = opts.case
  if (bound !== undefined) io.err(`vba mcp: ${(await sessionOf(bound)).summary}`)
  const served = await serveMcpHttp(sdk, {
    host,
    port,
    token,
    perSession: bound === undefined,
    sessionOf: (caseId) => sessionOf(caseId ?? bound ?? ''),
    log: (line) => io.err(line),
    endedDir: endedSessionsDir(process.env)
  })
  io.err(
    `vba mcp: serving over Streamable HTTP at ${served.url}${bound === undefined ? '/<case id>' : ''}${isLoopback(host) ? '' : ' (not a loopback address: every client on the network can reach it; the token guards it)'}`
  )
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve)
    process.once('SIGTERM', resolve)
  })
  await served.close()
  await Promise.allSettled([...sessions.values()].map(async (s) => (await s).idle()))
}
