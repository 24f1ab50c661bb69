/**
 * `vba mcp --http HOST:PORT`: the same tools over the spec's Streamable HTTP transport (the SDK's
 * StreamableHTTPServerTransport, one per MCP session). Every request is checked before the
 * protocol sees it: the Host header names this server (DNS rebinding), an Origin header, when a
 * browser sends one, is this server's own, and `Authorization: Bearer TOKEN` holds the token
 * (compared in constant time). The endpoint is `/mcp` for the case the server is bound to, or
 * `/mcp/CASE` with a store and no bound case (the case chosen per session). A body over the
 * message limit is 413 with a JSON-RPC error and a line on the log. All sessions of one case share
 * one {@link McpSession}, so their calls that write run one after the other. Session ids outlive
 * the process (http-sessions.ts): a client that comes back after a restart goes on in its session,
 * unless it ended it (a DELETE, recorded before it is done: ended-sessions.ts).
 */
import * as os from 'node:os'
import { timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { failure } from '../failures/failure.js'
import { FailureError } from '../failures/error.js'
import { createMcpServer, type McpSdk } from './server.js'
import type { McpSession } from './session.js'
import { MAX_STDIO_MESSAGE_BYTES } from './stdio.js'
import {
  initializeClaim,
  openSession,
  resumeSession,
  sealSession,
  sessionKey,
  type SessionClaim
} from './http-sessions.js'
import { endedSessions, type EndedSessions } from './ended-sessions.js'

export interface HttpOptions {
  readonly host: string
  readonly port: number
  readonly token: string
  /** The session of a case: `null` for the bound case, else the case id of `/mcp/CASE`. */
  readonly sessionOf: (caseId: string | null) => Promise<McpSession>
  /** True when sessions choose their case (`/mcp/CASE`); false: `/mcp` only. */
  readonly perSession: boolean
  readonly log: (line: string) => void
  readonly maxBodyBytes?: number
  /** Where the sessions clients ended are kept, so that they stay ended after a restart (ended-sessions.ts). */
  readonly endedDir: string
}

/** Loads the SDK's Streamable HTTP server transport (an optional peer, as the rest of the SDK). */
const loadTransport = async () =>
  (await import('@modelcontextprotocol/sdk/server/streamableHttp.js')).StreamableHTTPServerTransport

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** Whether `host` is a loopback address. */
export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)

/** `HOST:PORT` (or `[::1]:PORT`, or `PORT` for 127.0.0.1) as host and port. */
export const parseListen = (text: string): { host: string; port: number } => {
  const m = /^(?:(\[[0-9a-fA-F:]+\]|[A-Za-z0-9.-]+):)?(\d{1,5})$/.exec(text)
  const port = Number(m?.[2])
  if (m === null || port > 65535)
    throw new FailureError(
      failure(
        'INVALID_ARGUMENT',
        `--http takes HOST:PORT (127.0.0.1:8765; port 0: any free port), not ${JSON.stringify(text.slice(0, 80))}`
      )
    )
  return { host: (m[1] ?? '127.0.0.1').replace(/^\[(.*)\]$/, '$1'), port }
}

const sameToken = (given: string, token: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

const refuse = (res: ServerResponse, status: number, code: string, message: string, headers = {}): void => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(
    JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, message: `${code}: ${message}`, data: { code } }
    })
  )
}

/** The request's body, or null when it is over `max` bytes (the rest is drained unread). */
const bodyOf = (req: IncomingMessage, max: number): Promise<{ text: string } | { over: number }> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (c: Buffer) => {
      size += c.length
      if (size <= max) chunks.push(c)
    })
    req.on('end', () => resolve(size > max ? { over: size } : { text: Buffer.concat(chunks).toString('utf8') }))
    req.on('error', reject)
  })

/** The addresses that bind every interface. */
const WILDCARD = new Set(['0.0.0.0', '::'])

const loopbackHosts = (port: number): string[] => [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]

/** Host headers that name this machine: its name and every address of its interfaces. */
const machineHosts = (port: number): string[] => [
  `${os.hostname()}:${port}`,
  ...Object.values(os.networkInterfaces())
    .flatMap((list) => list ?? [])
    .map((a) => (a.family === 'IPv6' ? `[${a.address}]:${port}` : `${a.address}:${port}`))
]

