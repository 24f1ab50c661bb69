/**
 * The bounded-structure fuzz test: deep and wide values at every place an event, a capture, a
 * prompt's input and a model answer can hold one, read by every reader (verify, show, report,
 * export, case note, import; directories, bags, both SQL stores; the MCP server). No process exits
 * 70 and none says "Maximum call stack size exceeded": a log line is EVENT_MALFORMED naming the
 * depth, an object out of bounds is not what its event says it is, a query is QUERY_INVALID.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { open as openFile } from 'node:fs/promises'
import { verifyCase } from '../../src/fp.js'
import { writeBag, tarSink } from '../../src/adapters/bagit/export.js'
import type { PayloadFile } from '../../src/adapters/bagit/case-bag.js'
import { forger } from '../helpers/forger.js'
import { sampleCase } from '../helpers/case.js'
import { vba, type CliResult } from '../helpers/cli.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'
import { appendRawLine, DEEP, deepText, sealRawLine, wideText, type Shape } from '../helpers/deep.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'
import { migrateStore, openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { writeWorld } from '../helpers/investigation.js'
import { connectMcp, rejection } from '../helpers/mcp.js'

const EXAMPLE = path.join(repoRoot(), 'case-format', 'examples', 'valid', 'investigation')
const SHAPES: Shape[] = ['array', 'object', 'mixed']

/** Neither a crash nor a stack overflow. */
const noCrash = (r: CliResult, what: string): void => {
  assert.is.not(r.code, 70, `${what}: ${r.stderr}`)
  assert.not.match(r.stderr + r.stdout, /Maximum call stack|INTERNAL_ERROR/, what)
}

/** Every reader of a case directory, through the CLI. */
const readers = (dir: string, tag: string): void => {
  const out = tempDir(`deep-${tag}`)
  const verify = vba(['verify', dir])
  noCrash(verify, 'verify')
  assert.is(verify.code, 1, verify.stdout)
  noCrash(vba(['show', dir]), 'show')
  noCrash(vba(['report', dir, '--out', path.join(out, 'r.html')]), 'report')
  noCrash(vba(['export', dir, path.join(out, 'x.tar')]), 'export')
  noCrash(vba(['case', 'note', dir, 'a note after it']), 'case note')
}

const deep = suite('deep and wide values at every reader')

const EVENT_PLACES: Array<(raw: string) => Parameters<typeof appendRawLine>[1]> = [
  () => ({ type: 'NoteRecorded', version: 2, actor: 'operator', data: { text: DEEP, format: 'plain' } }),
  () => ({ type: 'NoteRecorded', version: 2, actor: 'operator', data: { text: 'x', format: 'plain', more: DEEP } }),
  () => ({ type: 'AttachmentAdded', version: 1, actor: 'operator', data: { name: 'a', object: DEEP } }),
  () => ({ type: 'NoteRecorded', version: 2, actor: DEEP, data: { text: 'x', format: 'plain' } })
]

deep(
  'a deep log line in a directory: EVENT_MALFORMED naming the depth, through the library and every verb',
  async () => {
    const samples = fc.sample(
      fc.tuple(fc.integer({ min: 64, max: 6000 }), fc.constantFrom(...SHAPES), fc.constantFrom(...EVENT_PLACES)),
      { numRuns: 4, seed: 31 }
    )
    for (const [depth, shape, place] of samples) {
      const h = await sampleCase()
      const raw = deepText(depth, shape)
      appendRawLine(h.dir, place(raw), raw)
      const report = right(await verifyCase(h.dir)())
      assert.is(report.valid, false)
      const f = report.findings.find((x) => x.code === 'EVENT_MALFORMED')
      assert.match(f?.message ?? '', /nested deeper than 64 levels/)
      readers(h.dir, 'line')
    }
  }
)

