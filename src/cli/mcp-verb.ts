/**
 * `vba mcp --config PROFILE --case CASE [--store URL]`: an MCP server over stdio bound to one
 * prepared case. stdout carries the protocol only; the start-up line, snapshot index notices,
 * refused messages (too large, not JSON-RPC) and failures go to stderr. A case that cannot be served (missing, corrupt, not prepared, leased by a
 * worker) is refused before the server starts: `vba: CODE: message` and the exit code of its kind.
 * The server ends when the client closes its stdin (or on SIGINT/SIGTERM), after the calls in
 * flight are recorded.
 */
import { loadProfile } from '../adapters/config/profile.js'
import type { CaseAt } from '../adapters/case-store/store.js'
import { createProjectResearch } from '../research/project-research.js'
import { openMcpSession } from '../mcp/session.js'
import { createMcpServer, loadMcpSdk } from '../mcp/server.js'
import { stdioTransport } from '../mcp/stdio.js'
import { cliOpenSource } from './source-open.js'
import { storeAt, storeUrl, type StoreOption } from './stores.js'
import type { Out } from './case-verbs.js'

export interface McpOptions extends StoreOption {
  readonly config: string
  readonly case: string
}

export const mcpVerb = async (io: Out, opts: McpOptions): Promise<void> => {
  const sdk = await loadMcpSdk()
  const profile = await loadProfile(opts.config)
  const url = storeUrl(opts)
  const store = url === undefined ? undefined : await storeAt(url)
  const at: CaseAt = store === undefined ? opts.case : { store, caseId: opts.case }
  const research = createProjectResearch(profile, { openSource: cliOpenSource })
  try {
    const session = await openMcpSession({
      at,
      profile,
      research,
      ...(store === undefined ? {} : { leaseOf: () => store.leaseOf(opts.case) })
    })
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
