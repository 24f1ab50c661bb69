/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads git
 * objects; this one checks each stored blob against its id, writes its bytes to blobs.dat, derives
 * its trigram filters into their slots of the sliced rows (filter-slicer.ts) and acknowledges each
 * batch, so the main thread can bound what is in flight. At the end it writes filters.dat and hands
 * the rows of folded.dat to the main thread, which writes that file meanwhile.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { STORE_LIMIT } from './index-format.js'
import { filterSlicer } from './filter-slicer.js'
import { chunkDigester, writeAll } from './index-slices.js'
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
  /** The rows of the next class in folded.dat (the main thread writes them). */
  | { readonly type: 'folded'; readonly bytes: Uint8Array<ArrayBuffer> }
  /** filters.dat is written: the SHA-256 of each of its chunks (index.json's filters_sha256) and its size. */
  | { readonly type: 'done'; readonly filtersSha256: string; readonly filtersBytes: number }

const port = parentPort
if (port === null) throw new Error('index-writer-worker runs as a worker thread')
const dir = (workerData as { dir: string }).dir
const blobsFd = fs.openSync(path.join(dir, 'blobs.dat'), 'w')
const slicer = filterSlicer(STORE_LIMIT)
let failed = false
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
      slicer.add(bytes, m.logs[i] ?? 9)
      at += size
    }
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    port.postMessage({ type: 'ack', bytes: m.used, batch: m.bytes } satisfies WriterReply, [m.bytes.buffer])
  } else {
    fs.closeSync(blobsFd)
    const fd = fs.openSync(path.join(dir, 'filters.dat'), 'w')
    const digests = chunkDigester()
    let filtersBytes = 0
    for (const [exact, folded] of slicer.regions()) {
      const rows = folded.slice()
      port.postMessage({ type: 'folded', bytes: rows } satisfies WriterReply, [rows.buffer])
      writeAll(fd, exact)
      digests.update(exact)
      filtersBytes += exact.length
    }
    fs.closeSync(fd)
    port.postMessage({ type: 'done', filtersSha256: digests.end(), filtersBytes } satisfies WriterReply)
    port.close()
  }
})
