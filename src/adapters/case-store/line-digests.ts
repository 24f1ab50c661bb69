/**
 * Line digests computed on a second core. For a large log, a worker thread reads the same byte
 * range as the scan and, for every LF-terminated line, computes the SHA-256 of the line without
 * its hash member (and, when asked, whether the line is RFC 8785 canonical). The scan then checks
 * lines with these precomputed answers while it parses and folds on the main thread.
 *
 * The worker only speeds up; it decides nothing. Its answers are the same pure functions the
 * inline path uses (`lineDigest`, `isCanonicalText`), and any disagreement in line count makes the
 * scan fall back to inline checks.
 */
import { Worker } from 'node:worker_threads'

/** Logs smaller than this are checked inline (starting a worker costs ~30 ms). */
export const PARALLEL_THRESHOLD_BYTES = 8 << 20

export interface LineAnswer {
  readonly digest: string
  readonly canonical: boolean
}

export interface LineDigests {
  /** Resolves when answers for lines [0, index] are available (or the worker ended). */
  readonly until: (index: number) => Promise<void>
  /** The answer for line `index`, if the worker produced one. */
  readonly at: (index: number) => LineAnswer | undefined
  readonly stop: () => Promise<void>
}

interface Batch {
  readonly first: number
  readonly digests: Uint8Array
  readonly canonical: Uint8Array
}

export const startLineDigests = (file: string, start: number, end: number, checkCanonical: boolean): LineDigests => {
  const worker = new Worker(new URL('./line-worker.js', import.meta.url), {
    workerData: { file, start, end, checkCanonical }
  })
  const batches: Batch[] = []
  let available = 0
  let finished = false
  let waiters: Array<{ index: number; resolve: () => void }> = []
  const wake = (): void => {
    waiters = waiters.filter((w) => {
      if (finished || w.index < available) {
        w.resolve()
        return false
      }
      return true
    })
  }
  worker.on('message', (m: Batch | { done: true }) => {
    if ('done' in m) {
      finished = true
    } else {
      batches.push(m)
      available = m.first + m.canonical.length
    }
    wake()
  })
  const end_ = (): void => {
    finished = true
    wake()
  }
  worker.on('error', end_)
  worker.on('exit', end_)
  let cursor = 0
  return {
    until: (index) =>
      finished || index < available ? Promise.resolve() : new Promise((resolve) => waiters.push({ index, resolve })),
    at: (index) => {
      // Lines are requested in order, so a moving cursor finds the batch in O(1).
      while (cursor < batches.length) {
        const b = batches[cursor] as Batch
        if (index < b.first) return undefined
        if (index < b.first + b.canonical.length) {
          const i = index - b.first
          return {
            digest: `sha256:${Buffer.from(b.digests.buffer, b.digests.byteOffset + i * 32, 32).toString('hex')}`,
            canonical: b.canonical[i] === 1
          }
        }
        cursor++
      }
      return undefined
    },
    stop: async () => {
      await worker.terminate()
    }
  }
}
