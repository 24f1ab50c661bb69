/**
 * Signing through an SSH agent (draft-miller-ssh-agent: the socket SSH_AUTH_SOCK names), for a
 * passphrase-protected key the agent holds (`ssh-add KEY`): the key never leaves the agent and vba
 * never sees the passphrase. Two requests: the identities the agent holds, and a signature of
 * bytes by one of them (an Ed25519 signature is plain Ed25519 over the bytes, so SSHSIG and
 * signed heads are made from it as from a key file).
 */
import { connect } from 'node:net'
import { ED25519, WireReader, sshString } from '../events/ssh-sig.js'
import { FailureError } from '../failures/error.js'
import { failure } from '../failures/failure.js'

const AGENT_FAILURE = 5
const REQUEST_IDENTITIES = 11
const IDENTITIES_ANSWER = 12
const SIGN_REQUEST = 13
const SIGN_RESPONSE = 14
/** An answer larger than this is no agent's (1 MiB holds thousands of keys). */
const MAX_ANSWER = 1 << 20

const frame = (type: number, body: Buffer): Buffer => {
  const len = Buffer.alloc(4)
  len.writeUInt32BE(body.length + 1)
  return Buffer.concat([len, Buffer.from([type]), body])
}

const agentFailure = (socket: string, why: string): FailureError =>
  new FailureError(failure('KEY_AGENT_FAILED', `the SSH agent at ${socket} ${why}`, { socket }))
const unavailable = (socket: string, why: string): never => {
  throw agentFailure(socket, why)
}

/** One request and its answer (type and body) over a new connection to the agent. */
const ask = (socket: string, type: number, body: Buffer): Promise<{ type: number; body: Buffer }> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const done = (f: () => void): void => {
      if (settled) return
      settled = true
      c.destroy()
      f()
    }
    const c = connect(socket, () => c.write(frame(type, body)))
    c.on('data', (d: Buffer) => {
      chunks.push(d)
      size += d.length
      const all = Buffer.concat(chunks)
      if (all.length < 4) return
      const n = all.readUInt32BE(0)
      if (n < 1 || n > MAX_ANSWER) return done(() => reject(agentFailure(socket, 'answered with a malformed message')))
      if (size >= 4 + n) done(() => resolve({ type: all[4] as number, body: all.subarray(5, 4 + n) }))
    })
    c.on('error', (e: NodeJS.ErrnoException) =>
      done(() => reject(agentFailure(socket, `cannot be reached (${e.code ?? e.message})`)))
    )
    c.on('close', () => done(() => reject(agentFailure(socket, 'closed the connection without an answer'))))
  })

/** The identities the agent holds: each key's wire blob and comment. */
export const agentIdentities = async (
  socket: string
): Promise<ReadonlyArray<{ readonly blob: Buffer; readonly comment: string }>> => {
  const answer = await ask(socket, REQUEST_IDENTITIES, Buffer.alloc(0))
  if (answer.type !== IDENTITIES_ANSWER) return unavailable(socket, `refused to list its keys (answer ${answer.type})`)
  const r = new WireReader(answer.body)
  const n = r.u32() ?? 0
  const out: Array<{ blob: Buffer; comment: string }> = []
  for (let i = 0; i < n; i++) {
    const blob = r.string()
    const comment = r.string()
    if (blob === undefined || comment === undefined) return unavailable(socket, 'answered with a truncated key list')
    out.push({ blob: Buffer.from(blob), comment: comment.toString('utf8') })
  }
  return out
}

/** The agent's Ed25519 signature (64 bytes) of `data` by the key whose blob is `blob`. */
export const agentSign = async (socket: string, blob: Buffer, data: Uint8Array): Promise<Buffer> => {
  const answer = await ask(socket, SIGN_REQUEST, Buffer.concat([sshString(blob), sshString(data), Buffer.alloc(4)]))
  if (answer.type === AGENT_FAILURE)
    return unavailable(socket, 'refused to sign (was the key removed, or confirmation denied?)')
  if (answer.type !== SIGN_RESPONSE)
    return unavailable(socket, `answered a signature request with message ${answer.type}`)
  const sig = new WireReader(new WireReader(answer.body).string() ?? Buffer.alloc(0))
  const type = sig.string()?.toString('latin1')
  const raw = sig.string()
  if (type !== ED25519 || raw?.length !== 64)
    return unavailable(socket, 'answered with a signature that is not Ed25519')
  return Buffer.from(raw)
}
