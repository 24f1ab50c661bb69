/**
 * The stdio transport of `vba mcp`: newline-delimited JSON-RPC on stdin and stdout, as the SDK's
 * StdioServerTransport, but a line it cannot take is answered instead of closing the transport
 * without a word. A message over `maxMessageBytes` is skipped to its end (never buffered) and
 * answered -32600 with MESSAGE_TOO_LARGE, with the request id when its first or last bytes name
 * one; a line that is not JSON is -32700, JSON that is not JSON-RPC -32600. Each refusal is also
 * a line on the log (stderr); the server stays up. The transport closes when stdin ends.
 */
import type { Readable, Writable } from 'node:stream'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import type { McpSdk } from './server.js'

/** The largest message read (the SDK's own stdio limit). */
export const MAX_STDIO_MESSAGE_BYTES = 10 * 1024 * 1024

const EDGE = 512
type Id = string | number | null

/** The request id a message's first or last bytes name (`{"jsonrpc":"2.0","id":7,…` or `…,"id":7}`), else null. */
export const idOfEdges = (head: string, tail: string): Id => {
  const value = (v: string | undefined): Id => (v === undefined ? null : (JSON.parse(v) as string | number))
  const first =
    /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")\s*[,}]/.exec(head)
  if (first !== null) return value(first[1])
  const last = /[,{]\s*"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")\s*\}\s*$/.exec(tail)
  return value(last?.[1])
}

export interface StdioOptions {
  readonly stdin?: Readable
  readonly stdout?: Writable
  readonly maxMessageBytes?: number
  /** One line per refused message. */
  readonly log: (line: string) => void
}

/** One line of stdin as a JSON-RPC message, or why it is refused (null: a blank line). */
const readLine = (
  sdk: McpSdk,
  text: string
): { readonly message: JSONRPCMessage } | { readonly refused: { id: Id; code: number; message: string } } | null => {
  if (text.trim() === '') return null
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return {
      refused: {
        id: null,
        code: -32700,
        message: 'MESSAGE_NOT_JSON: a line of stdin is not JSON (one JSON-RPC message per line)'
      }
    }
  }
  const checked = sdk.types.JSONRPCMessageSchema.safeParse(parsed)
  if (checked.success) return { message: checked.data }
  const id = (parsed as { id?: unknown } | null)?.id
  return {
    refused: {
      id: typeof id === 'string' || typeof id === 'number' ? id : null,
      code: -32600,
      message: 'MESSAGE_INVALID: the message is not a JSON-RPC 2.0 request, notification or response'
    }
  }
}

/** A stdio server transport that answers what it cannot read. */
export const stdioTransport = (sdk: McpSdk, o: StdioOptions): Transport => {
  const stdin = o.stdin ?? process.stdin
  const stdout = o.stdout ?? process.stdout
  const max = o.maxMessageBytes ?? MAX_STDIO_MESSAGE_BYTES
  let chunks: Buffer[] = []
  let size = 0
  // While a line is over the limit: its first bytes, its last bytes and its length so far.
  let over: { head: string; tail: Buffer; bytes: number } | null = null
  let closed = false
  const t: Transport = {
    start: async () => {
      stdin.on('data', onData)
      stdin.once('end', () => void t.close())
    },
    send: (message) =>
      new Promise<void>((resolve) => {
        if (closed) {
          resolve()
          return
        }
        if (stdout.write(`${JSON.stringify(message)}\n`)) resolve()
        else stdout.once('drain', resolve)
      }),
    close: async () => {
      if (closed) return
      closed = true
      stdin.off('data', onData)
      stdin.pause()
      chunks = []
      t.onclose?.()
    }
  }
  const reply = (id: Id, code: number, message: string): void => {
    o.log(`vba mcp: ${message}`)
    // JSON-RPC answers a request it cannot read with id null.
    // The failure code the message starts with is data.code too (as the server's errors carry it).
    const data = { code: /^([A-Z][A-Z0-9_]*): /.exec(message)?.[1] ?? 'INVALID_ARGUMENT' }
    void t.send({ jsonrpc: '2.0', id, error: { code, message, data } } as unknown as JSONRPCMessage)
  }
  const line = (text: string): void => {
    const read = readLine(sdk, text)
    if (read === null) return
    if ('refused' in read) reply(read.refused.id, read.refused.code, read.refused.message)
    else t.onmessage?.(read.message)
  }
  const skipped = (rest: Buffer): void => {
    if (over === null) return
    const tail = Buffer.concat([over.tail, rest]).subarray(-EDGE).toString('utf8')
    const bytes = over.bytes + rest.length
    const head = over.head
    over = null
    reply(
      idOfEdges(head, tail),
      -32600,
      `MESSAGE_TOO_LARGE: a message of ${bytes} bytes, over the limit of ${max} bytes, was refused unread`
    )
  }
  const onData = (chunk: Buffer): void => {
    let rest = chunk
    for (;;) {
      const nl = rest.indexOf(10)
      const part = nl === -1 ? rest : rest.subarray(0, nl)
      if (over !== null) {
        if (nl === -1) {
          over = {
            head: over.head,
            tail: Buffer.concat([over.tail, part]).subarray(-EDGE),
            bytes: over.bytes + part.length
          }
          return
        }
        skipped(part)
      } else if (size + part.length > max) {
        const all = Buffer.concat([...chunks, part])
        over = { head: all.subarray(0, EDGE).toString('utf8'), tail: all.subarray(-EDGE), bytes: all.length }
        chunks = []
        size = 0
        if (nl !== -1) skipped(Buffer.alloc(0))
      } else if (nl === -1) {
        chunks.push(part)
        size += part.length
        return
      } else {
        const text = Buffer.concat([...chunks, part])
          .toString('utf8')
          .replace(/\r$/, '')
        chunks = []
        size = 0
        line(text)
      }
      rest = rest.subarray(nl + 1)
      if (rest.length === 0) return
    }
  }
  return t
}
