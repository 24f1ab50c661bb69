/**
 * The writing half of a snapshot index build, on a second thread: the main thread reads and
 * checks git objects; this one writes their bytes to blobs.dat, derives their trigram filters
 * and acknowledges each batch, so the main thread can bound what is in flight; at the end it
 * writes filters.dat and folded.dat, bit-sliced (index-format.ts) one class at a time from
 * scratch files of the filters as derived (so no more than one class is held in memory).
 */
import * as fs from 'node:fs'
import * as path from 'node:path'
import { parentPort, workerData } from 'node:worker_threads'
import { createHash } from 'node:crypto'
import { FILTER_CHUNK, slicedClasses, trigramFilters } from './index-format.js'

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
// Every blob's two filters are written one after another to scratch files as they come (the
// main thread's order); at the end both files are written bit-sliced from them, class by class.
const scratch = [path.join(dir, 'filters.tmp'), path.join(dir, 'folded.tmp')].map((f) => ({
  file: f,
  fd: fs.openSync(f, 'w+')
}))
const logs: number[] = []
const starts: number[] = []
let scratchBytes = 0
let filtersBytes = 0
const writeAll = (fd: number, b: Uint8Array, at?: number): void => {
  for (let done = 0; done < b.length; )
    done += fs.writeSync(fd, b, done, b.length - done, at === undefined ? null : at + done)
}
/** The SHA-256 of each FILTER_CHUNK bytes of a file written in order, 32 bytes each, base64. */
const chunkDigester = (): { readonly update: (b: Uint8Array) => void; readonly end: () => string } => {
  const digests: Buffer[] = []
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
          digests.push(hash.digest())
          hash = createHash('sha256')
          inChunk = 0
        }
      }
    },
    end: () => Buffer.concat(inChunk > 0 ? [...digests, hash.digest()] : digests).toString('base64')
  }
}
/** Writes one filter file, bit-sliced from its scratch file, which is then removed; its chunk digests. */
const writeSliced = (fd: number, from: { readonly file: string; readonly fd: number }): string => {
  const digests = chunkDigester()
  const filterOf = (i: number): Uint8Array => {
    const b = Buffer.allocUnsafe(1 << ((logs[i] ?? 9) - 3))
    if (fs.readSync(from.fd, b, 0, b.length, starts[i] ?? 0) !== b.length) throw new Error('a scratch file ended early')
    return b
  }
  filtersBytes = 0
  for (const region of slicedClasses(logs.length, filterOf, logs)) {
    writeAll(fd, region)
    digests.update(region)
    filtersBytes += region.length
  }
  fs.closeSync(fd)
  fs.closeSync(from.fd)
  fs.rmSync(from.file)
  return digests.end()
}
port.on('message', (m: WriterMessage) => {
  if (m.type === 'blobs') {
    writeAll(blobsFd, m.bytes.subarray(0, m.used))
    let at = 0
    m.sizes.forEach((size, i) => {
      const log = m.logs[i] ?? 9
      const f = trigramFilters(m.bytes.subarray(at, at + size), log)
      writeAll(scratch[0]?.fd ?? -1, f.exact, scratchBytes)
      writeAll(scratch[1]?.fd ?? -1, f.folded, scratchBytes)
      logs.push(log)
      starts.push(scratchBytes)
      scratchBytes += f.exact.length
      at += size
    })
    port.postMessage({ type: 'ack', bytes: m.used } satisfies WriterReply)
  } else {
    fs.closeSync(blobsFd)
    const [exact, folded] = scratch as [{ file: string; fd: number }, { file: string; fd: number }]
    const filtersSha256 = writeSliced(filtersFd, exact)
    const foldedSha256 = writeSliced(foldedFd, folded)
    port.postMessage({ type: 'done', filtersSha256, foldedSha256, filtersBytes } satisfies WriterReply)
    port.close()
  }
})
