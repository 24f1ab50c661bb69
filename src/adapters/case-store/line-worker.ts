/**
 * Worker thread of {@link startLineWorkers}: checks every line of each piece of events.jsonl it is
 * sent on its own (UTF-8, the envelope, canonical form when asked, hash, object references, event
 * data; piece-lines.ts). The piece goes back to the folding thread as its bytes (transferred, not
 * copied) with LINE_INTS ints per line (line-layout.ts); a line that did not pass is marked for the
 * folding thread to check from its bytes. A piece may come with its lines' digests, computed by
 * the folding thread while it had nothing to fold (line-fast.ts digestLines). Once loaded it says so, with the layout it writes
 * (`{ ready: LINE_LAYOUT }`): pieces are sent from then on.
 *
 * A line longer than MAX_LINE_BYTES ends the piece's checks there: the folding thread goes on from
 * that line's start by itself, reading the way it always did.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { checkPiece } from './piece-lines.js'
import { givenDigests } from '../../events/line-digests.js'
import { LINE_LAYOUT } from './line-layout.js'
import { detachOnce } from '../worker-script.js'

const { canonical } = workerData as { canonical: boolean }
const port = parentPort
if (port === null) throw new Error('line-worker must run as a worker thread')

port.on(
  'message',
  (m: { id: number; buffer: ArrayBuffer; length: number; digests: ArrayBuffer | null; lines: number }) => {
    const given = m.digests === null ? null : givenDigests(m.digests, m.lines)
    const { meta, lines, stopAt } = checkPiece(Buffer.from(m.buffer, 0, m.length), canonical, given)
    port.postMessage({ id: m.id, buffer: m.buffer, meta, lines, stopAt }, [m.buffer, meta.buffer as ArrayBuffer])
  }
)
// Every piece goes back transferred: the first transfer would discard the checks' optimized code.
detachOnce()
port.postMessage({ ready: LINE_LAYOUT })
