/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads and
 * checks git objects; this one writes their bytes to blobs.dat and their trigram filters to
 * filters.dat and folded.dat (in the order received) and acknowledges each, so the main thread can bound what is
 * in flight.
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { parentPort, workerData } from 'node:worker_threads'
import { FILTER_CHUNK, trigramFilters } from './index-format.js'

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
      readonly filtersSha256: readonly string[]
      readonly foldedSha256: readonly string[]
      readonly filtersBytes: number
    }

const port = parentPort
if (port === null) throw new Error('index-writer-worker runs as a worker thread')
const dir = (workerData as { dir: string }).dir
const blobsFd = fs.openSync(path.join(dir, 'blobs.dat'), 'w')
const filtersFd = fs.openSync(path.join(dir, 'filters.dat'), 'w')
const foldedFd = fs.openSync(path.join(dir, 'folded.dat'), 'w')
/** The SHA-256 of each FILTER_CHUNK bytes of a file written in order (index.json's filters_sha256). */
const chunkDigests = (): { readonly update: (b: Uint8Array) => void; readonly end: () => string[] } => {
  const digests: string[] = []
  let hash = createHash('sha256')
  let inChunk = 0
  return {
    update: (b) => {
      for (let at = 0; at < b.length; ) {
        const n = Math.min(b.length - at, FILTER_CHUNK - inChunk)
        hash.update(b.subarray(at, at + n))
        at += n
        inChunk += n
        if (inChunk === FILTER_CHUNK) {
          digests.push(hash.digest('hex'))
          hash = createHash('sha256')
          inChunk = 0
        }
      }
    },
    end: () => (inChunk > 0 ? [...digests, hash.digest('hex')] : digests)
  }
}
const hash = chunkDigests()
const foldedHash = chunkDigests()
let filtersBytes = 0
const writeAll = (fd: number, b: Uint8Array): void => {
  for (let done = 0; done < b.length; ) done += fs.writeSync(fd, b, done, b.length - done)
}
port.on('message', (m: WriterMessage) => {
  if (m.type === 'blobs') {
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    let at = 0
    m.sizes.forEach((size, i) => {
      const f = trigramFilters(m.bytes.subarray(at, at + size), m.logs[i] ?? 9)
      writeAll(filtersFd, f.exact)
      hash.update(f.exact)
      writeAll(foldedFd, f.folded)
      foldedHash.update(f.folded)
      filtersBytes += f.exact.length
      at += size
    })
    port.postMessage({ type: 'ack', bytes: m.used } satisfies WriterReply)
  } else {
    fs.closeSync(blobsFd)
    fs.closeSync(filtersFd)
    fs.closeSync(foldedFd)
    port.postMessage({
      type: 'done',
      filtersSha256: hash.end(),
      foldedSha256: foldedHash.end(),
      filtersBytes
    } satisfies WriterReply)
    port.close()
  }
})
