import { attempt } from '../../src/failures/error.js'
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { promises as fsp, readFileSync, writeFileSync, readdirSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import { openCase } from '../../src/fp.js'
import { appendCommand } from '../../src/adapters/case-store/append.js'
import { verifyCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { objectRefOf } from '../../src/adapters/case-store/objects.js'
import { readObject } from '../../src/fp.js'
import { breakLock, acquireLock, releaseLock } from '../../src/adapters/case-store/lock.js'
import { LOCK_FILE } from '../../src/adapters/case-store/layout.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { left, right, tempDir } from '../helpers/fs.js'
import { sampleCase } from '../helpers/case.js'

const note = (text: string) => ({ type: 'NoteRecorded', actor: 'operator' as const, data: { text, format: 'plain' } })
const codes = (findings: ReadonlyArray<{ code: string }>) => findings.map((f) => f.code)

// ---------------------------------------------------------------------------------------------
const roundTrip = suite('append / open round trip')

roundTrip('init refuses a non-empty directory and bad ids', async () => {
  const dir = tempDir('init')
  writeFileSync(path.join(dir, 'x'), 'x')
  assert.is(left(await initCase({ dir })()).code, 'CASE_EXISTS')
  assert.is(left(await initCase({ dir: path.join(dir, 'new'), caseId: '../evil' })()).code, 'INVALID_ARGUMENT')
  assert.equal(readdirSync(dir), ['x'])
})

roundTrip('what was appended is what is read back, objects included', async () => {
  const h = await sampleCase()
  const reopened = right(await openCase(h.dir)())
  assert.is(reopened.cursor.seq, 4)
  assert.is(reopened.cursor.hash, h.cursor.hash)
  const report = right(await verifyCase(h.dir)())
  assert.ok(report.valid, JSON.stringify(report.findings))
  assert.is(report.events, 4)
  assert.is(report.objects, 1)
  const replay = right(await replayCase(h.dir, defaultProjections())())
  const summary = replay.views['summary']?.view as { events_by_type: Record<string, number>; events_upcast: number }
  assert.equal(summary.events_by_type, { AttachmentAdded: 1, NoteRecorded: 3 })
  // A case of today's format generation holds only current versions (upcasting: the frozen examples).
  assert.is(summary.events_upcast, 0)
  const log = Buffer.from('2026-01-01 12:00:00 ERROR creature 23487 did not despawn\n')
  assert.equal(right(await readObject(h.dir, objectRefOf(log))()), log)
})

roundTrip('the same writes with the same clock give byte-identical packages', async () => {
  const a = await sampleCase(path.join(tempDir('a'), 'c'), fixedEnv())
  const b = await sampleCase(path.join(tempDir('b'), 'c'), fixedEnv())
  for (const f of ['case.json', 'events.jsonl', 'HEAD'])
    assert.equal(readFileSync(path.join(a.dir, f)), readFileSync(path.join(b.dir, f)), f)
})

roundTrip('replay output is byte-identical across runs', async () => {
  const h = await sampleCase()
  const one = right(canonicalJson(right(await replayCase(h.dir, defaultProjections())())))
  const two = right(canonicalJson(right(await replayCase(h.dir, defaultProjections())())))
  assert.is(one, two)
})

roundTrip.run()

// ---------------------------------------------------------------------------------------------
const idem = suite('idempotency and generations')

idem('resubmitting a command id returns the recorded outcome and appends nothing', async () => {
  const h = await sampleCase()
  const before = readFileSync(path.join(h.dir, 'events.jsonl'))
  const again = right(
    await attempt(
      appendCommand(h, {
        commandId: 'cmd-3',
        expectedGeneration: 3,
        events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: '**markdown**', format: 'markdown' } }]
      })
    )
  )
  assert.is(again.status, 'duplicate')
  assert.is(again.events.length, 1)
  assert.is(again.events[0]?.seq, 4)
  assert.equal(readFileSync(path.join(h.dir, 'events.jsonl')), before)
  // also through a fresh handle (the index is rebuilt from the log)
  const fresh = right(await openCase(h.dir)())
  const viaFresh = right(
    await attempt(
      appendCommand(fresh, {
        commandId: 'cmd-1',
        expectedGeneration: 0,
        events: [
          note('report received'),
          {
            type: 'AttachmentAdded',
            actor: 'operator',
            data: {
              name: 'server.log',
              object: objectRefOf(
                Buffer.from('2026-01-01 12:00:00 ERROR creature 23487 did not despawn\n'),
                'text/plain'
              )
            }
          }
        ]
      })
    )
  )
  assert.is(viaFresh.status, 'duplicate')
  assert.equal(
    viaFresh.events.map((e) => e.seq),
    [1, 2]
  )
})

