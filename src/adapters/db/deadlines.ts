/**
 * The client-side time limit of streamed queries: one timer for all of an executor's queries
 * instead of one set and cleared per query (starting and stopping Node's timer for a new list cost
 * more per query than reading a row of 12 columns, bench/db-rows). The timer is armed for the
 * earliest deadline while any query runs, and unreferenced: one still armed after its queries
 * finished, or after a query stopped early, never keeps the process alive.
 */
export class Deadlines {
  private readonly running = new Set<{ readonly at: number; readonly expire: () => void }>()
  private timer: ReturnType<typeof setTimeout> | undefined

  constructor(private readonly ms: number) {}

  /** `expire` is called once `ms` have passed, unless the returned function is called before. */
  start(expire: () => void): () => void {
    const entry = { at: performance.now() + this.ms, expire }
    this.running.add(entry)
    // Deadlines only grow: one armed already is as early as this one, or earlier.
    if (this.timer === undefined) this.arm(entry.at)
    return () => {
      this.running.delete(entry)
    }
  }

  private arm(at: number): void {
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()))
    this.timer.unref()
  }

  private fire(): void {
    this.timer = undefined
    const now = performance.now()
    let next = Number.POSITIVE_INFINITY
    for (const entry of this.running) {
      if (entry.at <= now) {
        this.running.delete(entry)
        entry.expire()
      } else next = Math.min(next, entry.at)
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next)
  }
}
