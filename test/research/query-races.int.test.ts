/**
 * One writer's truth per answer: concurrent writers of one case asking questions (library writers
 * in one process on a directory, PostgreSQL and a private MariaDB; two `vba mcp` server processes
 * and a `vba case query` on one case directory). The same question asked at once is reserved and
 * recorded once, and only the caller whose appends recorded it is told it is its own; the others
 * are told the evidence id they got as another writer's answer. Distinct questions racing for the
 * last budget end as BUDGET_EXHAUSTED (the real cause), never GENERATION_CONFLICT, and every
 * budget_left is the budget of the state right after that call's own append.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawn } from 'node:child_process'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase, loadProfile, prepareRevision, queryInCase, startInvestigation, verifyAt } from '../../src/fp.js'
import type { CaseAt } from '../../src/adapters/case-store/store.js'
import { openSqlStore, migrateStore, type SqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { settingsOf } from '../../src/investigation/settings.js'
import type { CaseQueryResult } from '../../src/commands/case-query.js'
import type { Failure } from '../../src/failures/failure.js'
import { sqliteProfile } from '../helpers/world.js'
import { buildTestRepo } from '../helpers/git-repo.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'
import { connectMcp, processEnv, textOf } from '../helpers/mcp.js'

const repo = buildTestRepo()
const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
const profileWith = (budget: number): string =>
  sqliteProfile(
    `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n\n[budget]\ntotal = ${budget}\n\n${adapter}`
  )
const profileFile = profileWith(3)
const roomy = profileWith(40)
const profile = right(await loadProfile(profileFile)())
const research = createProjectResearch(profile, { openSource: openSourceResearch })
const maria = await mariadbServer()
const made: TestStore[] = []
const opened: SqlStore[] = []

// One prepared case (not started), copied or imported for each test.
const template = path.join(tempDir('races-template'), 'case')
right(await initCase({ dir: template, caseId: 'case-race' })())
right(
  await prepareRevision(template, research, right(enrichmentConfig(profile)), {
    report: 'The wild wolpertinger vanishes when netted; quest 11117 cannot be completed.',
    entities: [{ type: 'quest', id: 11117 }]
  })()
)

type Where = 'directory' | 'postgres' | 'mariadb'
type Line = { seq: number; type: string; command_id: string; data: Record<string, unknown> }

const caseIn = async (where: Where, started: boolean): Promise<{ at: CaseAt; lines: () => Promise<Line[]> }> => {
  let at: CaseAt
  let lines: () => Promise<Line[]>
  if (where === 'directory') {
    const dir = path.join(tempDir('races'), 'case')
    cpSync(template, dir, { recursive: true })
    at = dir
    lines = async () =>
      readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line)
  } else {
    const t = where === 'postgres' ? await postgresStore('qraces') : await maria.store('qraces')
    made.push(t)
    await migrateStore(t.url, { environment: t.environment })
    const store = await openSqlStore(t.url, { environment: t.environment })
    opened.push(store)
    await store.importDirectory(template)
    at = { store, caseId: 'case-race' }
    lines = async () =>
      ((await store.knex('vba_events').where({ case_id: 'case-race' }).orderBy('seq')) as Array<{ line: Buffer }>).map(
        (r) => JSON.parse(Buffer.from(r.line).toString('utf8')) as Line
      )
  }
  if (started) right(await startInvestigation(at, { settings: right(settingsOf(profile)) })())
  return { at, lines }
}

const agent = (i: number) => ({ protocol: 'mcp' as const, name: `agent-${i}`, version: '1' })

/** The budget left in the state right after `seq`: total minus what reservations took, plus what was released. */
const budgetAt = (lines: readonly Line[], seq: number): number => {
  let left = 0
  for (const e of lines.filter((x) => x.seq <= seq)) {
    if (e.type === 'InvestigationStarted') left += (e.data['settings'] as { budget_total: number }).budget_total
    if (e.type === 'BudgetToppedUp' || e.type === 'BudgetReleased') left += e.data['amount'] as number
    if (e.type === 'BudgetReserved') left -= e.data['amount'] as number
  }
  return left
}

