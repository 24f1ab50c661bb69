/**
 * Captures as compact, deterministic text for the model: source lines numbered under one header
 * per file (path and blob once, the commit in the header), search hits grouped by file, database
 * rows as a table with the exact values, context blocks in the order they were ranked, and every
 * limit, truncation, skip and continuation marker in words. The full capture stays in the case;
 * this is only how the prompt shows it. Pure.
 *
 * A capture's view is a head, its items (rows, lines, hits, blocks, paths, columns: what a prompt
 * guard may leave out, from the end) and a tail computed from how many items are shown, so every
 * continuation marker describes what was shown: a page cut after 20 of its rows says to continue
 * with the offset of row 21.
 */
import type { Capture } from '../events/capture.js'
import { QUERY_KIND_DEFINITIONS } from './query-kinds/catalog.js'
import type { CaptureView } from './query-kinds/define.js'
import type { Wording } from './query-kinds/parts.js'

export type { CaptureItem, CaptureView } from './query-kinds/define.js'

/**
 * The view of a capture (see the module comment): its query kind's, its counts worded exactly
 * unless a recorded prompt's wording (`legacy`, parts.ts) is asked for.
 */
export const captureView = (c: Capture, w: Wording = 'exact'): CaptureView =>
  QUERY_KIND_DEFINITIONS[c.kind].view(c, c.result, w)

/** A capture's view with its first `shown` items (all by default), as lines. */
export const viewLines = (v: CaptureView, shown = v.items.length): string[] => [
  ...v.head,
  ...v.items.slice(0, shown).flatMap((i) => i.lines),
  ...v.tail(shown)
]

/** The capture's result as compact lines (every item shown). */
export const renderCapture = (c: Capture): string[] => viewLines(captureView(c))
