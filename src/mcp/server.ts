/**
 * The MCP server over a session, built on the official SDK's low-level `Server` (the tools' JSON
 * Schemas are ours, generated from the query codecs, so the zod-based `McpServer` would only add a
 * second contract). tools/list and tools/call, and the evidence as resources: `vba://evidence/E3`
 * (listable, and as a template) in compact text and as the canonical capture. The requester of
 * every call is the client as it named itself in the initialize request.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { Requester } from '../events/catalog.js'
import { VERSION } from '../version.js'
import type { McpSession } from './session.js'
import { thrownFailure } from '../failures/error.js'
import { CAPTURE_MEDIA_TYPE } from '../commands/case-query.js'
import { loadPeer } from '../adapters/peers.js'

/**
 * The parts of the official SDK the server uses, loaded on first use (an optional peer:
 * PACKAGE_MISSING without it), before anything of the case is touched.
 */
export const loadMcpSdk = () =>
  loadPeer('@modelcontextprotocol/sdk', 'vba mcp (the MCP server)', async () => {
    const [server, types, stdio] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/types.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js')
    ])
    return { Server: server.Server, types, StdioServerTransport: stdio.StdioServerTransport }
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

const EVIDENCE_URI = /^vba:\/\/evidence\/(E[1-9][0-9]{0,8})$/

const instructions = (s: McpSession): string =>
  `Research tools bound to case ${s.caseId}: bounded, read-only questions about one pinned source commit and an allow-listed world database snapshot. Every answer is recorded in the case as evidence; its id (E1, E2, …) heads the answer: cite it. Each new question costs case budget; the same call again is answered from the case at no cost, and case_status and the vba://evidence/<id> resources read what is recorded without spending budget. A tool error starts with its code and says what you can change.`

/** An MCP server answering from `session` (connect it to a transport). */
export const createMcpServer = (sdk: McpSdk, session: McpSession): Server => {
  const { McpError, ErrorCode } = sdk.types
  /** A failure while reading the case, as a JSON-RPC error that starts with its code. */
  const internal = (e: unknown): never => {
    const f = thrownFailure(e)
    throw new McpError(ErrorCode.InternalError, `${f.code}: ${f.message}`, { code: f.code })
  }
  const server = new sdk.Server(
    { name: 'vba', title: 'vba case research', version: VERSION },
    { capabilities: { tools: {}, resources: {} }, instructions: instructions(session) }
  )
  const byName = new Map(session.tools.map((t) => [t.name, t]))
  server.setRequestHandler(sdk.types.ListToolsRequestSchema, () => ({
    tools: session.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      outputSchema: t.outputSchema,
      annotations: t.annotations
    }))
  }))
  server.setRequestHandler(sdk.types.CallToolRequestSchema, async (request) => {
    const tool = byName.get(request.params.name)
    if (tool === undefined)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown tool ${JSON.stringify(request.params.name.slice(0, 80))}; the tools are ${[...byName.keys()].join(', ')}`
      )
    const answer =
      tool.kind === null
        ? await session.status()
        : await session.query(tool.kind, request.params.arguments ?? {}, requesterOf(server.getClientVersion()))
    return { ...answer, content: [...answer.content] }
  })
  server.setRequestHandler(sdk.types.ListResourcesRequestSchema, async () => ({
    resources: (await session.evidence().catch(internal)).map((e) => ({
      uri: e.uri,
      name: e.id,
      title: `${e.id}: ${e.request}`,
      description: `evidence ${e.id} of case ${session.caseId}: ${e.request}`,
      mimeType: 'text/plain'
    }))
  }))
  server.setRequestHandler(sdk.types.ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'vba://evidence/{id}',
        name: 'evidence',
        title: 'recorded evidence',
        description: `one piece of evidence of case ${session.caseId} by its id (E1, E2, …): the compact text and the canonical capture`,
        mimeType: 'text/plain'
      }
    ]
  }))
  server.setRequestHandler(sdk.types.ReadResourceRequestSchema, async (request) => {
    const uri = request.params.uri
    const id = EVIDENCE_URI.exec(uri)?.[1]
    const found = id === undefined ? null : await session.readEvidence(id).catch(internal)
    // -32002: the MCP code for a resource that does not exist.
    if (found === null)
      throw new McpError(
        -32002,
        `EVIDENCE_UNKNOWN: case ${session.caseId} has no evidence at ${JSON.stringify(uri.slice(0, 120))} (case_status lists the evidence)`,
        { uri: uri.slice(0, 120) }
      )
    return {
      contents: [
        { uri, mimeType: 'text/plain', text: found.text },
        { uri, mimeType: CAPTURE_MEDIA_TYPE, text: found.json }
      ]
    }
  })
  return server
}