for (const where of ['directory', 'postgres', 'mariadb'] as const) {
  const test = suite(`concurrent questions on a ${where} case`)

  test('the same question from six writers at once: one reservation, one capture, one caller told it is its own, the others told it is another writer’s answer', async () => {
    for (let trial = 0; trial < 3; trial++) {
      const { at, lines } = await caseIn(where, false)
      const q = { kind: 'source.files', text: ['wolpertinger', 'npc', 'World'][trial] }
      const results = await Promise.all(
        [0, 1, 2, 3, 4, 5].map((i) => queryInCase(at, research, q, 'mcp-same', { requester: agent(i) })())
      )
      const ok = results.map((r) => {
        assert.ok(E.isRight(r), JSON.stringify(E.isLeft(r) ? r.left : null))
        return (r as E.Right<CaseQueryResult>).right
      })
      const log = await lines()
      const reserved = log.filter((e) => e.type === 'BudgetReserved' && e.command_id === 'mcp-same.reserve')
      const captured = log.filter((e) => e.type === 'CaptureRecorded' && e.command_id.startsWith('mcp-same.'))
      assert.is(reserved.length, 1, 'one reservation')
      assert.is(captured.length, 1, 'one capture')
      const evidence = captured[0]?.data['evidence_id']
      for (const r of ok) {
        assert.is(r.evidenceId, evidence)
        assert.is(r.repeat, false)
        assert.equal(r.reservation, { seq: reserved[0]?.seq, requester: reserved[0]?.data['requester'] })
      }
      const recorders = ok.filter((r) => r.origin === 'own' || r.origin === 'resumed')
      assert.is(recorders.length, 1, `exactly one caller recorded it: ${ok.map((r) => r.origin).join(' ')}`)
      assert.is(recorders[0]?.answeredFromCase, false)
      assert.is(
        log.find((e) => e.seq === recorders[0]?.receipt.seq)?.command_id,
        captured[0]?.command_id,
        'its receipt is the command that recorded the capture'
      )
      for (const [i, r] of ok.entries()) {
        if (r.origin === 'own') assert.equal(reserved[0]?.data['requester'], agent(i), 'its own reservation')
        if (r.origin === 'resumed') assert.not.equal(reserved[0]?.data['requester'], agent(i))
        if (r.origin === 'concurrent' || r.origin === 'before') assert.ok(r.answeredFromCase)
      }
      assert.ok(right(await verifyAt(at)()).valid)
    }
  })

  test('distinct questions racing for a budget of 3: three recorded, the rest BUDGET_EXHAUSTED (not GENERATION_CONFLICT); each budget_left is the state right after its own append', async () => {
    const { at, lines } = await caseIn(where, true)
    const texts = ['wolpertinger', 'npc', 'World', 'server', 'scripts', 'cpp', 'Spell']
    const results = await Promise.all(
      texts.map((text, i) =>
        queryInCase(at, research, { kind: 'source.files', text }, `q-${i}`, { requester: agent(i) })()
      )
    )
    const refused = results.filter(E.isLeft).map((r) => (r as E.Left<Failure>).left)
    const recorded = results.filter(E.isRight).map((r) => (r as E.Right<CaseQueryResult>).right)
    assert.equal(
      refused.map((f) => f.code),
      ['BUDGET_EXHAUSTED', 'BUDGET_EXHAUSTED', 'BUDGET_EXHAUSTED', 'BUDGET_EXHAUSTED'],
      JSON.stringify(refused.map((f) => f.message))
    )
    assert.is(recorded.length, 3)
    const log = await lines()
    for (const r of recorded) {
      assert.is(r.origin, 'own')
      assert.is(r.budgetLeft, budgetAt(log, r.receipt.seq), `budget_left at seq ${r.receipt.seq}`)
    }
    assert.equal(new Set(recorded.map((r) => r.evidenceId)).size, 3, 'three pieces of evidence')
    assert.ok(right(await verifyAt(at)()).valid)
  })

  test.run()
}

/** `vba case query` as its own process (resolves when it exits). */
const caseQuery = (dir: string, query: unknown): Promise<{ code: number | null; out: string }> => {
  const file = path.join(tempDir('race-query'), 'q.json')
  writeFileSync(file, JSON.stringify(query))
  const child = spawn(
    process.execPath,
    [path.join(repoRoot(), 'dist', 'src', 'cli', 'main.js'), 'case', 'query', dir, '--config', roomy, '--query', file],
    { env: processEnv() }
  )
  let out = ''
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString('utf8')
  })
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString('utf8')
  })
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })))
}

const servers = suite('two vba mcp servers and a CLI on one case directory')

servers(
  'two agents on two servers ask the same question at once: one is told new evidence, the other that another writer answered it; the CLI records its own repeat',
  async () => {
    const { at } = await caseIn('directory', false)
    const dir = at as string
    const args = ['--config', roomy, '--case', dir]
    const a = await connectMcp(args, { name: 'agent-a', version: '1' })
    const b = await connectMcp(args, { name: 'agent-b', version: '1' })
    try {
      for (const text of ['wolpertinger', 'npc', 'World', 'server']) {
        const call = { name: 'source_files', arguments: { text } }
        const [ra, rb, cli] = await Promise.all([
          a.client.callTool(call),
          b.client.callTool(call),
          caseQuery(dir, { kind: 'source.files', text })
        ])
        assert.is(cli.code, 0, cli.out)
        const heads = [ra, rb].map((r) => {
          assert.not.ok(r.isError, textOf(r))
          return textOf(r).split('\n')[0] ?? ''
        })
        const own = heads.filter((h) =>
          / new evidence, recorded in the case \(|the same answer as earlier evidence E\d+ \(recorded as its repeat, not as new evidence; budget/.test(
            h
          )
        )
        const others = heads.filter((h) => h.includes(': answered from the case'))
        assert.ok(own.length <= 1, `at most one agent is told the answer is its own:\n${heads.join('\n')}`)
        assert.is(
          own.length + others.length + heads.filter((h) => h.includes('resumed by this call')).length,
          2,
          heads.join('\n')
        )
        const ids = new Set([ra, rb].map((r) => (r.structuredContent as { evidence_id: string }).evidence_id))
        assert.is(ids.size, 1, 'both got the same evidence id')
        assert.match(cli.out, `as evidence ${[...ids][0]}`)
      }
      const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n').filter(Boolean)
      const mcp = lines.map((l) => JSON.parse(l) as Line).filter((e) => e.command_id.startsWith('mcp-'))
      assert.is(mcp.filter((e) => e.type === 'BudgetReserved').length, 4, 'one reservation per question')
      assert.is(mcp.filter((e) => e.type === 'CaptureRecorded').length, 4, 'one capture per question')
    } finally {
      await a.close()
      await b.close()
    }
    assert.ok(right(await verifyAt(at)()).valid)
  }
)

servers.after(async () => {
  for (const s of opened) await s.close()
  for (const t of made) await t.drop()
  await research.close()
  await maria.stop()
})

servers.run()
