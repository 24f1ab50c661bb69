/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads and
 * checks git objects; this one writes their bytes to blobs.dat, derives their trigram filters
 * and acknowledges each batch, so the main thread can bound what is in flight; at the end it
 * writes filters.dat and folded.dat, bit-sliced (index-format.ts).
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { chunkDigests, sliceFilters, trigramFilters } from './index-format.js'

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
  | {
      readonly type: 'done'
      readonly filtersSha256: string
      readonly foldedSha256: string
      readonly filtersBytes: number
    }

const port = parentPort
if (port === null) throw new Error('index-writer-worker runs as a worker thread')
const dir = (workerData as { dir: string }).dir
const blobsFd = fs.openSync(path.join(dir, 'blobs.dat'), 'w')
const filtersFd = fs.openSync(path.join(dir, 'filters.dat'), 'w')
const foldedFd = fs.openSync(path.join(dir, 'folded.dat'), 'w')
// Every blob's two filters, in the order received: both files are written bit-sliced at the end.
const exact: Uint8Array[] = []
const folded: Uint8Array[] = []
let filtersBytes = 0
const writeAll = (fd: number, b: Uint8Array): void => {
  for (let done = 0; done < b.length; ) done += fs.writeSync(fd, b, done, b.length - done)
}
/** Writes one filter file, bit-sliced; its chunk digests. */
const writeSliced = (fd: number, filters: Uint8Array[]): string => {
  const sliced = sliceFilters(filters)
  filters.length = 0
  writeAll(fd, sliced)
  fs.closeSync(fd)
  filtersBytes = sliced.length
  return chunkDigests(sliced)
}
port.on('message', (m: WriterMessage) => {
  if (m.type === 'blobs') {
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    let at = 0
    m.sizes.forEach((size, i) => {
      const f = trigramFilters(m.bytes.subarray(at, at + size), m.logs[i] ?? 9)
      exact.push(f.exact)
      folded.push(f.folded)
      at += size
    })
    port.postMessage({ type: 'ack', bytes: m.used } satisfies WriterReply)
  } else {
    fs.closeSync(blobsFd)
    const filtersSha256 = writeSliced(filtersFd, exact)
    const foldedSha256 = writeSliced(foldedFd, folded)
    port.postMessage({ type: 'done', filtersSha256, foldedSha256, filtersBytes } satisfies WriterReply)
    port.close()
  }
})
