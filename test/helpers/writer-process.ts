/**
 * A writer process for the concurrency and crash tests (run as a child with node).
 *   node writer-process.js concurrent DIR PREFIX COUNT   append COUNT one-event commands, retrying conflicts
 *   node writer-process.js crash DIR PREFIX              append forever; print "ack ID GEN" after each append
 */
import { writeSync } from 'node:fs'
import { randomBytes, randomInt } from 'node:crypto'
import { openCase, type CaseHandle } from '../../src/adapters/case-store/open.js'
import { appendCommand, type Command } from '../../src/adapters/case-store/append.js'
import { objectRefOf } from '../../src/adapters/case-store/objects.js'

const [mode, dir, prefix, countText] = process.argv.slice(2)
if (mode === undefined || dir === undefined || prefix === undefined) {
  process.stderr.write('usage: writer-process.js concurrent|crash DIR PREFIX [COUNT]\n')
  process.exit(2)
}

const open = async (): Promise<CaseHandle> => {
  const h = await openCase(dir)()
  if (h._tag === 'Left') {
    process.stderr.write(`open failed: ${JSON.stringify(h.left)}\n`)
    process.exit(1)
  }
  return h.right
}

/** Appends, retrying generation conflicts and a busy lock; any other failure ends the process. */
const appendWithRetry = async (h: CaseHandle, build: (generation: number) => Command): Promise<number> => {
  for (let attempt = 0; attempt < 10_000; attempt++) {
    const r = await appendCommand(h, build(h.cursor.seq), { waitMs: 2000 })()
    if (r._tag === 'Right') return r.right.generation
    if (r.left.code !== 'GENERATION_CONFLICT' && r.left.code !== 'CASE_LOCKED') {
      process.stderr.write(`append failed: ${JSON.stringify(r.left)}\n`)
      process.exit(1)
    }
  }
  process.stderr.write('gave up after 10000 attempts\n')
  process.exit(1)
}

const h = await open()
if (mode === 'concurrent') {
  const count = Number(countText ?? '500')
  for (let i = 0; i < count; i++) {
    await appendWithRetry(h, (generation) => ({
      commandId: `${prefix}-${i}`,
      expectedGeneration: generation,
      events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: `${prefix} ${i}`, format: 'plain' } }]
    }))
  }
  writeSync(1, 'done\n')
} else {
  for (let i = 0; ; i++) {
    const commandId = `${prefix}-${i}`
    const events: Command['events'][number][] = []
    const objects: Buffer[] = []
    const n = randomInt(1, 4)
    for (let k = 0; k < n; k++) {
      if (randomInt(3) === 0) {
        const bytes = randomBytes(randomInt(1, 65536))
        objects.push(bytes)
        events.push({ type: 'AttachmentAdded', actor: 'operator', data: { name: `${commandId}-${k}.bin`, object: objectRefOf(bytes) } })
      } else {
        events.push({ type: 'NoteRecorded', actor: 'controller', data: { text: `${commandId} event ${k} ${'x'.repeat(randomInt(2000))}`, format: 'plain' } })
      }
    }
    const generation = await appendWithRetry(h, (g) => ({ commandId, expectedGeneration: g, events, objects }))
    writeSync(1, `ack ${commandId} ${generation}\n`)
  }
}