/** The example investigation with the object of one event's reference replaced by `bytes` (correctly hashed). */
const withObject = (
  pick: (e: { type: string; data: Record<string, unknown> }) => string | null,
  bytes: Buffer
): string => {
  const dir = path.join(tempDir('deep-object'), 'case')
  cpSync(EXAMPLE, dir, { recursive: true })
  const f = forger(dir)
  const target = f.envelopes().find((e) => pick(e as never) !== null)
  if (target === undefined) throw new Error('no such event')
  const member = pick(target as never) as string
  const ref = f.object(bytes, 'application/json')
  f.rewrite(target.seq, (old) => ({ ...(old as Record<string, unknown>), [member]: ref }))
  return dir
}

deep(
  'a deep or wide object (a capture, a prompt, a raw answer, facts, a report): findings, never a crash',
  async () => {
    const places: Array<[string, (e: { type: string; data: Record<string, unknown> }) => string | null]> = [
      ['capture', (e) => (e.type === 'CaptureRecorded' ? 'capture' : null)],
      ['prompt', (e) => (e.type === 'ModelRequested' ? 'prompt' : null)],
      ['raw answer', (e) => (e.type === 'ModelResponded' ? 'raw' : null)],
      ['facts', (e) => (e.type === 'RevisionCompleted' ? 'facts' : null)],
      ['report input', (e) => (e.type === 'InputsRecorded' ? 'report' : null)]
    ]
    for (const [i, [name, pick]] of places.entries()) {
      const shape = SHAPES[i % SHAPES.length] as Shape
      const bytes = Buffer.from(i === 4 ? wideText(1_100_000) : deepText(5000 + i, shape))
      const dir = withObject(pick, bytes)
      const report = right(await verifyCase(dir)())
      assert.is(report.valid, false, name)
      readers(dir, name.replace(' ', '-'))
    }
  }
)

/** A canonical bag of a case directory that holds anything (no verification before it is bagged). */
const rawBag = async (dir: string, out: string): Promise<void> => {
  const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
  const head = JSON.parse(readFileSync(path.join(dir, 'HEAD'), 'utf8')) as { seq: number; hash: string }
  const at = /"at":"([^"]+)"/.exec(lines[0] ?? '')?.[1] ?? '2026-01-01T00:00:00.000Z'
  const payload: PayloadFile[] = ['HEAD', 'case.json', 'events.jsonl'].map((p) => {
    const bytes = readFileSync(path.join(dir, p))
    return { path: p, size: bytes.length, bytes }
  })
  const fh = await openFile(out, 'w')
  try {
    const tar = tarSink('case-sample', new Date(Math.floor(Date.parse(at) / 1000) * 1000), async (c) => {
      await fh.write(c)
    })
    await writeBag(
      { caseId: 'case-sample', generation: head.seq, headHash: head.hash, at: new Date(Date.parse(at)), payload },
      tar.sink
    )
  } finally {
    await fh.close()
  }
}

deep('a bag holding a deep line: verify and import refuse it with EVENT_MALFORMED, never a crash', async () => {
  const dir = path.join(tempDir('deep-bag'), 'case')
  const h = await sampleCase(dir)
  // Only the notes: the bag holds no objects.
  const f = forger(h.dir)
  f.cut(1)
  const raw = deepText(5000, 'mixed')
  appendRawLine(h.dir, EVENT_PLACES[0]?.(raw) as never, raw)
  const tar = path.join(tempDir('deep-bag-tar'), 'case.tar')
  await rawBag(h.dir, tar)
  const verify = vba(['verify', tar])
  noCrash(verify, 'verify bag')
  assert.is(verify.code, 1)
  assert.match(verify.stdout, /EVENT_MALFORMED/)
  assert.match(verify.stdout, /nested deeper than 64 levels/)
  const imported = vba(['import', tar, path.join(tempDir('deep-bag-import'), 'case')])
  noCrash(imported, 'import')
  assert.is.not(imported.code, 0)
})