/** Why a request is refused before the protocol sees it (Host, Origin, token), or null. */
const gateOf = (
  req: IncomingMessage,
  hosts: readonly string[],
  token: string
): { status: number; code: string; message: string; headers?: Record<string, string> } | null => {
  const host = req.headers.host ?? ''
  if (!hosts.includes(host))
    return {
      status: 403,
      code: 'HOST_NOT_ALLOWED',
      message: `the Host header ${JSON.stringify(host.slice(0, 100))} does not name this server (${hosts[0]})`
    }
  const origin = req.headers.origin
  if (origin !== undefined && !hosts.some((h) => origin === `http://${h}`))
    return {
      status: 403,
      code: 'ORIGIN_NOT_ALLOWED',
      message: `requests from ${JSON.stringify(origin.slice(0, 100))} are refused (DNS rebinding)`
    }
  // The scheme is case-insensitive (RFC 9110, 11.1), and one or more spaces may follow it.
  const bearer = /^bearer +(\S.*)$/i.exec(req.headers.authorization ?? '')?.[1]
  if (bearer !== undefined && sameToken(bearer, token)) return null
  return {
    status: 401,
    code: bearer === undefined ? 'TOKEN_MISSING' : 'TOKEN_INVALID',
    message: bearer === undefined ? 'send Authorization: Bearer <token>' : "the bearer token is not this server's",
    headers: { 'www-authenticate': 'Bearer realm="vba mcp"' }
  }
}

/** The JSON body of a POST (undefined for other methods), or the refusal of a body too large or not JSON. */
const jsonBody = async (
  req: IncomingMessage,
  max: number,
  log: (line: string) => void
): Promise<{ body: unknown } | { status: number; code: string; message: string }> => {
  if (req.method !== 'POST') return { body: undefined }
  const got = await bodyOf(req, max)
  if ('over' in got) {
    log(`vba mcp: MESSAGE_TOO_LARGE: refused a request body of ${got.over} bytes (over ${max})`)
    return {
      status: 413,
      code: 'MESSAGE_TOO_LARGE',
      message: `a body of ${got.over} bytes, over the limit of ${max} bytes, was refused unread`
    }
  }
  try {
    return { body: JSON.parse(got.text) }
  } catch {
    return { status: 400, code: 'MESSAGE_NOT_JSON', message: 'the body is not JSON' }
  }
}

interface Sessions {
  readonly live: Map<string, { transport: StreamableHTTPServerTransport; path: string }>
  readonly key: Buffer
  /** Sessions the client ended (DELETE) in this process: not taken back. */
  readonly ended: Set<string>
  /** Sessions the client ended, in this process or before a restart: not taken back either. */
  readonly record: EndedSessions
}

/**
 * The transport of a new session (an initialize request, its id sealing the client's initialize)
 * or of a session a restart lost (a sealed id of this endpoint: initialized again from its claim).
 */
const openTransport = async (
  sdk: McpSdk,
  o: HttpOptions,
  sessions: Sessions,
  path: string,
  caseId: string | null,
  claim: SessionClaim,
  resumedId: string | null
): Promise<StreamableHTTPServerTransport> => {
  const Transport = await loadTransport()
  const session = await o.sessionOf(caseId)
  const transport: StreamableHTTPServerTransport = new Transport({
    sessionIdGenerator: () => resumedId ?? sealSession(sessions.key, claim),
    onsessioninitialized: (sid) => {
      sessions.live.set(sid, { transport, path })
    },
    onsessionclosed: (sid) => {
      sessions.ended.add(sid)
    }
  })
  transport.onclose = () => {
    if (transport.sessionId !== undefined) sessions.live.delete(transport.sessionId)
  }
  await createMcpServer(sdk, session).connect(transport)
  if (resumedId !== null) {
    await resumeSession(transport, claim)
    o.log(`vba mcp: resumed session of ${claim.name || 'an unnamed client'} on ${path} (opened before a restart)`)
  }
  return transport
}

