import { attempt } from '../src/failures/error.js'
/**
 * bench/export: `vba export` of a case with 10,000 objects against `tar` plus `sha256sum` over the
 * same files, in the same run. Target: within 2x. Also times import (verify + move).
 *
 *   node dist/bench/export.js [--objects N] [--runs R]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { randomBytes } from 'node:crypto'
import { initCase } from '../src/fp.js'
import { openCase } from '../src/fp.js'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { objectRefOf } from '../src/adapters/case-store/objects.js'
import { exportCase } from '../src/fp.js'
import { importCase } from '../src/fp.js'
import type { EventDraft } from '../src/events/chain.js'
import { machine, median, timeShell, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  objects: { type: 'string', default: '10000' },
  runs: { type: 'string', default: '3' }
})
const OBJECTS = Number(values.objects)
const RUNS = Number(values.runs)

const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-export-'))
try {
  const dir = path.join(work, 'case')
  const made = await initCase({ dir, caseId: 'case-export-bench' })()
  if (made._tag === 'Left') throw new Error(made.left.message)
  const h = await openCase(dir)()
  if (h._tag === 'Left') throw new Error(h.left.message)
  let total = 0
  for (let done = 0; done < OBJECTS; done += 250) {
    const objects: Buffer[] = []
    const events: EventDraft[] = []
    for (let i = done; i < Math.min(OBJECTS, done + 250); i++) {
      const bytes = randomBytes(2048 + (i % 13) * 1024)
      total += bytes.length
      objects.push(bytes)
      events.push({
        type: 'AttachmentAdded',
        actor: 'controller',
        data: { name: `capture-${i}`, object: objectRefOf(bytes) }
      })
    }
    const r = await attempt(
      appendCommand(h.right, {
        commandId: `fill-${done}`,
        expectedGeneration: h.right.cursor.seq,
        events,
        objects
      })
    )
    if (r._tag === 'Left') throw new Error(r.left.message)
  }
  timeShell('cat events.jsonl > /dev/null; find objects -type f -print0 | xargs -0 cat > /dev/null', dir)
  const ours: number[] = []
  const reference: number[] = []
  const imports: number[] = []
  for (let r = 0; r < RUNS; r++) {
    const out = path.join(work, `out-${r}.tar`)
    const t0 = process.hrtime.bigint()
    const e = await exportCase(dir, out)()
    if (e._tag === 'Left') throw new Error(e.left.message)
    ours.push(Number(process.hrtime.bigint() - t0) / 1e6)
    const tarMs = timeShell(`tar -cf ${work}/ref-${r}.tar .`, dir).ms
    const shaMs = timeShell('find . -type f -print0 | xargs -0 sha256sum > /dev/null', dir).ms
    reference.push(tarMs + shaMs)
    const t1 = process.hrtime.bigint()
    const i = await importCase(out, path.join(work, `imported-${r}`))()
    if (i._tag === 'Left') throw new Error(i.left.message)
    imports.push(Number(process.hrtime.bigint() - t1) / 1e6)
  }
  const mo = median(ours)
  const mr = median(reference)
  process.stdout.write(`bench/export  ${new Date().toISOString().slice(0, 10)}  ${machine()}\n`)
  process.stdout.write(`case: ${OBJECTS} objects, ${(total / 2 ** 20).toFixed(1)} MiB; median of ${RUNS}\n`)
  process.stdout.write(
    `export (BagIt, sha256 + sha512 manifests, deterministic tar) ${mo.toFixed(0)} ms vs tar + sha256sum ${mr.toFixed(0)} ms: ratio ${(mo / mr).toFixed(2)}x (target <= 2x)\n`
  )
  process.stdout.write(
    `import (extract, verify bag, verify case, canonical archive check, move) ${median(imports).toFixed(0)} ms\n`
  )
} finally {
  rmSync(work, { recursive: true, force: true })
}
