/**
 * The importer and the fleet can require every rule to apply: `vba store import --strict`
 * (`transport.importIntoStore(…, { strict })`, `importDirectory(…, { strict })`) refuses a case
 * whose rules did not all apply (RULE_NOT_APPLIED: a RevisionCompleted of version 1 in a case that
 * predates generations), from a directory and from a bag; `vba work --strict` (`work({ strict })`)
 * claims such a case and refuses it (CASE_CORRUPT naming the rules, nothing appended, the worker
 * stopped, exit 1). Without strict both take it (its notices stay notices). On PostgreSQL.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba } from '../../src/index.js'
import { loadProfile } from '../../src/fp.js'
import { migrateStore, openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { work } from '../../src/investigation/worker.js'
import type { ModelFn } from '../../src/investigation/model-fn.js'
import { sqliteProfile } from '../helpers/world.js'
import { vba } from '../helpers/cli.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'

const OLD = path.join(repoRoot(), 'case-format', 'examples', 'forged', 'RULE_NOT_APPLIED')

/** The old case cut after its start (INTERPRETING: runnable), its HEAD moved back with it. */
const runnableOld = (): string => {
  const dir = path.join(tempDir('strict-old'), 'case')
  cpSync(OLD, dir, { recursive: true })
  const lines = readFileSync(path.join(dir, 'events.jsonl')).toString('utf8').split('\n').slice(0, 7)
  const log = lines.map((l) => `${l}\n`).join('')
  writeFileSync(path.join(dir, 'events.jsonl'), log)
  const last = JSON.parse(lines[6] ?? '{}') as { hash: string; seq: number }
  writeFileSync(
    path.join(dir, 'HEAD'),
    `${JSON.stringify({ bytes: Buffer.byteLength(log), hash: last.hash, seq: last.seq })}\n`
  )
  return dir
}

const stores: TestStore[] = []
const fresh = async (): Promise<TestStore> => {
  const t = await postgresStore('strict')
  stores.push(t)
  await migrateStore(t.url, { environment: t.environment })
  return t
}

const test = suite('a strict importer and a strict fleet')

test('vba store import --strict refuses an old case from a directory and a bag; without --strict it is imported', async () => {
  const t = await fresh()
  const dir = runnableOld()
  const tar = path.join(tempDir('strict-bag'), 'case.tar')
  assert.is(vba(['export', dir, tar]).code, 0)
  for (const source of [dir, tar]) {
    const refused = vba(['store', 'import', source, '--store', t.url, '--strict'], { env: { ...t.environment } })
    assert.is(refused.code, 1, refused.stderr)
    assert.match(refused.stderr, 'CASE_CORRUPT')
    assert.match(refused.stderr, 'RULE_NOT_APPLIED')
  }
  const client = await openVba({ store: t.url })
  try {
    const err = await client.transport.importIntoStore(dir, { strict: true }).then(
      () => null,
      (e: { code?: string }) => e.code ?? 'thrown'
    )
    assert.is(err, 'CASE_CORRUPT')
    assert.equal(await client.queue.list(), [], 'nothing was imported')
  } finally {
    await client.close()
  }
  const plain = vba(['store', 'import', tar, '--store', t.url], { env: { ...t.environment } })
  assert.is(plain.code, 0, plain.stderr)
  assert.is(plain.stdout.trim(), 'case-investigation')
})

test('vba work --strict and work({ strict }) refuse an old case they claim: CASE_CORRUPT naming the rules, nothing appended; without strict the worker advances it', async () => {
  const t = await fresh()
  const store = await openSqlStore(t.url, { environment: t.environment })
  const profileFile = sqliteProfile()
  const research = createProjectResearch(right(await loadProfile(profileFile)()))
  try {
    await store.importDirectory(runnableOld())
    const before = (await store.open('case-investigation')).cursor.seq
    const cli = vba(
      ['work', '--store', t.url, '--config', profileFile, '--model-command', 'false', '--until-idle', '--strict'],
      { env: { ...t.environment } }
    )
    assert.is(cli.code, 1, cli.stdout + cli.stderr)
    assert.match(cli.stderr, /CASE_CORRUPT: .*revision\.derived, research\.binding.*this worker is strict/)
    let called = 0
    const model: ModelFn = async () => {
      called++
      throw new Error('the model is down')
    }
    const strict = await work({ store, model, research, worker: 'strict-worker', strict: true, untilIdle: true })
    assert.is(strict.ended, 'failure')
    assert.is(strict.stopped_by?.code, 'CASE_CORRUPT')
    assert.is(strict.stopped_by?.case_id, 'case-investigation')
    assert.is(called, 0, 'the model was never asked')
    assert.is((await store.open('case-investigation')).cursor.seq, before, 'nothing appended')
    assert.is((await store.list())[0]?.lease, null, 'the case was released')
    const stop = new AbortController()
    const lax = await work({
      store,
      model,
      research,
      worker: 'lax-worker',
      maxTurns: 1,
      signal: stop.signal,
      onEvent: (e) => {
        if (e.kind === 'advanced' || e.kind === 'failed') stop.abort()
      }
    })
    assert.is(lax.claims, 1)
    assert.is(lax.advanced, 1)
    assert.not.ok(
      lax.failures.some((f) => f.code === 'CASE_CORRUPT'),
      JSON.stringify(lax.failures)
    )
    assert.ok((await store.open('case-investigation')).cursor.seq > before, 'the worker advanced it')
  } finally {
    await research.close()
    await store.close()
  }
})

test.after(async () => {
  for (const t of stores) await t.drop()
})

test.run()
