/**
 * The MCP server over a session, built on the official SDK's low-level `Server` (the tools' JSON
 * Schemas are ours, generated from the query and answer codecs, so the zod-based `McpServer` would
 * only add a second contract). tools/list and tools/call (the tools of the case's state, with
 * notifications/tools/list_changed when they change), the prompt `investigate`, and resources: the
 * evidence `vba://evidence/E3` (listable, and as a template) in compact text and as the canonical
 * capture, the contract and the report. The requester of every call is the client as it named
 * itself in the initialize request. Arguments a tool's input schema refuses are JSON-RPC errors
 * -32602 with a short message that starts with the failure code; nothing is recorded for them.
 * Answers and error messages show the invisible characters of their text as visible codes
 * (agent-text.ts); the case keeps its bytes.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Requester } from '../events/catalog.js'
import { VERSION } from '../version.js'
import type { McpSession } from './session.js'
import { thrownFailure } from '../failures/error.js'
import { loadPeer } from '../adapters/peers.js'
import { isDecision } from './decisions.js'
import { caseResources } from './case-resources.js'
import { agentAnswer, agentText } from './agent-text.js'

/**
 * The parts of the official SDK the server uses, loaded on first use (an optional peer:
 * PACKAGE_MISSING without it), before anything of the case is touched.
 */
export const loadMcpSdk = () =>
  loadPeer('@modelcontextprotocol/sdk', 'vba mcp (the MCP server)', async () => {
    const [server, types, stdio, protocol] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('@modelcontextprotocol/sdk/shared/protocol.js')
    ])
    return {
      Server: server.Server,
      types,
      StdioServerTransport: stdio.StdioServerTransport,
      Protocol: protocol.Protocol
    }
  })

/** The loaded SDK. */
export type McpSdk = Awaited<ReturnType<typeof loadMcpSdk>>

