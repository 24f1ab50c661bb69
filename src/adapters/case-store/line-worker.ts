/** Worker thread of {@link startLineDigests}: digests (and canonical form) of every log line. */
import { parentPort, workerData } from 'node:worker_threads'
import { promises as fsp, constants as fsc } from 'node:fs'
import { hash } from 'node:crypto'
import { isCanonicalText } from '../../events/canonical.js'

const { file, start, end, checkCanonical } = workerData as {
  file: string
  start: number
  end: number
  checkCanonical: boolean
}
const port = parentPort
if (port === null) throw new Error('line-worker must run as a worker thread')

const CHUNK = 1 << 22
const BATCH = 4096
const MEMBER = Buffer.from(',"hash":"')
const MEMBER_LENGTH = MEMBER.length + 'sha256:'.length + 64 + 1

// The main thread checked it is a regular file; never follow a symlink swapped in since.
const fh = await fsp.open(file, fsc.O_RDONLY | fsc.O_NOFOLLOW | fsc.O_NONBLOCK)
const buf = Buffer.allocUnsafe(CHUNK)
let carry = Buffer.alloc(0)
let pos = start
let line = 0
let first = 0
let digests = new Uint8Array(BATCH * 32)
let canonical = new Uint8Array(BATCH)
let n = 0
const scratch = Buffer.allocUnsafe(1 << 21)

const flush = (): void => {
  if (n === 0) return
  const d = digests.slice(0, n * 32)
  const c = canonical.slice(0, n)
  port.postMessage({ first, digests: d, canonical: c }, [d.buffer, c.buffer])
  first = line
  n = 0
  digests = new Uint8Array(BATCH * 32)
  canonical = new Uint8Array(BATCH)
}

const onLine = (bytes: Buffer): void => {
  const at = bytes.lastIndexOf(MEMBER)
  let digest: Buffer
  if (at >= 0 && bytes.length <= scratch.length) {
    bytes.copy(scratch, 0, 0, at)
    const rest = bytes.copy(scratch, at, at + MEMBER_LENGTH)
    digest = hash('sha256', scratch.subarray(0, at + rest), 'buffer')
  } else {
    digest = hash('sha256', bytes, 'buffer')
  }
  digests.set(digest, n * 32)
  if (checkCanonical) {
    let ok = false
    try {
      const text = bytes.toString('utf8')
      ok = isCanonicalText(text, JSON.parse(text))
    } catch {
      ok = false
    }
    canonical[n] = ok ? 1 : 0
  } else {
    canonical[n] = 1
  }
  n++
  line++
  if (n === BATCH) flush()
}

try {
  while (pos < end) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, end - pos), pos)
    if (bytesRead === 0) break
    const chunk = carry.length === 0 ? buf.subarray(0, bytesRead) : Buffer.concat([carry, buf.subarray(0, bytesRead)])
    let s = 0
    for (;;) {
      const nl = chunk.indexOf(10, s)
      if (nl < 0) break
      onLine(chunk.subarray(s, nl))
      s = nl + 1
    }
    carry = Buffer.from(chunk.subarray(s))
    pos += bytesRead
    flush()
  }
  flush()
} finally {
  await fh.close()
}
port.postMessage({ done: true })
