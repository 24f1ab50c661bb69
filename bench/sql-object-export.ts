/**
 * bench/sql-object-export: peak memory (VmHWM) of `vba export` from PostgreSQL of a case holding
 * one large incompressible object (192 MiB by default), beside the same command exporting a case
 * whose object is 64 KiB (the reference, same run). The store reads the object in slices, so the
 * peak should not follow its size. Target: the large export's peak exceeds the small one's by less
 * than two thirds of the object (holding it once would add all of it, its hex text twice that).
 * The suite checks that such an export is byte-identical to the directory's; the memory is
 * measured here, not asserted there. Needs the machine's PostgreSQL (VBA_TEST_POSTGRES_URL).
 *
 *   node dist/bench/sql-object-export.js [--mib N]
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { objectRefOf } from '../src/adapters/case-store/objects.js'
import { migrateStore } from '../src/adapters/sql-store/sql-store.js'
import { attempt } from '../src/failures/error.js'
import { openCase } from '../src/fp.js'
import { sampleCase } from '../test/helpers/case.js'
import { postgresStore, type TestStore } from '../test/helpers/stores.js'
import { machine, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, { mib: { type: 'string', default: '192' } })
const size = Number(values.mib) << 20
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'cli', 'main.js')

const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-sql-object-'))
const stores: TestStore[] = []
try {
  const probe = path.join(work, 'peak.mjs')
  writeFileSync(
    probe,
    "import { readFileSync } from 'node:fs'\nprocess.on('exit', () => { const m = /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8')); process.stderr.write(`PEAK ${m ? m[1] : 0}\\n`) })\n"
  )
  /** A case with one more attachment of `bytes`, imported into a fresh store and exported from it: the export's peak (MiB). */
  const exportPeak = async (bytes: Buffer, name: string): Promise<number> => {
    const dir = path.join(work, name)
    await sampleCase(dir)
    const h = await openCase(dir)()
    if (h._tag === 'Left') throw new Error(h.left.message)
    await attempt(
      appendCommand(h.right, {
        commandId: 'big',
        expectedGeneration: 4,
        events: [{ type: 'AttachmentAdded', actor: 'operator', data: { name: 'big.bin', object: objectRefOf(bytes) } }],
        objects: [bytes]
      })
    )
    const store = await postgresStore(`bench_${name}`)
    stores.push(store)
    await migrateStore(store.url)
    const env = { ...process.env, ...store.environment }
    const imported = spawnSync(process.execPath, [MAIN, 'store', 'import', dir, '--store', store.url, '--json'], {
      encoding: 'utf8',
      env
    })
    if (imported.status !== 0) throw new Error(`vba store import failed: ${imported.stderr}`)
    const caseId = (JSON.parse(imported.stdout) as { case_id: string }).case_id
    const r = spawnSync(
      process.execPath,
      ['--import', `file://${probe}`, MAIN, 'export', caseId, path.join(work, `${name}.tar`), '--store', store.url],
      { encoding: 'utf8', env }
    )
    if (r.status !== 0) throw new Error(`vba export failed: ${r.stderr}`)
    return Number(/PEAK (\d+)/.exec(r.stderr)?.[1] ?? 0) / 1024
  }
  const small = await exportPeak(randomBytes(64 << 10), 'small')
  const large = await exportPeak(randomBytes(size), 'large')
  const grew = large - small
  console.log(`sql-object-export: vba export from PostgreSQL, ${machine()}, load ${os.loadavg()[0]?.toFixed(2)}`)
  console.log(`  64 KiB object (reference)  peak ${small.toFixed(0)} MiB`)
  console.log(`  ${size >> 20} MiB object         peak ${large.toFixed(0)} MiB`)
  console.log(`  grew ${grew.toFixed(0)} MiB = ${(grew / (size >> 20)).toFixed(2)} of the object (target: under 0.67)`)
  if (grew >= ((size >> 20) * 2) / 3) process.exitCode = 1
} finally {
  for (const s of stores) await s.drop().catch(() => undefined)
  rmSync(work, { recursive: true, force: true })
}