// Control characters and lone surrogates cannot be recorded (nor shown safely): replaced, not trusted.
const UNSAFE = /[\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Keeps at most `max` UTF-16 units without splitting a surrogate pair. */
const cut = (text: string, max: number): string => {
  const kept = text.slice(0, max)
  return /[\uD800-\uDBFF]$/.test(kept) ? kept.slice(0, -1) : kept
}

/** The requester a client's initialize request names (its own claim, made safe to record). */
export const requesterOf = (info: { readonly name?: unknown; readonly version?: unknown } | undefined): Requester => {
  const clean = (u: unknown): string => cut((typeof u === 'string' ? u : '').replace(UNSAFE, '?').trim(), 128)
  const name = clean(info?.name)
  return { protocol: 'mcp', name: name === '' ? 'unnamed client' : name, version: clean(info?.version) }
}

const instructions = (s: McpSession): string =>
  `Investigation tools bound to case ${s.caseId}. Research: bounded, read-only questions about one pinned source commit and an allow-listed world database snapshot; every answer is recorded in the case as evidence, its id (E1, E2, …) heads the answer: cite it. Each new question costs case budget; the same call again is answered from the case at no cost, and case_status and the vba://evidence/<id> resources read what is recorded without spending budget. Decisions: interpretation_record (while the case is interpreting), then hypothesis_propose, hypothesis_update, lab_test_request and conclude, each recorded as a turn with your name; the prompt investigate hands you the case as a model in the loop sees it. A tool error starts with its code and says what you can change.`

/** The failure code a message starts with (`TOOL_UNKNOWN: …`). */
const CODED = /^([A-Z][A-Z0-9_]*): /

/**
 * A JSON-RPC error the SDK sends as it is: `code` and `message` (its invisible characters shown as
 * codes), without a second prefix; the failure code the message starts with is `data.code` too.
 */
export const rpcError = (code: number, message: string, data: Record<string, unknown> = {}): Error => {
  const failureCode = CODED.exec(message)?.[1]
  return Object.assign(new Error(agentText(message)), {
    code,
    data: failureCode === undefined ? data : { ...data, code: failureCode }
  })
}

interface Issue {
  readonly code?: unknown
  readonly path?: readonly PropertyKey[]
  readonly expected?: unknown
  readonly message?: unknown
}

const valueAt = (u: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === 'object' && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    u
  )

/** The SDK's parse of a request (zod issues) in words: `params.uri is missing: it must be a string`. */
const issueWords = (request: unknown, issues: readonly Issue[]): string => {
  const said = issues.slice(0, 3).map((i) => {
    const path = i.path ?? []
    const where = path.map(String).join('.') || 'the request'
    if (i.code === 'invalid_type' && typeof i.expected === 'string') {
      const what = `${/^[aeiou]/.test(i.expected) ? 'an' : 'a'} ${i.expected}`
      return valueAt(request, path) === undefined
        ? `${where} is missing: it must be ${what}`
        : `${where} must be ${what}`
    }
    return `${where}: ${String(i.message ?? 'not of the expected shape').slice(0, 160)}`
  })
  return said.join('; ') + (issues.length > 3 ? ` (+${issues.length - 3} more)` : '')
}

/**
 * What a request handler threw, as the coded JSON-RPC error the client gets: the SDK's parse of a
 * malformed request is -32602 INVALID_ARGUMENT in words (not -32603 with a schema dump), an error
 * with a JSON-RPC code but no failure code gets one by its JSON-RPC code, anything else is
 * -32603 with its failure (INTERNAL_ERROR when it has none).
 */
export const codedRpcError = (method: string, request: unknown, e: unknown): Error => {
  const err = (typeof e === 'object' && e !== null ? e : {}) as {
    code?: unknown
    message?: unknown
    data?: unknown
    issues?: unknown
  }
  if (Array.isArray(err.issues))
    return rpcError(-32602, `INVALID_ARGUMENT: ${method}: ${issueWords(request, err.issues as Issue[])}`)
  if (typeof err.code !== 'number' || !Number.isSafeInteger(err.code)) {
    const f = thrownFailure(e)
    return rpcError(-32603, `${f.code}: ${f.message}`)
  }
  // The SDK's McpError says "MCP error -32602: …" itself: the client's SDK adds that again.
  const message = (typeof err.message === 'string' ? err.message : '').replace(/^MCP error -?\d+: /, '')
  const data = typeof err.data === 'object' && err.data !== null ? (err.data as Record<string, unknown>) : {}
  if (CODED.test(message)) return rpcError(err.code, message, data)
  const code = err.code === -32602 ? 'INVALID_ARGUMENT' : err.code === -32601 ? 'METHOD_UNKNOWN' : 'INTERNAL_ERROR'
  return rpcError(err.code, `${code}: ${message}`, data)
}

type RequestHandler = (request: { readonly method: string }, extra: unknown) => Promise<unknown>

/**
 * Every request `server` handles (its own initialize and ping, and ours) answers an error with
 * its failure code ({@link codedRpcError}), and a method it does not serve is -32601
 * METHOD_UNKNOWN naming the methods it does. The SDK keeps its handlers in a private map: without
 * it (another SDK), only the methods not served are coded.
 */
const codedErrors = (server: Server): void => {
  const handlers = (server as unknown as { _requestHandlers?: unknown })._requestHandlers
  const served = handlers instanceof Map ? (handlers as Map<string, RequestHandler>) : null
  if (served !== null)
    for (const [method, handler] of served)
      served.set(method, (request, extra) =>
        Promise.resolve()
          .then(() => handler(request, extra))
          .catch((e: unknown) => {
            throw codedRpcError(method, request, e)
          })
      )
  server.fallbackRequestHandler = async (request) => {
    const methods = served === null ? '' : `; it serves ${[...served.keys()].sort().join(', ')}`
    throw rpcError(
      -32601,
      `METHOD_UNKNOWN: vba mcp does not serve the method ${JSON.stringify(String(request.method).slice(0, 80))}${methods}`
    )
  }
}

const isEmptyObject = (u: unknown): boolean =>
  typeof u === 'object' && u !== null && !Array.isArray(u) && Object.keys(u).length === 0

/** An MCP server answering from `session` (connect it to a transport). */
export const createMcpServer = (sdk: McpSdk, session: McpSession): Server => {
  /** A failure while reading the case, as a JSON-RPC error that starts with its code. */
  const internal = (e: unknown): never => {
    const f = thrownFailure(e)
    throw rpcError(sdk.types.ErrorCode.InternalError, `${f.code}: ${f.message}`, { code: f.code })
  }
  const server = new sdk.Server(
    { name: 'vba', title: 'vba case investigation', version: VERSION },
    {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: {} },
      instructions: instructions(session)
    }
  )
  server.setRequestHandler(sdk.types.ListToolsRequestSchema, async () => {
    await session.refresh()
    return {
      tools: session.tools().map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
        annotations: t.annotations
      }))
    }
  })
  // Registered on the protocol layer with only the method checked: the SDK's own parse of
  // tools/call would answer a malformed call -32603 with a schema dump, not -32602.
  const callSchema = sdk.types.CallToolRequestSchema.pick({ method: true }).loose()
  sdk.Protocol.prototype.setRequestHandler.call(server, callSchema, async (request: Record<string, unknown>) => {
    const params = request['params'] as { name?: unknown; arguments?: unknown } | undefined
    if (typeof params?.name !== 'string')
      throw rpcError(-32602, 'INVALID_ARGUMENT: tools/call names a tool (params.name)')
    const args = params.arguments ?? {}
    const tools = session.tools()
    const tool = tools.find((t) => t.name === params.name)
    const requester = requesterOf(server.getClientVersion())
    // A decision of another state (a stale tool list) is refused by the case with its state.
    if (tool === undefined && isDecision(params.name)) {
      const answer = await session.decide(params.name, args, requester)
      return agentAnswer(answer)
    }
    if (tool === undefined)
      throw rpcError(
        -32602,
        `TOOL_UNKNOWN: unknown tool ${JSON.stringify(params.name.slice(0, 80))}; case ${session.caseId} offers ${tools.map((t) => t.name).join(', ')} now`
      )
    // case_status takes nothing: what its input schema refuses is refused, not ignored.
    if (tool.kind === null && !isDecision(tool.name) && !isEmptyObject(args))
      throw rpcError(
        -32602,
        `INVALID_ARGUMENT: ${tool.name} takes no arguments: give {} (got ${
          Array.isArray(args)
            ? 'a list'
            : typeof args === 'object' && args !== null
              ? `the members ${Object.keys(args)
                  .slice(0, 5)
                  .map((k) => JSON.stringify(k.slice(0, 40)))
                  .join(', ')}`
              : `a ${args === null ? 'null' : typeof args}`
        })`
      )
    const answer =
      tool.name === 'case_status'
        ? await session.status()
        : isDecision(tool.name)
          ? await session.decide(tool.name, args, requester)
          : tool.kind === null
            ? await session.status()
            : await session.query(tool.kind, args, requester)
    return agentAnswer(answer)
  })
  const unsubscribe = session.subscribe((change) => {
    if (change.tools) void server.sendToolListChanged().catch(() => undefined)
    if (change.evidence) void server.sendResourceListChanged().catch(() => undefined)
  })
  server.onclose = () => unsubscribe()
  caseResources(sdk, server, session, internal)
  codedErrors(server)
  return server
}
