/**
 * The public client: one options object, Promises, one error class with a literal code and a
 * classification, typed status; close() releases every pool so the process can exit.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba, FAILURE_CODES, failureKind, type ModelFn } from '../../src/index.js'
import { writeDemoWorld } from '../../src/demo/world.js'
import { forger } from '../../src/testing.js'
import { mariaWorld, mariaProfile } from '../helpers/world.js'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { rejectsWithVbaError } from '../helpers/vba-error.js'
import { postgresStore } from '../helpers/stores.js'

const world = await writeDemoWorld(path.join(tempDir('api-world'), 'world'))

const rejects = rejectsWithVbaError

const client = suite('the client')

client('a profile from a plain object is checked like a file; research and refusals; close()', async () => {
  const vba = await openVba({
    baseDir: world.dir,
    profile: {
      database: {
        client: 'better-sqlite3',
        filename: 'world.sqlite',
        databases: ['world'],
        snapshot_id: 's1',
        allowed_tables: { world: ['creature_template'] }
      }
    }
  })
  const c = await vba.research.query({ kind: 'database.count', table: 'creature_template', filters: [] })
  assert.is(c.kind, 'database.count')
  const refused = await rejects(
    vba.research.query({
      kind: 'database.rows',
      table: 'account_secrets',
      columns: ['secret'],
      filters: [],
      offset: 0,
      limit: 1
    })
  )
  assert.is(refused.code, 'TABLE_NOT_ALLOWED')
  assert.ok(refused.permanent && !refused.retryable && !refused.unavailable)
  assert.equal(refused.toJSON(), {
    code: 'TABLE_NOT_ALLOWED',
    message: refused.message,
    kind: 'permanent',
    data: refused.data
  })
  await vba.close()
  assert.is(
    (await rejects(vba.research.query({ kind: 'database.tables' }))).code,
    'INVALID_ARGUMENT',
    'a closed client refuses'
  )
  const bad = await rejects(openVba({ profile: { database: { client: 'oracle' } } }))
  assert.is(bad.code, 'CONFIG_INVALID')
  const typo = await rejects(openVba({ profile: { loop: { max_invalid_respones: 3 } } }))
  assert.match(typo.message, 'unknown key [loop].max_invalid_respones')
  assert.is((await rejects(openVba({ profile: path.join(tempDir('none'), 'absent.toml') }))).code, 'CONFIG_NOT_FOUND')
})

client('a whole investigation through the client: typed status, events, facts, cancel, top-up, receipts', async () => {
  const vba = await openVba({ profile: world.profile })
  try {
    const dir = path.join(tempDir('api-case'), 'case')
    const created = await vba.cases.create(dir, { title: 'api' })
    assert.match(created.case_id, /^case-/)
    assert.is((await vba.cases.status(dir)).state, 'NOT_STARTED')
    assert.is((await rejects(vba.investigations.start(dir))).code, 'CASE_NOT_PREPARED')
    const prepared = await vba.investigations.prepare(dir, {
      report: 'The wolpertinger vanishes.',
      entities: [{ type: 'creature', id: 23487 }],
      attachments: [{ name: 'log.txt', bytes: new TextEncoder().encode('log\n'), mediaType: 'text/plain' }]
    })
    assert.is(prepared.revision, 1)
    assert.ok(((await vba.cases.facts(dir)) ?? []).some((f) => f.type === 'entity'))
    await vba.investigations.start(dir)
    const answers = [
      '{"interpretation": {"summary": "s"}}',
      JSON.stringify({
        next: {
          kind: 'tool',
          operation: 'project.query',
          arguments: { kind: 'database.count', table: 'smart_scripts', filters: [] }
        }
      })
    ]
    const model: ModelFn = async ({ turn }) => answers[turn - 1] ?? ''
    // interpret, then plan a query, but stop before it is carried out: a plan waits
    await vba.investigations.advance(dir, { model, maxTurns: 2, signal: AbortSignal.abort() })
    const stopped = await vba.cases.status(dir)
    assert.is(stopped.turn, 0, 'an aborted signal stops before the first step')
    const r = await vba.investigations.advance(dir, { model, maxTurns: 2 })
    assert.is(r.state, 'INVESTIGATING')
    const topped = await vba.investigations.topUp(dir, { amount: 3, reason: 'the lead allows more queries' })
    const s = await vba.cases.status(dir)
    assert.is(s.budget?.total, 11)
    assert.is(s.budget?.topped_up, 3)
    assert.equal(s.head, topped.receipt)
    assert.is(s.last_result?.kind, 'capture')
    assert.is(
      (await rejects(vba.investigations.cancelPlan(dir, { reason: 'no plan waits' }))).code,
      'NOTHING_TO_CANCEL'
    )
    const events = await vba.cases.events(dir)
    assert.is(events.length, s.generation)
    assert.ok(events.some((e) => e.type === 'BudgetToppedUp' && e.actor === 'operator'))
    const conflict = await rejects(vba.cases.note(dir, { text: 'late', expectedGeneration: 1 }))
    assert.is(conflict.code, 'GENERATION_CONFLICT')
    assert.ok(conflict.retryable)
    assert.ok((await vba.cases.verify(dir, { expectHead: topped.receipt })).valid)
    // a forged event makes the case corrupt for every reader
    forger(dir).append('forged', [{ type: 'NoteRecorded', actor: 'model', data: { text: 'x', format: 'plain' } }])
    const corrupt = await rejects(vba.cases.status(dir))
    assert.is(corrupt.code, 'CASE_CORRUPT')
    assert.ok(corrupt.corrupt)
    assert.not.ok((await vba.cases.verify(dir)).valid, 'verify reports instead of rejecting')
  } finally {
    await vba.close()
  }
})

client('every failure code has a kind', () => {
  for (const [code, kind] of Object.entries(FAILURE_CODES)) assert.is(failureKind(code), kind)
  assert.is(failureKind('NOT_A_CODE'), 'bug')
  assert.is(failureKind('DATABASE_UNAVAILABLE'), 'unavailable')
  assert.is(failureKind('CASE_LOCKED'), 'retryable')
})

client('close() releases the database pool: a process that closes the client exits by itself', async () => {
  const { shared } = await mariaWorld()
  const profile = mariaProfile(shared)
  const script = path.join(tempDir('api-close'), 'close.mjs')
  const index = path.join(repoRoot(), 'dist', 'src', 'index.js')
  writeFileSync(
    script,
    `import { openVba } from ${JSON.stringify(index)}\nconst vba = await openVba({ profile: ${JSON.stringify(profile)} })\nconst c = await vba.research.query({ kind: 'database.count', table: 'creature_template', filters: [] })\nconsole.log(c.result.count)\nif (process.argv[2] === 'close') await vba.close()\nelse setImmediate(() => { console.log(JSON.stringify(process.getActiveResourcesInfo())); process.exit(0) })\n`
  )
  const closed = spawnSync(process.execPath, [script, 'close'], { encoding: 'utf8', timeout: 20_000 })
  assert.is(closed.status, 0, closed.stderr)
  assert.ok(Number(closed.stdout.trim()) > 0)
  // Without close(), what keeps the process alive is the pool's connection (the check can fail).
  const open = spawnSync(process.execPath, [script, 'leave-open'], { encoding: 'utf8' })
  assert.is(open.status, 0, open.stderr)
  const resources = JSON.parse(open.stdout.trim().split('\n').at(-1) ?? '[]') as string[]
  assert.ok(resources.includes('TCPSocketWrap'), `active: ${resources.join(', ')}`)
})

client.run()

const stored = suite('the client with a SQL store')

stored(
  'case ids instead of directories: create, prepare, claim and advance under the lease, export, import; directory-only calls refused',
  async () => {
    const t = await postgresStore('client')
    const noStore = await openVba()
    assert.is((await rejects(noStore.queue.claim('w'))).code, 'STORE_INVALID')
    await noStore.close()
    assert.is((await rejects(openVba({ store: t.url }))).code, 'STORE_SCHEMA_OUTDATED')
    const vba = await openVba({ profile: world.profile, store: t.url, migrate: true })
    try {
      const created = await vba.cases.create('bug-1', { title: 'stored' })
      assert.equal(created, { case_id: 'bug-1', dir: 'bug-1' })
      assert.is((await rejects(vba.cases.create('bug-1'))).code, 'CASE_EXISTS')
      await vba.investigations.prepare('bug-1', {
        report: 'Quest 11117 cannot be completed.',
        entities: [{ type: 'quest', id: 11117 }]
      })
      await vba.investigations.start('bug-1')
      const lease = await vba.queue.claim('embedded', { leaseMs: 30_000 })
      assert.is(lease?.caseId, 'bug-1')
      if (lease === null) return
      const model: ModelFn = async ({ phase }) =>
        JSON.stringify(
          phase === 'interpretation'
            ? { interpretation: { summary: 's' } }
            : { next: { kind: 'conclusion', summary: 'c', hypotheses: [], evidence: [] } }
        )
      const r = await vba.queue.advance(lease, { model })
      assert.is(r.state, 'CONCLUDED')
      assert.ok(await vba.queue.release(lease))
      assert.is((await vba.queue.list())[0]?.why, 'concluded')
      assert.is((await rejects(vba.cases.gc('bug-1'))).code, 'STORE_INVALID')
      const out = path.join(tempDir('api-store-export'), 'bug-1.tar')
      const ex = await vba.transport.export('bug-1', out)
      assert.is(ex.generation, r.generation)
      const other = await postgresStore('client2')
      const second = await openVba({ store: other.url, migrate: true })
      try {
        assert.equal(await second.transport.importIntoStore(out), { case_id: 'bug-1', generation: r.generation })
        assert.is((await second.cases.verify('bug-1')).valid, true)
        assert.is((await rejects(second.transport.importIntoStore(out))).code, 'CASE_EXISTS')
      } finally {
        await second.close()
        await other.drop()
      }
    } finally {
      await vba.close()
      await t.drop()
    }
  }
)

stored.run()
