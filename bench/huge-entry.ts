/**
 * bench/huge-entry: peak memory (VmHWM) of `vba verify` and `vba import` of an archive whose case
 * holds one large object (a sparse file of zero bytes, 384 MiB by default). Entries are streamed,
 * so the peak should not follow the entry's size. Target: under 200 MiB (it was the object held
 * twice before). The suite checks that such an archive verifies and imports; the memory is measured
 * here, not asserted there.
 *
 *   node dist/bench/huge-entry.js [--mib N]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import * as os from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { appendCommand } from '../src/adapters/case-store/append.js'
import { attempt } from '../src/failures/error.js'
import { exportCase, openCase } from '../src/fp.js'
import { sampleCase } from '../test/helpers/case.js'
import { machine, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, { mib: { type: 'string', default: '384' } })
const size = Number(values.mib) << 20
const MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vba', 'main.js')
const TARGET_MIB = 200

const work = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-huge-'))
try {
  const dir = path.join(work, 'case')
  await sampleCase(dir)
  const blockHash = createHash('sha256')
  const zeros = Buffer.alloc(1 << 20)
  for (let i = 0; i < size >> 20; i++) blockHash.update(zeros)
  const hex = blockHash.digest('hex')
  const objDir = path.join(dir, 'objects', 'sha256', hex.slice(0, 2))
  mkdirSync(objDir, { recursive: true })
  const objFile = path.join(objDir, hex.slice(2))
  writeFileSync(objFile, '')
  spawnSync('truncate', ['-s', String(size), objFile])
  const h = await openCase(dir)()
  if (h._tag === 'Left') throw new Error(h.left.message)
  await attempt(
    appendCommand(h.right, {
      commandId: 'huge',
      expectedGeneration: 4,
      events: [
        {
          type: 'AttachmentAdded',
          actor: 'operator',
          data: { name: 'core.dump', object: { digest: `sha256:${hex}`, size } }
        }
      ]
    })
  )
  const archive = path.join(work, 'case.tar')
  const exported = await exportCase(dir, archive)()
  if (exported._tag === 'Left') throw new Error(exported.left.message)
  const probe = path.join(work, 'peak.mjs')
  writeFileSync(
    probe,
    "import { readFileSync } from 'node:fs'\nprocess.on('exit', () => { const m = /VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8')); process.stderr.write(`PEAK ${m ? m[1] : 0}\\n`) })\n"
  )
  const peakOf = (args: readonly string[]): number => {
    const r = spawnSync(process.execPath, ['--import', `file://${probe}`, MAIN, ...args], { encoding: 'utf8' })
    if (r.status !== 0) throw new Error(`vba ${args[0]} failed: ${r.stderr}`)
    return Number(/PEAK (\d+)/.exec(r.stderr)?.[1] ?? 0) / 1024
  }
  const verify = peakOf(['verify', archive])
  const imported = peakOf(['import', archive, path.join(work, 'imported')])
  console.log(`huge-entry: one ${size >> 20} MiB entry, ${machine()}`)
  console.log(`  vba verify  peak ${verify.toFixed(0)} MiB`)
  console.log(`  vba import  peak ${imported.toFixed(0)} MiB   (target: under ${TARGET_MIB} MiB each)`)
  if (verify >= TARGET_MIB || imported >= TARGET_MIB) process.exitCode = 1
} finally {
  rmSync(work, { recursive: true, force: true })
}
