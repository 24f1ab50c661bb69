/**
 * A local OpenAI-compatible chat-completions endpoint for tests: a real HTTP server on a loopback
 * port that answers like a provider (model name as served, usage, finish reason) and misbehaves
 * on demand: HTTP 429 with Retry-After, 500, 404 "model not found", garbage, a hang, a reset
 * connection. Every request is kept (headers and body) for assertions. The answers come from a
 * brain: by default the fleet model of the worker tests, read from the prompt.
 */
import * as http from 'node:http'
import type { AddressInfo } from 'node:net'
import { latestEvidence } from '../../src/investigation/scripted-model.js'
import { SMART_QUERY } from './investigation.js'

/** What the endpoint does with one request. */
export type Behaviour =
  | {
      readonly kind: 'answer'
      readonly content?: string
      readonly model?: string
      readonly usage?: Record<string, unknown> | null
      readonly delayMs?: number
    }
  | {
      readonly kind: 'status'
      readonly status: number
      readonly body?: string
      readonly headers?: Record<string, string>
    }
  | { readonly kind: 'garbage' }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' }

export interface ReceivedRequest {
  readonly n: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: {
    model?: string
    messages?: Array<{ role: string; content: string }>
    temperature?: number
    max_tokens?: number
    response_format?: unknown
  }
}

export interface ModelEndpoint {
  /** The base URL (`http://127.0.0.1:PORT/v1`). */
  readonly url: string
  readonly requests: ReceivedRequest[]
  /** Counts of what it did, by behaviour kind (`answer`, `status-429`, …). */
  readonly served: Record<string, number>
  readonly close: () => Promise<void>
}

/** The prompt as the model function saw it: system (stable part) and user message joined. */
export const promptOf = (r: ReceivedRequest): string => (r.body.messages ?? []).map((m) => m.content).join('\n')

/**
 * Answers an investigation from what its prompt shows: the interpretation, a query until there is
 * evidence, a hypothesis citing it, then the conclusion (the fleet model of the worker tests).
 */
export const investigationBrain = (prompt: string): string => {
  if (/Phase: interpretation/.test(prompt))
    return JSON.stringify({
      interpretation: { summary: 'Netting a wild wolpertinger should give an item; the creature despawns instead.' }
    })
  const evidence = latestEvidence(prompt)
  if (evidence === null)
    return JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: SMART_QUERY } })
  if (!/^ {2}H1 \[/m.test(prompt))
    return JSON.stringify({
      next: {
        kind: 'hypothesis',
        action: 'propose',
        statement: 'The SmartAI of creature 23487 despawns it on the net spell hit.',
        evidence: [evidence]
      }
    })
  return JSON.stringify({
    next: {
      kind: 'conclusion',
      summary: 'The despawn races the item reward.',
      hypotheses: ['H1'],
      evidence: [evidence]
    }
  })
}

/** Starts the endpoint; `behave` picks what to do with request `n` (1-based); the default answers every request. */
export const startModelEndpoint = async (
  behave: (r: ReceivedRequest) => Behaviour = () => ({ kind: 'answer' }),
  brain: (prompt: string) => string = investigationBrain
): Promise<ModelEndpoint> => {
  const requests: ReceivedRequest[] = []
  const served: Record<string, number> = {}
  const hanging = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (d: Buffer) => chunks.push(d))
    req.on('end', () => {
      let body: ReceivedRequest['body'] = {}
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedRequest['body']
      } catch {
        body = {}
      }
      const r: ReceivedRequest = { n: requests.length + 1, headers: req.headers, body }
      requests.push(r)
      if (req.method !== 'POST' || !new URL(req.url ?? '/', 'http://x').pathname.endsWith('/chat/completions')) {
        served['status-404'] = (served['status-404'] ?? 0) + 1
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `no route ${String(req.url)}` } }))
        return
      }
      const b = behave(r)
      const key = b.kind === 'status' ? `status-${b.status}` : b.kind
      served[key] = (served[key] ?? 0) + 1
      switch (b.kind) {
        case 'answer': {
          const content = b.content ?? brain(promptOf(r))
          const promptTokens = Math.ceil(promptOf(r).length / 4)
          const completionTokens = Math.ceil(content.length / 4)
          const payload = {
            id: `chatcmpl-${r.n}`,
            object: 'chat.completion',
            created: 1_764_547_200,
            model: b.model ?? `${body.model ?? 'unknown'}-2026-11-01`,
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage:
              b.usage === undefined
                ? {
                    prompt_tokens: promptTokens,
                    completion_tokens: completionTokens,
                    total_tokens: promptTokens + completionTokens
                  }
                : b.usage
          }
          const send = (): void => {
            res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(payload))
          }
          if (b.delayMs === undefined) send()
          else setTimeout(send, b.delayMs)
          return
        }
        case 'status':
          res
            .writeHead(b.status, { 'content-type': 'application/json', ...b.headers })
            .end(b.body ?? JSON.stringify({ error: { message: `scripted status ${b.status}`, type: 'server_error' } }))
          return
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' }).end('<html>502 Bad Gateway</html>')
          return
        case 'hang':
          hanging.add(res)
          return
        case 'reset':
          req.socket.destroy()
          return
        default: {
          const _never: never = b
          return _never
        }
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    served,
    close: async () => {
      for (const res of hanging) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
