/** Writing the files of a snapshot index build (index-build.ts, index-writer-worker.ts). */
import * as fs from 'node:fs'
import { createHash, hash, type Hash } from 'node:crypto'
import { FILTER_CHUNK } from './index-format.js'

/**
 * The SHA-256 of each FILTER_CHUNK bytes of a file written in order, 32 bytes each, base64. Whole
 * chunks are hashed by one call each (`crypto.hash`), a chunk split between two writes
 * incrementally: the 6,600 chunks of a build's two filter files cost ~10 ms less than with a hash
 * object per chunk.
 */
export const chunkDigester = (): { readonly update: (b: Uint8Array) => void; readonly end: () => string } => {
  const digests: Buffer[] = []
  // The chunk begun by an earlier write, and how many of its bytes that was.
  let partial: Hash | null = null
  let inChunk = 0
  return {
    update: (b) => {
      let at = 0
      if (partial !== null) {
        at = Math.min(b.length, FILTER_CHUNK - inChunk)
        partial.update(b.subarray(0, at))
        inChunk += at
        if (inChunk < FILTER_CHUNK) return
        digests.push(partial.digest())
        partial = null
      }
      for (; at + FILTER_CHUNK <= b.length; at += FILTER_CHUNK)
        digests.push(hash('sha256', b.subarray(at, at + FILTER_CHUNK), 'buffer'))
      if (at < b.length) {
        partial = createHash('sha256').update(b.subarray(at))
        inChunk = b.length - at
      }
    },
    end: () => Buffer.concat(partial !== null ? [...digests, partial.digest()] : digests).toString('base64')
  }
}

/**
 * Bytes per write call. Linux sizes the page-cache folios of a buffered write by the write's
 * length: a 1 MiB write takes high-order free blocks, which a VM's free page reporting may have
 * handed back to its host (every page faults again on the host when written), while folios up to
 * 32 KiB come from the allocator's per-CPU lists of recently freed pages. Writing the 119 MB of
 * blobs.dat on the 2-core test VM: 280-350 ms of system time in 1 MiB writes, 27-44 ms in 32 KiB
 * writes (3,600 more calls cost a few ms where no such effect exists).
 */
const WRITE_PIECE = 32 << 10

/** Writes all of `b` to `fd` (at `at`, else at the file's position), WRITE_PIECE bytes a call. */
export const writeAll = (fd: number, b: Uint8Array, at?: number): void => {
  for (let done = 0; done < b.length; )
    done += fs.writeSync(fd, b, done, Math.min(b.length - done, WRITE_PIECE), at === undefined ? null : at + done)
}

/** Writes `b` as the file `file` (created or truncated) through writeAll. */
export const writeFileAll = (file: string, b: Uint8Array): void => {
  const fd = fs.openSync(file, 'w')
  try {
    writeAll(fd, b)
  } finally {
    fs.closeSync(fd)
  }
}
