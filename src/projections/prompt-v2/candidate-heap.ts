/**
 * The trim heap of the prompt guard (guard.ts): the payloads still to trim, the next on top, in
 * the guard's order (the lower rank, the larger, the older among equals, then the first listed). Pure.
 */
/** Entries of the trim heap: a payload's index, its rank (0 first), its current size and age. */
export interface Candidate {
  readonly i: number
  readonly rank: number
  readonly size: number
  readonly age: number
}

/** Whether `a` is trimmed before `b`: the lower rank, the larger, the older among equals, then the first listed. */
const before = (a: Candidate, b: Candidate): boolean => precedes(a.rank, a.size, a.age, a.i, b)

/** {@link before} for a candidate given by its parts. */
export const precedes = (rank: number, size: number, age: number, i: number, b: Candidate): boolean =>
  rank < b.rank ||
  (rank === b.rank && (size > b.size || (size === b.size && (age < b.age || (age === b.age && i < b.i)))))

/** A binary heap of candidates, the next to trim on top. */
export const candidateHeap = () => {
  const h: Candidate[] = []
  const swap = (a: number, b: number): void => {
    const x = h[a] as Candidate
    h[a] = h[b] as Candidate
    h[b] = x
  }
  const push = (c: Candidate): void => {
    h.push(c)
    for (let k = h.length - 1; k > 0; ) {
      const up = (k - 1) >> 1
      if (!before(h[k] as Candidate, h[up] as Candidate)) break
      swap(k, up)
      k = up
    }
  }
  const pop = (): Candidate | undefined => {
    const top = h[0]
    const last = h.pop()
    if (h.length === 0 || last === undefined) return top
    h[0] = last
    for (let k = 0; ; ) {
      const l = 2 * k + 1
      const r = l + 1
      let m = k
      if (l < h.length && before(h[l] as Candidate, h[m] as Candidate)) m = l
      if (r < h.length && before(h[r] as Candidate, h[m] as Candidate)) m = r
      if (m === k) break
      swap(k, m)
      k = m
    }
    return top
  }
  return { push, pop, peek: (): Candidate | undefined => h[0] }
}