idem('a reused command id with different events is COMMAND_ID_CONFLICT', async () => {
  const h = await sampleCase()
  const f = left(
    await attempt(appendCommand(h, { commandId: 'cmd-3', expectedGeneration: 4, events: [note('something else')] }))
  )
  assert.is(f.code, 'COMMAND_ID_CONFLICT')
})

idem('a stale expected generation is GENERATION_CONFLICT and writes nothing', async () => {
  const h = await sampleCase()
  const files = ['events.jsonl', 'HEAD'].map((f) => readFileSync(path.join(h.dir, f)))
  const obj = Buffer.from('would-be object')
  const f = left(
    await attempt(
      appendCommand(h, {
        commandId: 'late',
        expectedGeneration: 3,
        events: [{ type: 'AttachmentAdded', actor: 'operator', data: { name: 'x', object: objectRefOf(obj) } }],
        objects: [obj]
      })
    )
  )
  assert.equal(f, {
    _tag: 'Failure',
    code: 'GENERATION_CONFLICT',
    message: 'expected generation 3, the case is at 4',
    data: { expected: 3, actual: 4 }
  })
  assert.equal(
    ['events.jsonl', 'HEAD'].map((x) => readFileSync(path.join(h.dir, x))),
    files
  )
  assert.is(right(await verifyCase(h.dir)()).objects, 1, 'no object written')
})

idem('a second handle catches up with events appended through the first', async () => {
  const h = await sampleCase()
  const other = right(await openCase(h.dir)())
  right(await attempt(appendCommand(h, { commandId: 'from-first', expectedGeneration: 4, events: [note('a')] })))
  assert.is(
    left(await attempt(appendCommand(other, { commandId: 'from-second', expectedGeneration: 4, events: [note('b')] })))
      .code,
    'GENERATION_CONFLICT'
  )
  assert.is(other.cursor.seq, 5)
  assert.is(
    right(await attempt(appendCommand(other, { commandId: 'from-second', expectedGeneration: 5, events: [note('b')] })))
      .generation,
    6
  )
})

idem('invalid commands are refused before anything is written', async () => {
  const h = await sampleCase()
  const head = readFileSync(path.join(h.dir, 'HEAD'))
  const cases: Array<[string, Parameters<typeof appendCommand>[1]]> = [
    ['INVALID_ARGUMENT', { commandId: '../x', expectedGeneration: 4, events: [note('x')] }],
    ['INVALID_ARGUMENT', { commandId: 'c', expectedGeneration: -1, events: [note('x')] }],
    ['INVALID_ARGUMENT', { commandId: 'c', expectedGeneration: 4, events: [] }],
    [
      'EVENT_UNKNOWN_TYPE',
      { commandId: 'c', expectedGeneration: 4, events: [{ type: 'Bogus', actor: 'system', data: {} }] }
    ],
    [
      'EVENT_DATA_INVALID',
      {
        commandId: 'c',
        expectedGeneration: 4,
        events: [note('ok'), { type: 'NoteRecorded', actor: 'system', data: { text: 1 } }]
      }
    ],
    [
      'OBJECT_MISSING',
      {
        commandId: 'c',
        expectedGeneration: 4,
        events: [
          {
            type: 'AttachmentAdded',
            actor: 'operator',
            data: { name: 'x', object: { digest: `sha256:${'0'.repeat(64)}`, size: 1 } }
          }
        ]
      }
    ],
    [
      'INVALID_ARGUMENT',
      { commandId: 'c', expectedGeneration: 4, events: [note('x')], objects: [Buffer.from('unreferenced')] }
    ],
    [
      'EVENT_DATA_INVALID',
      {
        commandId: 'c',
        expectedGeneration: 4,
        events: [
          {
            type: 'AttachmentAdded',
            actor: 'operator',
            data: { name: 'x', object: { digest: 'sha256:../../etc/passwd', size: 1 } }
          }
        ]
      }
    ],
    ['EVENT_TOO_LARGE', { commandId: 'c', expectedGeneration: 4, events: [note('x'.repeat(1 << 20))] }]
  ]
  for (const [code, cmd] of cases) assert.is(left(await attempt(appendCommand(h, cmd))).code, code, cmd.commandId)
  assert.equal(readFileSync(path.join(h.dir, 'HEAD')), head)
})

