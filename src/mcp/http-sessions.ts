/**
 * Streamable HTTP sessions that outlive the server process. A session id carries what the
 * client's initialize request said (its name, version and protocol version) and the endpoint it
 * was opened on, sealed with an HMAC under a key derived from the bearer token:
 * `v1.NONCE.PAYLOAD.MAC` (base64url, visible ASCII as the spec asks). A server restarted with the
 * same token that sees a session id it does not hold in memory checks the seal and, when it is
 * its own for that endpoint, takes the session back: a new transport under the same id,
 * initialized with the recorded initialize, so the client's next call goes on (attributed to the
 * same client) without initializing again. Any other unknown id is 404, as the spec asks, so the
 * client initializes anew. Nothing of a live session is stored (the case itself holds everything the
 * session did); only the ends of sessions are (ended-sessions.ts), so that an ended one is not taken back.
 */
import { createHmac, createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { IncomingMessage, ServerResponse } from 'node:http'
import { Socket } from 'node:net'
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'

/** What a session id records of the client's initialize request. */
export interface SessionClaim {
  readonly name: string
  readonly version: string
  readonly protocolVersion: string
  /** The endpoint (`/mcp`, `/mcp/CASE`) the session was opened on. */
  readonly path: string
}

/** The key that seals session ids: derived from the bearer token (a restart with it keeps them). */
export const sessionKey = (token: string): Buffer =>
  createHash('sha256').update('vba mcp session ids\0').update(token).digest()

const b64 = (b: Buffer | string): string => Buffer.from(b).toString('base64url')
const mac = (key: Buffer, body: string): string => b64(createHmac('sha256', key).update(body).digest()).slice(0, 32)

/** A new session id sealing `claim`. */
export const sealSession = (key: Buffer, claim: SessionClaim): string => {
  const body = `v1.${b64(randomBytes(12))}.${b64(JSON.stringify([claim.name, claim.version, claim.protocolVersion, claim.path]))}`
  return `${body}.${mac(key, body)}`
}

/** The claim of a session id this key sealed for `path`, or null (not ours, altered, another endpoint). */
export const openSession = (key: Buffer, id: string, path: string): SessionClaim | null => {
  const parts = id.split('.')
  if (parts.length !== 4 || parts[0] !== 'v1' || id.length > 1200) return null
  const body = parts.slice(0, 3).join('.')
  const given = Buffer.from(parts[3] ?? '')
  const want = Buffer.from(mac(key, body))
  if (given.length !== want.length || !timingSafeEqual(given, want)) return null
  try {
    const [name, version, protocolVersion, at] = JSON.parse(Buffer.from(parts[2] ?? '', 'base64url').toString('utf8'))
    if ([name, version, protocolVersion, at].some((x) => typeof x !== 'string') || at !== path) return null
    return { name, version, protocolVersion, path }
  } catch {
    return null
  }
}

/** The client's initialize request in `body` as a claim on `path`, or null when it is not one. */
export const initializeClaim = (body: unknown, path: string): SessionClaim | null => {
  const m = body as { method?: unknown; params?: { protocolVersion?: unknown; clientInfo?: Record<string, unknown> } }
  if (typeof body !== 'object' || body === null || m.method !== 'initialize') return null
  const info = m.params?.clientInfo ?? {}
  const str = (u: unknown): string => (typeof u === 'string' ? u.slice(0, 200) : '')
  return {
    name: str(info['name']),
    version: str(info['version']),
    protocolVersion: str(m.params?.protocolVersion),
    path
  }
}

/**
 * Initializes `transport` (connected to its server, created with the session's id as its id) with
 * the initialize request `claim` recorded, as the client sent it when it opened the session. The
 * request goes through the transport's own handling (the SDK's, not ours), its answer discarded.
 */
export const resumeSession = async (transport: StreamableHTTPServerTransport, claim: SessionClaim): Promise<void> => {
  const post = (message: Record<string, unknown>): Promise<void> => {
    const req = new IncomingMessage(new Socket())
    const headers: Record<string, string> = {
      host: 'localhost',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json'
    }
    req.method = 'POST'
    req.url = claim.path
    req.headers = headers
    req.rawHeaders = Object.entries(headers).flat()
    req.push(null)
    return transport.handleRequest(req, new ServerResponse(req), message)
  }
  await post({
    jsonrpc: '2.0',
    id: 'vba-resume',
    method: 'initialize',
    params: {
      protocolVersion: claim.protocolVersion,
      capabilities: {},
      clientInfo: { name: claim.name, version: claim.version }
    }
  })
  await post({ jsonrpc: '2.0', method: 'notifications/initialized' })
}