const maria = await mariadbServer()
const stores: TestStore[] = []
for (const kind of ['postgres', 'mariadb'] as const) {
  deep(
    `${kind}: a deep row is EVENT_MALFORMED for verify, open and export, through the library and the CLI`,
    async () => {
      const t = kind === 'postgres' ? await postgresStore('deep') : await maria.store('deep')
      stores.push(t)
      await migrateStore(t.url, { environment: t.environment })
      const store = await openSqlStore(t.url, { environment: t.environment })
      try {
        const h = await sampleCase()
        await store.importDirectory(h.dir)
        const rows = (await store.knex('vba_events').where({ case_id: 'case-sample' }).orderBy('seq')) as Array<{
          seq: number
          line: Buffer
        }>
        const last = rows[rows.length - 1] as { seq: number; line: Buffer }
        const env = JSON.parse(Buffer.from(last.line).toString('utf8')) as { prev: string; at: string }
        const raw = deepText(6000, 'object')
        const sealed = sealRawLine(
          { type: 'NoteRecorded', version: 2, actor: 'operator', data: { text: DEEP, format: 'plain' } },
          last.seq,
          env.prev,
          env.at,
          raw
        )
        await store
          .knex('vba_events')
          .where({ case_id: 'case-sample', seq: last.seq })
          .update({ line: Buffer.from(sealed.line) })
        const v = await store.verify('case-sample')
        assert.not.ok(v.valid)
        assert.ok(
          v.findings.some((x) => x.code === 'EVENT_MALFORMED' && /nested deeper than 64/.test(x.message)),
          JSON.stringify(v.findings)
        )
        const cli = vba(['verify', '--store', t.url, 'case-sample'], { env: { ...t.environment } })
        noCrash(cli, `${kind} verify`)
        assert.is(cli.code, 1, cli.stderr)
        noCrash(vba(['show', '--store', t.url, 'case-sample'], { env: { ...t.environment } }), `${kind} show`)
        noCrash(
          vba(['export', '--store', t.url, 'case-sample', path.join(tempDir('deep-sql-x'), 'x.tar')], {
            env: { ...t.environment }
          }),
          `${kind} export`
        )
      } finally {
        await store.close()
      }
    }
  )
}

deep('the MCP server: deep arguments are QUERY_INVALID naming the depth, and the server stays up', async () => {
  // A prepared case still open (the investigation example is concluded: its server lists only case_status).
  const dir = path.join(tempDir('deep-mcp'), 'case')
  const profile = writeWorld(tempDir('deep-mcp-world'))
  const report = path.join(tempDir('deep-mcp-report'), 'report.md')
  writeFileSync(report, '# Wolpertingers vanish\n\nThe wild wolpertinger vanishes when netted (quest 11117).\n')
  assert.is(vba(['case', 'init', dir, '--title', 'Wolpertingers vanish']).code, 0)
  const prepared = vba(['case', 'prepare', dir, '--config', profile, '--input', report])
  assert.is(prepared.code, 0, prepared.stdout + prepared.stderr)
  const c = await connectMcp(['--config', profile, '--case', dir])
  try {
    const tools = (await c.client.listTools()).tools.filter((x) => x.name !== 'case_status')
    for (const [i, shape] of SHAPES.entries()) {
      const tool = tools[i % tools.length]
      if (tool === undefined) throw new Error('no query tool')
      // An argument of the wrong shape is a JSON-RPC -32602 (nothing recorded), its reason the depth.
      const e = await rejection(
        c.client.callTool({ name: tool.name, arguments: { path: JSON.parse(deepText(3000, shape)) } })
      )
      assert.is(e.code, -32602, tool.name)
      assert.match(e.message, /QUERY_INVALID/)
      assert.match(e.message, /nested deeper than 64 levels/)
    }
    // Still serving.
    assert.ok((await c.client.listTools()).tools.length > 0)
  } finally {
    await c.close()
  }
  assert.not.match(c.stderr(), /Maximum call stack/)
})

deep('an inputs file and a query file out of bounds are refused with their codes', () => {
  const dir = tempDir('deep-files')
  const query = path.join(dir, 'q.json')
  writeFileSync(query, deepText(6000))
  const profile = writeWorld(tempDir('deep-files-world'))
  const r = vba(['research', '--config', profile, '--query', query])
  noCrash(r, 'research')
  assert.match(r.stderr + r.stdout, /QUERY_INVALID/)
  assert.match(r.stderr + r.stdout, /nested deeper than 64 levels/)
})

deep.after(async () => {
  for (const t of stores) await t.drop()
  await maria.stop()
})

deep.run()