/** One request: the gate, the endpoint, the body, then the session's transport. */
const handleRequest = async (
  sdk: McpSdk,
  o: HttpOptions,
  sessions: Sessions,
  hosts: readonly string[],
  req: IncomingMessage,
  res: ServerResponse
): Promise<void> => {
  const gate = gateOf(req, hosts, o.token)
  if (gate !== null) return refuse(res, gate.status, gate.code, gate.message, gate.headers)
  const path = new URL(req.url ?? '/', 'http://x').pathname
  const caseId = o.perSession ? /^\/mcp\/([A-Za-z0-9][A-Za-z0-9._-]{0,127})$/.exec(path)?.[1] : undefined
  if (o.perSession ? caseId === undefined : path !== '/mcp')
    return refuse(res, 404, 'NOT_FOUND', o.perSession ? 'the endpoint is /mcp/<case id>' : 'the endpoint is /mcp')
  const got = await jsonBody(req, o.maxBodyBytes ?? MAX_STDIO_MESSAGE_BYTES, o.log)
  if (!('body' in got)) return refuse(res, got.status, got.code, got.message)
  const id = req.headers['mcp-session-id']
  if (typeof id !== 'string') {
    const claim = initializeClaim(got.body, path) ?? emptyClaim(path)
    return (await openTransport(sdk, o, sessions, path, caseId ?? null, claim, null)).handleRequest(req, res, got.body)
  }
  const known = sessions.live.get(id)
  const claim = known === undefined ? await resumableClaim(sessions, id, path, o.log) : null
  if (known === undefined ? claim === null : known.path !== path)
    return refuse(
      res,
      404,
      'SESSION_UNKNOWN',
      'no such session (it ended, or is not one of this server): initialize a new one'
    )
  if (req.method === 'DELETE') {
    const recorded = await endRecorded(sessions, id, o.log)
    if (recorded !== null) return refuse(res, 500, recorded.code, recorded.message)
  }
  const transport =
    known?.transport ?? (await openTransport(sdk, o, sessions, path, caseId ?? null, claim ?? emptyClaim(path), id))
  return transport.handleRequest(req, res, got.body)
}

/** The claim of a session a restart lost that may be taken back: sealed here for `path`, never ended. */
const resumableClaim = async (
  sessions: Sessions,
  id: string,
  path: string,
  log: (line: string) => void
): Promise<SessionClaim | null> => {
  const claim = sessions.ended.has(id) ? null : openSession(sessions.key, id, path)
  if (claim === null) return null
  try {
    return (await sessions.record.isEnded(id)) ? null : claim
  } catch (e) {
    // Unknown whether the client ended it: it is not taken back (the client initializes anew).
    log(`vba mcp: ${e instanceof FailureError ? `${e.failure.code}: ${e.failure.message}` : String(e)}`)
    return null
  }
}

/**
 * Records that the client ends the session `id` before the transport ends it, so that it stays
 * ended after a restart; the refusal when it cannot be recorded (the session goes on: the client
 * may end it again).
 */
const endRecorded = async (
  sessions: Sessions,
  id: string,
  log: (line: string) => void
): Promise<{ code: string; message: string } | null> => {
  try {
    await sessions.record.end(id)
    sessions.ended.add(id)
    return null
  } catch (e) {
    const f = e instanceof FailureError ? e.failure : failure('INTERNAL_ERROR', String(e).slice(0, 300))
    log(`vba mcp: ${f.code}: ${f.message}`)
    // The client is told the code, not the server's paths (the log names them).
    return {
      code: f.code,
      message:
        "the end of the session cannot be recorded (the server's log says why): it was not ended; end it again later"
    }
  }
}

const emptyClaim = (path: string): SessionClaim => ({ name: '', version: '', protocolVersion: '', path })

/** Serves the MCP endpoint; resolves once it listens, with its URL and how to stop it. */
export const serveMcpHttp = async (
  sdk: McpSdk,
  o: HttpOptions
): Promise<{ readonly url: string; readonly close: () => Promise<void> }> => {
  await loadTransport()
  const key = sessionKey(o.token)
  const sessions: Sessions = { live: new Map(), key, ended: new Set(), record: endedSessions(o.endedDir, key) }
  let hosts: string[] = []
  const http = createServer((req, res) => {
    handleRequest(sdk, o, sessions, hosts, req, res).catch((e: unknown) => {
      const f = e instanceof FailureError ? e.failure : failure('INTERNAL_ERROR', String(e).slice(0, 300))
      o.log(`vba mcp: ${f.code}: ${f.message}`)
      if (!res.headersSent) refuse(res, f.code === 'CASE_NOT_FOUND' ? 404 : 500, f.code, f.message)
      else res.end()
    })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject)
    http.listen(o.port, o.host, () => resolve())
  })
  const address = http.address()
  const port = typeof address === 'object' && address !== null ? address.port : o.port
  const shown = o.host.includes(':') ? `[${o.host}]` : o.host
  hosts = [`${shown}:${port}`, ...(isLoopback(o.host) || WILDCARD.has(o.host) ? loopbackHosts(port) : [])]
  // Bound to every address: a Host naming any of this machine's addresses or its name is this
  // server (every Host was refused, the wildcard itself being no name a client sends).
  if (WILDCARD.has(o.host)) hosts.push(...machineHosts(port))
  return {
    url: `http://${shown}:${port}/mcp`,
    close: async () => {
      await Promise.allSettled([...sessions.live.values()].map((s) => s.transport.close()))
      await new Promise<void>((resolve) => http.close(() => resolve()))
    }
  }
}
