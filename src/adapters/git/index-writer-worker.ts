/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads and
 * checks git objects; this one writes their bytes to blobs.dat and their trigram filters to
 * filters.dat (in the order received) and acknowledges each, so the main thread can bound what is
 * in flight.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { parentPort, workerData } from 'node:worker_threads'
import { trigramFilter } from './index-format.js'

/** Blobs packed one after another into `bytes` (the first `used` bytes), with their sizes and filter sizes. */
export type WriterMessage =
  | {
      readonly type: 'blobs'
      readonly bytes: Uint8Array
      readonly used: number
      readonly sizes: readonly number[]
      readonly logs: readonly number[]
    }
  | { readonly type: 'end' }
export type WriterReply =
  | { readonly type: 'ack'; readonly bytes: number }
  | { readonly type: 'done'; readonly filtersSha256: string; readonly filtersBytes: number }

const port = parentPort
if (port === null) throw new Error('index-writer-worker runs as a worker thread')
const dir = (workerData as { dir: string }).dir
const blobsFd = fs.openSync(path.join(dir, 'blobs.dat'), 'w')
const filtersFd = fs.openSync(path.join(dir, 'filters.dat'), 'w')
const hash = createHash('sha256')
let filtersBytes = 0
const writeAll = (fd: number, b: Uint8Array): void => {
  for (let done = 0; done < b.length; ) done += fs.writeSync(fd, b, done, b.length - done)
}
port.on('message', (m: WriterMessage) => {
  if (m.type === 'blobs') {
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    let at = 0
    m.sizes.forEach((size, i) => {
      const f = trigramFilter(m.bytes.subarray(at, at + size), m.logs[i] ?? 9)
      writeAll(filtersFd, f)
      hash.update(f)
      filtersBytes += f.length
      at += size
    })
    port.postMessage({ type: 'ack', bytes: m.used } satisfies WriterReply)
  } else {
    fs.closeSync(blobsFd)
    fs.closeSync(filtersFd)
    port.postMessage({ type: 'done', filtersSha256: hash.digest('hex'), filtersBytes } satisfies WriterReply)
    port.close()
  }
})
