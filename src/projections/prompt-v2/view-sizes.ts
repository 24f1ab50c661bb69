/**
 * What the prompt guard (guard.ts) reads of a capture view, made once per view: the size of its
 * lines with any number of items shown, without rendering them (prefix sums of its items), and
 * its lines as one block of text per number of items shown. Views are made once per capture
 * (working-set.ts) and stay in every later prompt of a case, so verify, which renders every
 * prompt again, sizes and renders each at most once per number shown. Pure.
 */
import { viewLines, type CaptureView } from '../capture-text.js'

/** Characters of `lines` joined with LF, plus one LF per line. */
export const linesSize = (lines: readonly string[]): number => lines.reduce((n, l) => n + l.length + 1, 0)

/** A view's sizes: its head, and its items up to `shown` with the tail they leave (memoised). */
export interface ViewSizes {
  readonly head: number
  readonly upTo: (shown: number) => number
  /** Its lines with `shown` items joined with LF, or null for no lines (memoised). */
  readonly block: (shown: number) => string | null
  /**
   * For every `shown`, the least of `upTo(k)` for k from `shown` to all items: the smallest the
   * view has been when items go one at a time from the end down to `shown` (made once, when first read).
   */
  readonly least: () => readonly number[]
}

/** Views are made once per capture (working-set.ts) and stay in every later prompt: sized once each. */
const sized = new WeakMap<CaptureView, ViewSizes>()
export const viewSizes = (v: CaptureView): ViewSizes => {
  let known = sized.get(v)
  if (known === undefined) {
    const prefix = [0]
    for (const item of v.items) prefix.push((prefix[prefix.length - 1] ?? 0) + linesSize(item.lines))
    const sizes = new Array<number>(prefix.length).fill(-1)
    const blocks = new Map<number, string | null>()
    const upTo = (shown: number): number => {
      let size = sizes[shown] ?? -1
      if (size < 0) {
        size = (prefix[shown] ?? 0) + linesSize(v.tail(shown))
        sizes[shown] = size
      }
      return size
    }
    let least: number[] | undefined
    known = {
      head: linesSize(v.head),
      block: (shown) => {
        let b = blocks.get(shown)
        if (b === undefined) {
          const lines = viewLines(v, shown)
          b = lines.length === 0 ? null : lines.join('\n')
          blocks.set(shown, b)
        }
        return b
      },
      upTo,
      least: () => {
        if (least === undefined) {
          least = new Array<number>(prefix.length)
          let min = Number.POSITIVE_INFINITY
          for (let k = prefix.length - 1; k >= 0; k--) {
            min = Math.min(min, upTo(k))
            least[k] = min
          }
        }
        return least
      }
    }
    sized.set(v, known)
  }
  return known
}
