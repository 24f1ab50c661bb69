/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads git
 * objects; this one checks each stored blob against its id, writes its bytes to blobs.dat, derives
 * its trigram filters into scratch files and acknowledges each batch, so the main thread can bound
 * what is in flight. At the end it writes filters.dat bit-sliced from its scratch file
 * (index-slices.ts) while the main thread does the same for folded.dat.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { trigramFilters } from './index-format.js'
import { SCRATCH, writeAll, writeSliced } from './index-slices.js'
import { mismatch } from './object-reader.js'

/** Blobs packed one after another into `bytes` (the first `used` bytes), with their ids, sizes and filter sizes. */
export type WriterMessage =
  | {
      readonly type: 'blobs'
      readonly bytes: Uint8Array<ArrayBuffer>
      readonly used: number
      readonly oids: readonly string[]
      readonly sizes: readonly number[]
      readonly logs: readonly number[]
    }
  | { readonly type: 'end' }
export type WriterReply =
  /** The batch is written: its buffer comes back to be filled again. */
  | { readonly type: 'ack'; readonly bytes: number; readonly batch: Uint8Array<ArrayBuffer> }
  /** A blob whose bytes are not those of its id: the build stops. */
  | { readonly type: 'corrupt'; readonly oid: string; readonly message: string }
  /** Every blob is written and filtered: the main thread may slice folded.dat from its scratch file. */
  | { readonly type: 'filtered' }
  | { readonly type: 'done'; readonly filtersSha256: string; readonly filtersBytes: number }

const port = parentPort
if (port === null) throw new Error('index-writer-worker runs as a worker thread')
const dir = (workerData as { dir: string }).dir
const blobsFd = fs.openSync(path.join(dir, 'blobs.dat'), 'w')
const [exactFd, foldedFd] = SCRATCH.map((f) => fs.openSync(path.join(dir, f), 'w')) as [number, number]
const logs: number[] = []
let failed = false
/** The filters of one batch, one after another, written with one call per scratch file. */
const pending = [new Uint8Array(1 << 18), new Uint8Array(1 << 18)]
const pendingUsed = [0, 0]
const append = (k: number, f: Uint8Array): void => {
  const used = pendingUsed[k] ?? 0
  let into = pending[k] as Uint8Array
  if (used + f.length > into.length) {
    const grown = new Uint8Array(Math.max(2 * into.length, used + f.length))
    grown.set(into.subarray(0, used))
    pending[k] = into = grown
  }
  into.set(f, used)
  pendingUsed[k] = used + f.length
}
port.on('message', (m: WriterMessage) => {
  if (failed) return
  if (m.type === 'blobs') {
    let at = 0
    for (let i = 0; i < m.sizes.length; i++) {
      const size = m.sizes[i] ?? 0
      const bytes = m.bytes.subarray(at, at + size)
      const oid = m.oids[i] ?? ''
      const wrong = mismatch(oid, { type: 'blob', content: Buffer.from(bytes.buffer, bytes.byteOffset, size) })
      if (wrong !== null) {
        failed = true
        port.postMessage({ type: 'corrupt', oid, message: wrong.message } satisfies WriterReply)
        return
      }
      const log = m.logs[i] ?? 9
      // Views of the kernel's memory, copied into the batch's filters before the next blob.
      const f = trigramFilters(bytes, log, true)
      append(0, f.exact)
      append(1, f.folded)
      logs.push(log)
      at += size
    }
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    writeAll(exactFd, (pending[0] as Uint8Array).subarray(0, pendingUsed[0]))
    writeAll(foldedFd, (pending[1] as Uint8Array).subarray(0, pendingUsed[1]))
    pendingUsed[0] = pendingUsed[1] = 0
    port.postMessage({ type: 'ack', bytes: m.used, batch: m.bytes } satisfies WriterReply, [m.bytes.buffer])
  } else {
    for (const fd of [blobsFd, exactFd, foldedFd]) fs.closeSync(fd)
    port.postMessage({ type: 'filtered' } satisfies WriterReply)
    const exact = writeSliced(path.join(dir, 'filters.dat'), path.join(dir, SCRATCH[0]), logs)
    port.postMessage({ type: 'done', filtersSha256: exact.sha256, filtersBytes: exact.bytes } satisfies WriterReply)
    port.close()
  }
})
