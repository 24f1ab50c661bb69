/**
 * Line checks on both cores. For a large log, two worker threads each take one part of the byte
 * range (split after an LF near the middle) and check every line on its own (line-worker.ts); the
 * folding thread takes their chunks in order and does only what needs the lines before: the seq,
 * the link to the previous hash (across the seam too), ids, commands, rules and projections.
 *
 * The workers only speed up; they decide nothing the inline path would not. A line they did not
 * pass comes back as bytes and is checked inline, so every finding is the inline one.
 */
import { Worker } from 'node:worker_threads'

/** Logs smaller than this are checked inline (starting the workers costs ~50 ms). */
export const PARALLEL_THRESHOLD_BYTES = 8 << 20

/** One chunk as a worker read it: its bytes from `base`, and LINE_INTS ints per complete line. */
export interface LineBatch {
  readonly base: number
  readonly buffer: ArrayBuffer
  readonly meta: Int32Array
  readonly lines: number
}

/** What ends a part: its last chunk was read (bytes after its last LF), or a line the workers do not take. */
export type PartEnd = { readonly done: true; readonly carried: number } | { readonly stop: number }

export interface LineChecks {
  /** The next batch of the log in order, or how the log's checked range ends. */
  readonly next: () => Promise<LineBatch | PartEnd>
  readonly stop: () => Promise<void>
}

interface Part {
  readonly worker: Worker
  readonly control: Int32Array
  readonly queue: Array<LineBatch | PartEnd | Error>
  wake: (() => void) | null
  taken: number
}

const startPart = (file: string, start: number, end: number, canonical: boolean): Part => {
  const control = new Int32Array(new SharedArrayBuffer(8))
  const worker = new Worker(new URL('./line-worker.js', import.meta.url), {
    workerData: { file, start, end, canonical, control: control.buffer }
  })
  const part: Part = { worker, control, queue: [], wake: null, taken: 0 }
  const push = (m: LineBatch | PartEnd | Error): void => {
    part.queue.push(m)
    part.wake?.()
    part.wake = null
  }
  worker.on('message', push)
  worker.on('error', (e: Error) => push(e))
  worker.on('exit', () => push(new Error('line worker ended early')))
  return part
}

/** Checks [start, seam) and [seam, end) on two workers (one when `seam` is null). */
export const startLineChecks = (
  file: string,
  start: number,
  seam: number | null,
  end: number,
  canonical: boolean
): LineChecks => {
  const parts =
    seam === null
      ? [startPart(file, start, end, canonical)]
      : [startPart(file, start, seam, canonical), startPart(file, seam, end, canonical)]
  let current = 0
  const take = async (p: Part): Promise<LineBatch | PartEnd | Error> => {
    while (p.queue.length === 0) await new Promise<void>((resolve) => (p.wake = resolve))
    return p.queue.shift() as LineBatch | PartEnd | Error
  }
  const next = async (): Promise<LineBatch | PartEnd> => {
    for (;;) {
      const p = parts[current] as Part
      const m = await take(p)
      if (m instanceof Error) throw m
      if ('buffer' in m) {
        p.taken++
        Atomics.store(p.control, 0, p.taken)
        Atomics.notify(p.control, 0)
        return m
      }
      // The end of a part that is not the last: a seam with bytes before it is a line the workers do not take.
      if (current === parts.length - 1 || !('done' in m)) return m
      if (m.carried > 0) return { stop: (seam as number) - m.carried }
      current++
    }
  }
  return {
    next,
    stop: async () => {
      for (const p of parts) {
        Atomics.store(p.control, 1, 1)
        Atomics.notify(p.control, 0)
      }
      await Promise.all(parts.map((p) => p.worker.terminate()))
    }
  }
}
