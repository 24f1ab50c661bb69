import { attempt } from '../../src/failures/error.js'
/**
 * A writer process for the concurrency and crash tests (run as a child with node).
 *   node writer-process.js concurrent DIR PREFIX COUNT   append COUNT one-event commands, retrying conflicts
 *   node writer-process.js crash DIR PREFIX              append forever; print "ack ID GEN" after each append
 *   DIR may also be a store case: STORE_URL#CASE_ID (a password through password_env)
 *   node writer-process.js big DIR PREFIX OBJECT_KB NOTE_KB   one command with an attachment and a note of
 *                                                       those sizes; prints the outcome (run under `ulimit -f`
 *                                                       to make a write fail as on a full disk)
 */
import { writeSync } from 'node:fs'
import { randomBytes, randomInt } from 'node:crypto'
import type { CaseHandle } from '../../src/adapters/case-store/open.js'
import { openCase } from '../../src/fp.js'
import { appendCommand, type RawCommand } from '../../src/adapters/case-store/append.js'
import { objectRefOf } from '../../src/adapters/case-store/objects.js'
import { openSqlStore } from '../../src/adapters/sql-store/sql-store.js'

const [mode, dir, prefix, countText] = process.argv.slice(2)
if (mode === undefined || dir === undefined || prefix === undefined) {
  process.stderr.write('usage: writer-process.js concurrent|crash DIR PREFIX [COUNT]\n')
  process.exit(2)
}

const open = async (): Promise<CaseHandle> => {
  if (dir.includes('://')) {
    const [url, caseId] = dir.split('#') as [string, string]
    try {
      const store = await openSqlStore(url, { poolSize: 2 })
      return await store.open(caseId)
    } catch (e) {
      process.stderr.write(`open failed: ${JSON.stringify((e as { failure?: unknown }).failure ?? String(e))}\n`)
      process.exit(1)
    }
  }
  const h = await openCase(dir)()
  if (h._tag === 'Left') {
    process.stderr.write(`open failed: ${JSON.stringify(h.left)}\n`)
    process.exit(1)
  }
  return h.right
}

/** Appends, retrying generation conflicts and a busy lock; any other failure ends the process. */
const appendWithRetry = async (h: CaseHandle, build: (generation: number) => RawCommand): Promise<number> => {
  for (let tries = 0; tries < 10_000; tries++) {
    const r = await attempt(appendCommand(h, build(h.cursor.seq), { waitMs: 2000 }))
    if (r._tag === 'Right') return r.right.generation
    if (r.left.code !== 'GENERATION_CONFLICT' && r.left.code !== 'CASE_LOCKED') {
      process.stderr.write(`append failed: ${JSON.stringify(r.left)}\n`)
      process.exit(1)
    }
  }
  process.stderr.write('gave up after 10000 attempts\n')
  process.exit(1)
}

// A write past `ulimit -f` then fails with EFBIG instead of killing the process.
process.on('SIGXFSZ', () => undefined)

if (mode === 'hold') {
  // Starts an append by hand inside a transaction (the case row locked, an event row inserted),
  // says so, and waits to be killed before COMMIT.
  const [url, caseId] = dir.split('#') as [string, string]
  const store = await openSqlStore(url, { poolSize: 1 })
  const trx = await store.knex.transaction()
  const row = (await trx('vba_cases').where({ case_id: caseId }).forUpdate().first()) as { generation: number }
  await trx('vba_events').insert({
    case_id: caseId,
    seq: Number(row.generation) + 1,
    command_id: 'never-committed',
    hash: `sha256:${'0'.repeat(64)}`,
    line: Buffer.from('{"never":"committed"}')
  })
  writeSync(1, 'holding\n')
  await new Promise(() => undefined)
}

const h = await open()
if (mode === 'big') {
  const [objectKb, noteKb] = process.argv.slice(5).map(Number)
  const bytes = randomBytes((objectKb ?? 1) * 1024)
  const r = await attempt(
    appendCommand(h, {
      commandId: prefix,
      expectedGeneration: h.cursor.seq,
      events: [
        { type: 'AttachmentAdded', actor: 'operator', data: { name: 'big.bin', object: objectRefOf(bytes) } },
        { type: 'NoteRecorded', actor: 'operator', data: { text: 'n'.repeat((noteKb ?? 1) * 1024), format: 'plain' } }
      ],
      objects: [bytes]
    })
  )
  writeSync(
    1,
    `${JSON.stringify(r._tag === 'Right' ? { ok: r.right.generation } : { code: r.left.code, data: r.left.data })}\n`
  )
} else if (mode === 'concurrent') {
  const count = Number(countText ?? '500')
  for (let i = 0; i < count; i++) {
    await appendWithRetry(h, (generation) => ({
      commandId: `${prefix}-${i}`,
      expectedGeneration: generation,
      events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: `${prefix} ${i}`, format: 'plain' } }]
    }))
  }
  writeSync(1, 'done\n')
  process.exit(0)
} else {
  for (let i = 0; ; i++) {
    const commandId = `${prefix}-${i}`
    const events: RawCommand['events'][number][] = []
    const objects: Buffer[] = []
    const n = randomInt(1, 4)
    for (let k = 0; k < n; k++) {
      if (randomInt(3) === 0) {
        const bytes = randomBytes(randomInt(1, 65536))
        objects.push(bytes)
        events.push({
          type: 'AttachmentAdded',
          actor: 'operator',
          data: { name: `${commandId}-${k}.bin`, object: objectRefOf(bytes) }
        })
      } else {
        events.push({
          type: 'NoteRecorded',
          actor: 'controller',
          data: { text: `${commandId} event ${k} ${'x'.repeat(randomInt(2000))}`, format: 'plain' }
        })
      }
    }
    const generation = await appendWithRetry(h, (g) => ({ commandId, expectedGeneration: g, events, objects }))
    writeSync(1, `ack ${commandId} ${generation}\n`)
  }
}