idem.run()

// ---------------------------------------------------------------------------------------------
const locking = suite('the writer lock')

locking('a second writer gets CASE_LOCKED while the first holds the lock', async () => {
  const h = await sampleCase()
  const held = await acquireLock(h.dir)
  try {
    const f = left(
      await attempt(appendCommand(h, { commandId: 'x', expectedGeneration: 4, events: [note('x')] }, { waitMs: 50 }))
    )
    assert.is(f.code, 'CASE_LOCKED')
    assert.is(f.data['owner_pid'], process.pid)
  } finally {
    await releaseLock(held)
  }
  right(await attempt(appendCommand(h, { commandId: 'x', expectedGeneration: 4, events: [note('x')] })))
})

locking('a stale lock of a dead process is reported, not stolen, and unlock removes it', async () => {
  const h = await sampleCase()
  const deadPid = 2 ** 22 + 12345 // above the default pid_max: never a live process
  writeFileSync(
    path.join(h.dir, LOCK_FILE),
    JSON.stringify({
      pid: deadPid,
      host: (await import('node:os')).hostname(),
      token: 't',
      acquired_at: '2026-01-01T00:00:00.000Z'
    })
  )
  const f = left(await attempt(appendCommand(h, { commandId: 'x', expectedGeneration: 4, events: [note('x')] })))
  assert.is(f.code, 'CASE_LOCK_STALE')
  assert.is(f.data['owner_pid'], deadPid)
  assert.ok(statSync(path.join(h.dir, LOCK_FILE)).isFile(), 'lock still there')
  assert.ok(codes(right(await verifyCase(h.dir)()).findings).includes('LOCK_PRESENT'))
  const removed = await breakLock(h.dir)
  assert.is(removed.state, 'stale')
  right(await attempt(appendCommand(h, { commandId: 'x', expectedGeneration: 4, events: [note('x')] })))
})

locking('a live lock is only broken with force', async () => {
  const h = await sampleCase()
  const held = await acquireLock(h.dir)
  let code = ''
  try {
    await breakLock(h.dir)
  } catch (e) {
    code = (e as { failure: { code: string } }).failure.code
  }
  assert.is(code, 'CASE_LOCKED')
  assert.is((await breakLock(h.dir, { force: true })).state, 'held')
  await releaseLock(held)
})

locking.run()

// ---------------------------------------------------------------------------------------------
const crash = suite('crash leftovers')

crash('a torn tail is reported by open and verify, then cut by the next append', async () => {
  const h = await sampleCase()
  const logFile = path.join(h.dir, 'events.jsonl')
  const before = readFileSync(logFile)
  await fsp.appendFile(logFile, '{"actor":"operator","at":"2026-')
  const opened = right(await openCase(h.dir)())
  assert.equal(codes(opened.notices), ['TORN_TAIL'])
  const report = right(await verifyCase(h.dir)())
  assert.ok(report.valid)
  assert.equal(codes(report.findings), ['TORN_TAIL'])
  assert.equal(readFileSync(logFile).subarray(0, before.length), before)
  const out = right(
    await attempt(appendCommand(opened, { commandId: 'after-crash', expectedGeneration: 4, events: [note('x')] }))
  )
  assert.equal(codes(out.repairs), ['TORN_TAIL'])
  const after = right(await verifyCase(h.dir)())
  assert.ok(after.valid)
  assert.equal(after.findings, [])
})

crash('complete lines HEAD never acknowledged are an unacknowledged tail, not events', async () => {
  const h = await sampleCase()
  const logFile = path.join(h.dir, 'events.jsonl')
  const lines = readFileSync(logFile, 'utf8').split('\n')
  await fsp.appendFile(logFile, `${lines[0] ?? ''}\n`)
  const report = right(await verifyCase(h.dir)())
  assert.ok(report.valid)
  assert.equal(codes(report.findings), ['UNACKNOWLEDGED_TAIL'])
  assert.is(report.generation, 4)
})

crash('temporary files and orphan objects are notices', async () => {
  const h = await sampleCase()
  writeFileSync(path.join(h.dir, '.vba-tmp-123-abc'), 'partial')
  const orphan = Buffer.from('orphan')
  const ref = objectRefOf(orphan)
  const hex = ref.digest.slice(7)
  await fsp.mkdir(path.join(h.dir, 'objects/sha256', hex.slice(0, 2)), { recursive: true })
  writeFileSync(path.join(h.dir, 'objects/sha256', hex.slice(0, 2), hex.slice(2)), orphan)
  const report = right(await verifyCase(h.dir)())
  assert.ok(report.valid)
  assert.equal(codes(report.findings).sort(), ['ORPHAN_OBJECT', 'TEMP_FILE_LEFTOVER'])
})

