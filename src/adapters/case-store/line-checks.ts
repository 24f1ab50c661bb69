/**
 * Line checks on more than one core. The folding thread reads the log in pieces of whole lines and
 * hands each to a worker thread (line-worker.ts) that checks every line on its own, as checkLine
 * does without the chain; a piece comes back transferred, not copied, with LINE_INTS ints per line
 * (line-layout.ts), and the folding thread folds it (feed-log.ts).
 *
 * The workers only speed up; they decide nothing the inline path would not. A line they did not
 * pass comes back as bytes and is checked inline, so every finding is the inline one.
 */
import { availableParallelism } from 'node:os'
import { Worker } from 'node:worker_threads'
import { workerScript } from '../worker-script.js'
import { LINE_LAYOUT } from './line-layout.js'

/** Logs smaller than this are checked inline (starting a worker costs ~50 ms of its own CPU). */
export const PARALLEL_THRESHOLD_BYTES = 8 << 20

/**
 * Worker threads for line checks: one beside the folding thread on two cores (a second would only
 * take CPU from it), two where there are more.
 */
export const defaultLineWorkers = (): number => Math.min(2, Math.max(1, availableParallelism() - 1))

/** A piece as a worker checked it: its bytes, and LINE_INTS ints per line up to `lines`. */
export interface CheckedPiece {
  readonly id: number
  readonly buffer: ArrayBuffer
  readonly meta: Int32Array
  readonly lines: number
  /** The offset in the piece of a line longer than MAX_LINE_BYTES (not checked, nor any after it), or -1. */
  readonly stopAt: number
}

export interface LineWorkers {
  /** How many pieces worker `w` holds (sent, not yet answered). */
  readonly held: (w: number) => number
  /** Whether worker `w` has loaded (it said so): a piece sent before would wait. */
  readonly ready: (w: number) => boolean
  readonly count: number
  /**
   * Sends the piece (`length` bytes of `buffer`, which is transferred) to worker `w`, with the
   * digests of its `lines` lines when this thread computed them (transferred too).
   */
  readonly send: (
    w: number,
    id: number,
    buffer: ArrayBuffer,
    length: number,
    digests: ArrayBuffer | null,
    lines: number
  ) => void
  /** Passes every answer already in to `take`; false when a worker failed. */
  readonly poll: (take: (a: CheckedPiece) => void) => boolean
  /** Waits for an answer or a worker to be ready, and passes every answer to `take`; false when a worker failed. */
  readonly next: (take: (a: CheckedPiece) => void) => Promise<boolean>
  readonly stop: () => Promise<void>
}

/** Starts `count` line workers checking canonical form when `canonical`. */
export const startLineWorkers = (count: number, canonical: boolean): LineWorkers => {
  const answers: Array<CheckedPiece | Error> = []
  let wake: (() => void) | null = null
  const push = (m: CheckedPiece | Error): void => {
    answers.push(m)
    wake?.()
    wake = null
  }
  const held: number[] = []
  const ready: boolean[] = []
  let readied = false
  const workers = Array.from({ length: count }, (_, w) => {
    held.push(0)
    ready.push(false)
    const worker = new Worker(workerScript('line-worker.js', import.meta.url, 'adapters/case-store/line-checks.js'), {
      workerData: { canonical }
    })
    worker.on('message', (m: CheckedPiece | { ready: string }) => {
      if ('ready' in m) {
        // A worker built from other sources (a stale bundle) would describe lines otherwise.
        if (m.ready !== LINE_LAYOUT) {
          push(new Error('line worker of another build'))
          return
        }
        ready[w] = true
        readied = true
        wake?.()
        wake = null
        return
      }
      held[w] = (held[w] as number) - 1
      push(m)
    })
    worker.on('error', (e: Error) => push(e))
    worker.on('exit', () => push(new Error('line worker ended early')))
    return worker
  })
  let stopped = false
  const poll = (take: (a: CheckedPiece) => void): boolean => {
    for (let m = answers.shift(); m !== undefined; m = answers.shift()) {
      if (m instanceof Error) return false
      take(m)
    }
    return true
  }
  return {
    count,
    held: (w) => held[w] as number,
    ready: (w) => ready[w] as boolean,
    send: (w, id, buffer, length, digests, lines) => {
      held[w] = (held[w] as number) + 1
      ;(workers[w] as Worker).postMessage(
        { id, buffer, length, digests, lines },
        digests === null ? [buffer] : [buffer, digests]
      )
    },
    poll,
    next: async (take) => {
      readied = false
      while (answers.length === 0 && !readied) await new Promise<void>((resolve) => (wake = resolve))
      return poll(take)
    },
    stop: async () => {
      if (stopped) return
      stopped = true
      await Promise.all(workers.map((w) => w.terminate()))
    }
  }
}
