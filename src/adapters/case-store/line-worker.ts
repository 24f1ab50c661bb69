/**
 * Worker thread of {@link startLineWorkers}: checks every line of each piece of events.jsonl it is
 * sent on its own (UTF-8, JSON, bounds, envelope, canonical form when asked, hash, object
 * references, event data), exactly as checkLine does without the chain. The piece goes back to
 * the folding thread as its bytes (transferred, not copied) with eleven ints per line and the
 * envelope strings of the lines that passed (line-layout.ts); a line that did not pass is marked
 * for the folding thread to check from its bytes.
 *
 * A line longer than MAX_LINE_BYTES ends the piece's checks there: the folding thread goes on from
 * that line's start by itself, reading the way it always did.
 */
import { parentPort, workerData } from 'node:worker_threads'
import type { RecordedEvent } from '../../events/chain.js'
import { eachPieceLine } from './piece-lines.js'
import { describeLine, KIND_BYTES, LINE_INTS, pieceStrings } from './line-layout.js'

const { canonical } = workerData as { canonical: boolean }
const port = parentPort
if (port === null) throw new Error('line-worker must run as a worker thread')

port.on('message', (m: { id: number; buffer: ArrayBuffer; length: number }) => {
  const piece = Buffer.from(m.buffer, 0, m.length)
  let meta = new Int32Array(0)
  const strings = pieceStrings(1024)
  let before: RecordedEvent | null = null
  const { lines, stopAt } = eachPieceLine(
    piece,
    { canonical, fresh: false },
    (count) => {
      meta = new Int32Array(count * LINE_INTS)
      strings.buf = pieceStrings(count * 256).buf
    },
    (i, s, e, _text, c) => {
      const at = i * LINE_INTS
      meta[at] = s
      meta[at + 1] = e
      meta[at + 2] = KIND_BYTES
      const described = c !== null && describeLine(c.event, c.refs.length > 0, before, meta, at, strings)
      before = described ? c.event : null
    }
  )
  port.postMessage({ id: m.id, buffer: m.buffer, meta, lines, stopAt, strings: strings.buf.buffer }, [
    m.buffer,
    meta.buffer as ArrayBuffer,
    strings.buf.buffer as ArrayBuffer
  ])
})