crash.run()

// ---------------------------------------------------------------------------------------------
const tamper = suite('tampering')

const allFiles = (dir: string, rel = ''): string[] =>
  readdirSync(path.join(dir, rel)).flatMap((n) => {
    const r = rel === '' ? n : `${rel}/${n}`
    return statSync(path.join(dir, r)).isDirectory() ? allFiles(dir, r) : [r]
  })

tamper('a byte flipped anywhere in case.json, events.jsonl, HEAD or an object is always found', async () => {
  const h = await sampleCase()
  // The listing's summary is a cache beside the package, not part of it (src/adapters/case-store/summary.ts).
  const files = allFiles(h.dir).filter((f) => f !== '.vba-summary')
  assert.ok(files.some((f) => f.startsWith('objects/')))
  let trials = 0
  for (const rel of files) {
    const file = path.join(h.dir, rel)
    const original = readFileSync(file)
    for (let i = 0; i < original.length; i++) {
      // Every byte is flipped once: the low bit, the case bit (0x20) or the high bit, by position.
      const mask = [0x01, 0x20, 0x80][i % 3] ?? 0x01
      const flipped = Buffer.from(original)
      flipped[i] = (flipped[i] ?? 0) ^ mask
      await fsp.chmod(file, 0o644)
      writeFileSync(file, flipped)
      const report = right(await verifyCase(h.dir)())
      if (report.valid) assert.unreachable(`flip of ${rel} byte ${i} by ${mask} went unnoticed`)
      trials++
      writeFileSync(file, original)
    }
  }
  assert.ok(right(await verifyCase(h.dir)()).valid)
  assert.ok(trials > 1000, `trials: ${trials}`)
})

tamper('with line digests on a worker thread, flipped bytes in events.jsonl are found too', async () => {
  const h = await sampleCase()
  const file = path.join(h.dir, 'events.jsonl')
  const original = readFileSync(file)
  for (let k = 0; k < 150; k++) {
    const i = Math.floor((k / 150) * original.length)
    const flipped = Buffer.from(original)
    flipped[i] = (flipped[i] ?? 0) ^ (k % 2 === 0 ? 0x01 : 0x40)
    writeFileSync(file, flipped)
    if (right(await verifyCase(h.dir, { parallelFromBytes: 0 })()).valid)
      assert.unreachable(`flip at ${i} went unnoticed`)
  }
  writeFileSync(file, original)
  assert.ok(right(await verifyCase(h.dir, { parallelFromBytes: 0 })()).valid)
})

tamper('foreign files, symlinks and misplaced objects are FOREIGN_FILE', async () => {
  const h = await sampleCase()
  writeFileSync(path.join(h.dir, 'notes.txt'), 'x')
  await fsp.symlink('/etc/passwd', path.join(h.dir, 'objects/sha256/link'))
  await fsp.mkdir(path.join(h.dir, 'objects/md5'))
  const report = right(await verifyCase(h.dir)())
  assert.not.ok(report.valid)
  assert.equal(codes(report.findings), ['FOREIGN_FILE', 'FOREIGN_FILE', 'FOREIGN_FILE'])
})

tamper('a corrupt case refuses to open for writing, with its findings', async () => {
  const h = await sampleCase()
  const logFile = path.join(h.dir, 'events.jsonl')
  writeFileSync(logFile, readFileSync(logFile, 'utf8').replace('report received', 'report rejected'))
  const f = left(await openCase(h.dir)())
  assert.is(f.code, 'CASE_CORRUPT')
  assert.equal(codes(f.data['findings'] as Array<{ code: string }>), ['EVENT_HASH_MISMATCH'])
  assert.is(left(await replayCase(h.dir, defaultProjections())()).code, 'CASE_CORRUPT')
})

tamper('missing directories are CASE_NOT_FOUND', async () => {
  assert.is(left(await openCase(path.join(tempDir('none'), 'absent'))()).code, 'CASE_NOT_FOUND')
  assert.is(left(await verifyCase(tempDir('empty'))()).code, 'CASE_NOT_FOUND')
})

tamper.run()
