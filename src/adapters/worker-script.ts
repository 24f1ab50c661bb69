/**
 * Where a worker thread's script is. The build bundles each worker into one CommonJS file beside
 * the CLI (dist/vba, scripts/bundle.mjs): Node starts it without resolving, reading and linking a
 * graph of ES modules, ~35 ms to its first message against ~120 ms for tsc's module of it (which
 * loads ~30 modules, the event catalog with io-ts among them). tsc's output (the library) runs the
 * bundle where the build made one, else its own module; the CLI bundle runs its own.
 *
 * A bundle is built from the same tsc output in the same build (npm run build, npm test); a worker
 * that could still be stale says what it was built with in its first message, and its caller
 * refuses one that differs (line-checks.ts).
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/**
 * The script of worker `name` (a file name such as `line-worker.js`) for the module at `callerUrl`
 * (its import.meta.url), which is `callerPath` below `src/` in tsc's output: the bundle in
 * `../vba/` of that output where it exists, else the module beside the caller.
 */
export const workerScript = (name: string, callerUrl: string, callerPath: string): URL => {
  const own = new URL(`./${name}`, callerUrl)
  const tail = `/src/${callerPath}`
  if (!callerUrl.endsWith(tail)) return own
  const bundled = new URL(`vba/${name}`, callerUrl.slice(0, callerUrl.length - tail.length + 1))
  return existsSync(fileURLToPath(bundled)) ? bundled : own
}

/**
 * Detaches one empty ArrayBuffer, before a thread's hot code runs, in a thread that will transfer
 * buffers (a piece to a line worker and back, a batch to the index writer). The first transfer
 * detaches its buffer, and V8 then discards every optimized function of the isolate that assumed
 * no ArrayBuffer was ever detached (its ArrayBufferDetaching protector): those hot functions were
 * compiled twice.
 */
export const detachOnce = (): void => {
  const empty = new ArrayBuffer(0)
  structuredClone(empty, { transfer: [empty] })
}
