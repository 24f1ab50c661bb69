/**
 * Real processes against one case: two concurrent writers, and writers killed with SIGKILL at
 * random moments. Trials: VBA_CRASH_TRIALS (default 100).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { initCase } from '../../src/fp.js'
import { openCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { breakLock, inspectLock } from '../../src/adapters/case-store/lock.js'
import { right, tempDir } from '../helpers/fs.js'
import { seededRandom } from '../helpers/seed.js'

const WRITER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'writer-process.js')

const runWriter = (args: string[]): Promise<{ code: number | null; out: string; err: string }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [WRITER, ...args])
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => {
      out += d
    })
    child.stderr.on('data', (d) => {
      err += d
    })
    child.on('close', (code) => resolve({ code, out, err }))
  })

const processes = suite('writer processes')

processes('two concurrent writers, 500 commands each, retrying conflicts: nothing lost or duplicated', async () => {
  const dir = path.join(tempDir('concurrent'), 'case')
  right(await initCase({ dir })())
  const [a, b] = await Promise.all([
    runWriter(['concurrent', dir, 'a', '500']),
    runWriter(['concurrent', dir, 'b', '500'])
  ])
  assert.is(a.code, 0, a.err)
  assert.is(b.code, 0, b.err)
  const report = right(await verifyCase(dir)())
  assert.ok(report.valid, JSON.stringify(report.findings.slice(0, 5)))
  assert.is(report.generation, 1000)
  const h = right(await openCase(dir)())
  for (const p of ['a', 'b']) {
    for (let i = 0; i < 500; i++) {
      const span = h.cursor.commands.get(`${p}-${i}`)
      assert.ok(span !== undefined && span.firstSeq === span.lastSeq, `${p}-${i} recorded exactly once`)
    }
  }
  assert.is(h.cursor.commands.size, 1000)
})

processes('SIGKILL at random moments: every case opens and every acknowledged command survives', async () => {
  const trials = Number(process.env['VBA_CRASH_TRIALS'] ?? '100')
  const dir = path.join(tempDir('crash'), 'case')
  right(await initCase({ dir })())
  const acked = new Map<string, number>()
  let notices = 0
  let staleLocks = 0
  const random = seededRandom()
  // Kill moments follow what the writer did, not a time: after 0 to 2 acknowledged commands (0:
  // anywhere in its start-up), then a random few milliseconds into the next append. So every trial
  // that waited for an ack has one, on a slow machine and a fast one.
  let owed = 0
  for (let trial = 0; trial < trials; trial++) {
    const child = spawn(process.execPath, [WRITER, 'crash', dir, `t${trial}`])
    let out = ''
    const acks = Math.floor(random() * 3)
    owed += acks
    const closed = new Promise((r) => child.on('close', r))
    await new Promise<void>((resolve) => {
      if (acks === 0) resolve()
      child.stdout.on('data', (d) => {
        out += d
        if ((out.match(/^ack /gm) ?? []).length >= acks) resolve()
      })
      void closed.then(() => resolve())
    })
    await new Promise((r) => setTimeout(r, random() * (acks === 0 ? 300 : 15)))
    child.kill('SIGKILL')
    await closed
    for (const line of out.split('\n').slice(0, -1)) {
      const m = /^ack (\S+) (\d+)$/.exec(line)
      if (m?.[1] !== undefined) acked.set(m[1], Number(m[2]))
    }
    const lock = await inspectLock(dir)
    if (lock.state === 'stale') {
      staleLocks++
      await breakLock(dir)
    }
    assert.is.not(lock.state, 'held', 'a killed writer cannot hold a live lock')
    const opened = await openCase(dir)()
    if (opened._tag === 'Left') assert.unreachable(`trial ${trial}: case does not open: ${JSON.stringify(opened.left)}`)
    else {
      notices += opened.right.notices.length
      for (const [id, generation] of acked) {
        const span = opened.right.cursor.commands.get(id)
        if (span === undefined || span.lastSeq !== generation)
          assert.unreachable(`trial ${trial}: acknowledged ${id} (generation ${generation}) is lost`)
      }
    }
    const report = right(await verifyCase(dir)())
    if (!report.valid)
      assert.unreachable(`trial ${trial}: ${JSON.stringify(report.findings.filter((f) => f.severity === 'error'))}`)
  }
  assert.ok(acked.size >= owed, `acknowledged ${acked.size} commands, at least ${owed} were waited for`)
  process.stdout.write(
    `      crash trials: ${trials}, acknowledged commands: ${acked.size}, stale locks broken: ${staleLocks}, crash leftovers noticed: ${notices}\n`
  )
})

processes.run()
