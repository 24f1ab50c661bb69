/** project.query inside a case: reservation, capture as evidence, repeats, failures, portability. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase } from '../../src/fp.js'
import { verifyCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { readObject } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { queryInCase } from '../../src/fp.js'
import { Capture } from '../../src/events/capture.js'
import { sqliteProfile } from '../helpers/world.js'
import { buildTestRepo } from '../helpers/git-repo.js'
import { right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import * as E from 'fp-ts/lib/Either.js'

const repo = buildTestRepo()
const profile = sqliteProfile(
  `\n[source]\nrepository = ${JSON.stringify(repo.dir)}\nurl = "https://example.org/core.git"\ncommit = "${repo.commit}"\n`
)
const research = createProjectResearch(right(await loadProfile(profile)()), { openSource: openSourceResearch })
const newCase = async (): Promise<string> => {
  const dir = path.join(tempDir('case'), 'case')
  right(await initCase({ dir })())
  return dir
}
type ResearchView = {
  budget: { reserved: number; consumed: number; released: number; held: number }
  evidence: Array<{ id: string; repeats: number }>
  reservations_open: unknown[]
  unavailable_failures: number
}
const view = async (dir: string): Promise<ResearchView> =>
  right(await replayCase(dir, defaultProjections())()).views['research']?.view as ResearchView

const inCase = suite('project.query inside a case')

inCase('records captures as evidence; an identical result is a repeat, not new evidence', async () => {
  const dir = await newCase()
  const q1 = {
    kind: 'database.rows',
    table: 'creature_queststarter',
    columns: ['id', 'quest'],
    filters: [{ column: 'quest', operator: 'eq', value: 11117 }],
    offset: 0,
    limit: 5
  }
  const a = right(await queryInCase(dir, research, q1, 'q1')())
  assert.is(a.evidenceId, 'E1')
  assert.is(a.repeat, false)
  const b = right(await queryInCase(dir, research, q1, 'q2')())
  assert.is(b.evidenceId, 'E1')
  assert.is(b.repeat, true)
  const c = right(
    await queryInCase(
      dir,
      research,
      { kind: 'source.read', path: 'src/server/scripts/World/npc_wolpertinger.cpp', start_line: 1, end_line: 6 },
      'q3'
    )()
  )
  assert.is(c.evidenceId, 'E2')
  const v = await view(dir)
  assert.equal(v.budget, { reserved: 3, consumed: 3, released: 0, held: 0 })
  assert.equal(
    v.evidence.map((e) => [e.id, e.repeats]),
    [
      ['E1', 1],
      ['E2', 0]
    ]
  )
  const report = right(await verifyCase(dir)())
  assert.ok(report.valid)
  assert.is(report.objects, 2, 'the repeated capture is stored once')
  // three commands of reserve + (capture, consume): nine events
  assert.is(right(await replayCase(dir, defaultProjections())()).generation, 9)
})

inCase(
  'a retried command id records nothing new and returns the recorded outcome; another query under it is a conflict',
  async () => {
    const dir = await newCase()
    const q = { kind: 'database.count', table: 'creature_template', filters: [] }
    const first = right(await queryInCase(dir, research, q, 'same')())
    const before = readFileSync(path.join(dir, 'events.jsonl'))
    const again = right(await queryInCase(dir, research, q, 'same')())
    assert.is(again.outcome, 'recorded')
    assert.is(again.evidenceId, first.evidenceId)
    assert.equal(again.capture, first.capture)
    assert.equal(readFileSync(path.join(dir, 'events.jsonl')), before, 'nothing appended')
    assert.is((await view(dir)).budget.reserved, 1)
    const other = await queryInCase(dir, research, { ...q, table: 'quest_template' }, 'same')()
    assert.is(E.isLeft(other) ? other.left.code : 'accepted', 'COMMAND_ID_CONFLICT')
  }
)

inCase('a refused question releases its reservation; an outage keeps it (exit 2 and 3 from the CLI)', async () => {
  const dir = await newCase()
  const q = path.join(tempDir('q'), 'q.json')
  writeFileSync(
    q,
    JSON.stringify({
      kind: 'database.rows',
      table: 'account_secrets',
      columns: ['secret'],
      filters: [],
      offset: 0,
      limit: 1
    })
  )
  const refused = vba(['case', 'query', dir, '--config', profile, '--query', q])
  assert.is(refused.code, 2, refused.stderr)
  assert.match(refused.stderr, 'TABLE_NOT_ALLOWED')
  let v = await view(dir)
  assert.equal(v.budget, { reserved: 1, consumed: 0, released: 1, held: 0 })
  // outage: the SQLite snapshot disappears
  const broken = sqliteProfile()
  rmSync(path.join(path.dirname(broken), 'world.sqlite'))
  writeFileSync(q, JSON.stringify({ kind: 'database.count', table: 'creature_template', filters: [] }))
  const outage = vba(['case', 'query', dir, '--config', broken, '--query', q, '--command-id', 'outage-1'])
  assert.is(outage.code, 3, outage.stderr)
  assert.match(
    outage.stderr,
    /^vba: [A-Z_]+: .+ \(recorded in the case, generation \d+, command outage-1; the reservation is kept: retry with --command-id outage-1\)\n$/,
    'one line: the failure, where it was recorded and how to resume'
  )
  v = await view(dir)
  assert.is(v.budget.held, 1, 'the reservation stays for a resume')
  assert.is(v.reservations_open.length, 1)
  assert.is(v.unavailable_failures, 1)
  // vba status names the held reservation and its retry, before the investigation starts too
  const held = vba(['status', dir])
  assert.is(held.code, 0, held.stderr)
  assert.match(
    held.stdout,
    new RegExp(
      `\\nquery held: database\\.count creature_template.* \\(reservation \\S+, cost 1, failed [A-Z_]+\\): retry with vba case query ${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} --config PROFILE --query FILE --command-id outage-1\\n`
    ),
    held.stdout
  )
  const heldJson = JSON.parse(vba(['status', dir, '--json']).stdout) as { held_queries: Array<{ command_id: string }> }
  assert.equal(
    heldJson.held_queries.map((h) => h.command_id),
    ['outage-1']
  )
  // the same command id retries the same reservation (no second one), also after a second outage
  assert.is(vba(['case', 'query', dir, '--config', broken, '--query', q, '--command-id', 'outage-1']).code, 3)
  const ok = vba(['case', 'query', dir, '--config', profile, '--query', q, '--command-id', 'outage-1'])
  assert.is(ok.code, 0, ok.stderr)
  assert.match(ok.stdout, 'as evidence E1')
  assert.match(ok.stdout, 'command outage-1')
  v = await view(dir)
  assert.equal(
    v.budget,
    { reserved: 2, consumed: 1, released: 1, held: 0 },
    'one reservation for the refused query, one for the retried one'
  )
  assert.is(v.reservations_open.length, 0)
  assert.not.match(vba(['status', dir]).stdout, 'query held', 'a consumed reservation is not held')
  // a different query under a used command id is refused
  writeFileSync(q, JSON.stringify({ kind: 'database.count', table: 'quest_template', filters: [] }))
  const open = vba(['case', 'query', dir, '--config', broken, '--query', q, '--command-id', 'outage-2'])
  assert.is(open.code, 3)
  writeFileSync(q, JSON.stringify({ kind: 'database.count', table: 'creature_template', filters: [] }))
  const conflict = vba(['case', 'query', dir, '--config', profile, '--query', q, '--command-id', 'outage-2'])
  assert.is(conflict.code, 2, conflict.stderr)
  assert.match(conflict.stderr, 'COMMAND_ID_CONFLICT')
})

inCase(
  'a case with captures is portable: copied elsewhere it verifies and replays with no repository or database',
  async () => {
    const dir = await newCase()
    right(await queryInCase(dir, research, { kind: 'source.search', text: 'AddSC_' }, 's1')())
    const elsewhere = path.join(tempDir('moved'), 'case')
    cpSync(dir, elsewhere, { recursive: true })
    rmSync(dir, { recursive: true })
    assert.ok(right(await verifyCase(elsewhere)()).valid)
    const v = await view(elsewhere)
    assert.is(v.evidence.length, 1)
    const digest = (v.evidence as unknown as Array<{ capture: string }>)[0]?.capture ?? ''
    const report = right(await verifyCase(elsewhere)())
    assert.ok(report.object_bytes > 0)
    const bytes = right(await readObject(elsewhere, { digest, size: report.object_bytes })())
    assert.ok(E.isRight(Capture.decode(JSON.parse(bytes.toString('utf8')))))
  }
)

inCase.after(async () => research.close())
inCase.run()
