/** Merging context windows around hits: overlapping or adjacent windows of a file become one block. */

export interface LineWindow {
  readonly start: number
  readonly end: number
}

/** Window of `context` lines around `line`, clamped to [1, totalLines]. */
export const around = (line: number, context: number, totalLines: number): LineWindow => ({
  start: Math.max(1, line - context),
  end: Math.min(totalLines, line + context)
})

/** Sorted, merged windows: [1,5] and [6,9] (adjacent) or [4,12] (overlapping) become one. */
export const mergeWindows = (windows: readonly LineWindow[]): LineWindow[] => {
  const sorted = [...windows].sort((a, b) => a.start - b.start || a.end - b.end)
  const out: LineWindow[] = []
  for (const w of sorted) {
    const last = out[out.length - 1]
    if (last !== undefined && w.start <= last.end + 1)
      out[out.length - 1] = { start: last.start, end: Math.max(last.end, w.end) }
    else out.push(w)
  }
  return out
}
