/**
 * Verified means true: `verify --against PROFILE` re-derives every capture from git objects at
 * the commit it names and from the database when the snapshot is the same. An honest case
 * re-derives with no finding; a forger who rewrote one source line or one database row (with an
 * intact chain, so plain verify says VALID) is caught with EVIDENCE_MISMATCH naming the file and
 * line, or the table, row and column; another snapshot is a notice, not a guess. Through the
 * library and the CLI, for a directory, a bag and a case in PostgreSQL.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba, type VerifyReport } from '../../src/index.js'
import { forger, writeDemoWorld } from '../../src/testing.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'
import { loadProfile } from '../../src/fp.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { queryInCase } from '../../src/commands/case-query.js'

const world = await writeDemoWorld(path.join(tempDir('rederive'), 'demo'))
const READ = { kind: 'source.read', path: 'src/server/scripts/World/npc_wolpertinger.cpp', start_line: 1, end_line: 20 }
const ROWS = {
  kind: 'database.rows',
  table: 'smart_scripts',
  columns: ['entryorguid', 'id', 'comment'],
  filters: [{ column: 'entryorguid', operator: 'eq', value: 23487 }],
  offset: 0,
  limit: 10
}

/** A prepared case with one source.read and one database.rows recorded as evidence. */
const honestCase = async (): Promise<string> => {
  const dir = path.join(tempDir('rederive-case'), 'case')
  const client = await openVba({ profile: world.profile })
  try {
    await client.cases.create(dir, { title: 'Quest 11117' })
    await client.investigations.prepare(dir, {
      report: 'Netted wolpertingers vanish.',
      entities: [{ type: 'quest', id: 11117 }]
    })
    await client.research.queryInCase(dir, READ, { commandId: 'q-read' })
    await client.research.queryInCase(dir, ROWS, { commandId: 'q-rows' })
  } finally {
    await client.close()
  }
  return dir
}

/** Rewrites the capture recorded at `seq` (its object replaced, the chain sealed again). */
const forgeCapture = (dir: string, kind: string, edit: (capture: Record<string, unknown>) => void): void => {
  const f = forger(dir)
  const event = f.envelopes().find((e) => e.type === 'CaptureRecorded' && (e.data as { kind: string }).kind === kind)
  if (event === undefined) throw new Error(`no ${kind} capture`)
  const ref = (event.data as { capture: { digest: string } }).capture
  const file = path.join(dir, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9))
  const capture = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  edit(capture)
  const text = canonicalJson(capture)
  if (text._tag === 'Left') throw new Error('not canonical')
  const forged = f.object(Buffer.from(text.right, 'utf8'), 'application/vnd.vba.capture+json')
  f.rewrite(event.seq, (d) => ({ ...(d as Record<string, unknown>), capture: forged }))
}

/**
 * Makes up a capture of another request (its object, and the request digest its reservation and
 * capture events record, all sealed again): what a forger writes for a file or table that is not there.
 */
const forgeRequest = (dir: string, kind: string, edit: (capture: Record<string, unknown>) => void): void => {
  const f = forger(dir)
  const event = f.envelopes().find((e) => e.type === 'CaptureRecorded' && (e.data as { kind: string }).kind === kind)
  if (event === undefined) throw new Error(`no ${kind} capture`)
  const data = event.data as { capture: { digest: string }; request_digest: string; reservation_id: string }
  const file = path.join(dir, 'objects', 'sha256', data.capture.digest.slice(7, 9), data.capture.digest.slice(9))
  const capture = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  edit(capture)
  const text = canonicalJson(capture)
  const request = canonicalJson(capture['request'])
  if (text._tag === 'Left' || request._tag === 'Left') throw new Error('not canonical')
  const digest = sha256Digest(request.right)
  const forged = f.object(Buffer.from(text.right, 'utf8'), 'application/vnd.vba.capture+json')
  const reservation = f
    .envelopes()
    .find(
      (e) =>
        e.type === 'BudgetReserved' && (e.data as { reservation_id?: string }).reservation_id === data.reservation_id
    )
  if (reservation !== undefined)
    f.rewrite(reservation.seq, (d) => {
      const data = d as Record<string, unknown>
      // A version-4 reservation records the request itself: the forger rewrites it with its digest.
      const recorded = data['request'] === undefined || data['request'] === null ? {} : { request: capture['request'] }
      return { ...data, request_digest: digest, ...recorded }
    })
  f.rewrite(event.seq, (d) => ({ ...(d as Record<string, unknown>), capture: forged, request_digest: digest }))
}

const codes = (r: VerifyReport, severity = 'error'): string[] =>
  r.findings.filter((f) => f.severity === severity).map((f) => f.code)

const test = suite('verify --against re-derives the evidence')

test('an honest case re-derives every capture with no finding (library and CLI)', async () => {
  const dir = await honestCase()
  const client = await openVba({ profile: world.profile })
  try {
    const r = await client.cases.verify(dir, { against: true })
    assert.ok(r.valid, JSON.stringify(r.findings))
    assert.ok((r.evidence?.checked ?? 0) >= 3, JSON.stringify(r.evidence))
    assert.is(r.evidence?.mismatched, 0)
    assert.equal(r.evidence?.commits, [world.commit])
    assert.equal(r.evidence?.snapshots, ['demo-world-fixture'])
    // The report claims only what was checked: chain and rules, and the evidence when asked.
    const plain = await client.cases.report(dir)
    assert.match(plain, 'verified: chain and rules hold')
    assert.match(plain, 'evidence not re-derived')
    const page = await client.cases.report(dir, { against: true })
    assert.match(
      page,
      `evidence re-derived at commit ${world.commit} and snapshot demo-world-fixture: ${r.evidence?.matched ?? -1} of ${r.evidence?.captures ?? -1} capture(s) identical`
    )
  } finally {
    await client.close()
  }
  const cli = vba(['verify', dir, '--against', world.profile])
  assert.is(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, `evidence re-derived at commit ${world.commit} and snapshot demo-world-fixture`)
  const out = path.join(tempDir('rederive-report'), 'r.html')
  const report = vba(['report', dir, '--out', out, '--against', world.profile])
  assert.is(report.code, 0, report.stderr)
  assert.match(
    readFileSync(out, 'utf8'),
    `id="evidence-check">evidence re-derived at commit ${world.commit} and snapshot demo-world-fixture`
  )
})

test('a rewritten source line verifies VALID by chain and rules, and is EVIDENCE_MISMATCH at its file and line against the repository', async () => {
  const dir = await honestCase()
  forgeCapture(dir, 'source.read', (c) => {
    const lines = (c['result'] as { lines: Array<{ line: number; text: string }> }).lines
    const third = lines[2]
    if (third !== undefined) third.text = 'wild->DespawnOrUnsummon(); // FORGED'
  })
  assert.is(vba(['verify', dir]).code, 0, 'the forgery keeps the chain and the rules')
  const cli = vba(['verify', dir, '--against', world.profile, '--json'])
  assert.is(cli.code, 1, cli.stdout)
  const mismatch = cli.stdout
    .split('\n')
    .filter((l) => l.includes('EVIDENCE_MISMATCH'))
    .map((l) => JSON.parse(l) as { finding: { message: string; data: { where: string } } })
  assert.is(mismatch.length, 1)
  assert.is(mismatch[0]?.finding.data.where, 'src/server/scripts/World/npc_wolpertinger.cpp:3')
  assert.match(mismatch[0]?.finding.message ?? '', 'FORGED')
  const out = path.join(tempDir('rederive-report'), 'forged.html')
  const report = vba(['report', dir, '--out', out, '--against', world.profile])
  assert.is(report.code, 1, 'a report whose evidence does not re-derive exits 1')
  const html = readFileSync(out, 'utf8')
  assert.match(html, 'EVIDENCE_MISMATCH')
  assert.match(
    html,
    /class="badge bad" id="evidence-check">evidence re-derived at commit [0-9a-f]{40} and snapshot demo-world-fixture: \d+ of \d+ capture\(s\) identical, 1 differ/
  )
})

test('a rewritten database value is EVIDENCE_MISMATCH at its table, row and column; another snapshot is a notice, not a verdict', async () => {
  const dir = await honestCase()
  forgeCapture(dir, 'database.rows', (c) => {
    const rows = (c['result'] as { rows: Array<Record<string, unknown>> }).rows
    const first = rows[0]
    if (first !== undefined) first['comment'] = 'invented comment'
  })
  const client = await openVba({ profile: world.profile })
  try {
    const r = await client.cases.verify(dir, { against: true })
    assert.not.ok(r.valid)
    const f = r.findings.find((x) => x.code === 'EVIDENCE_MISMATCH')
    assert.is((f?.data as { where?: string } | undefined)?.where, 'table world.smart_scripts, row 1, column comment')
    assert.match(
      f?.message ?? '',
      'a database re-imported under the unchanged snapshot id demo-world-fixture has the same effect'
    )
  } finally {
    await client.close()
  }
  const other = path.join(path.dirname(world.profile), 'other-snapshot.toml')
  writeFileSync(
    other,
    readFileSync(world.profile, 'utf8').replace(/snapshot_id = "[^"]*"/, 'snapshot_id = "world-2026-12-01"')
  )
  const client2 = await openVba({ profile: other })
  try {
    const r = await client2.cases.verify(dir, { against: true })
    assert.ok(r.valid, 'database captures of another snapshot are not judged')
    assert.ok(codes(r, 'notice').includes('EVIDENCE_NOT_RECHECKED'))
    assert.match(
      r.findings.find((x) => x.code === 'EVIDENCE_NOT_RECHECKED')?.message ?? '',
      'snapshot demo-world-fixture'
    )
    assert.equal(r.evidence?.snapshots, [])
  } finally {
    await client2.close()
  }
})

test('a made-up read of a file that is not at the bound commit is EVIDENCE_MISMATCH naming the refusal, not a notice', async () => {
  const dir = await honestCase()
  const invented = 'src/server/scripts/World/npc_invented.cpp'
  forgeRequest(dir, 'source.read', (c) => {
    ;(c['request'] as { path: string }).path = invented
    const result = c['result'] as Record<string, unknown>
    result['path'] = invented
    const origin = c['origin'] as { files: Array<{ path: string }> }
    for (const file of origin.files) file.path = invented
  })
  assert.is(vba(['verify', dir]).code, 0, 'the forgery keeps the chain and the rules')
  const client = await openVba({ profile: world.profile })
  try {
    const r = await client.cases.verify(dir, { against: true })
    assert.not.ok(r.valid)
    const f = r.findings.find((x) => x.code === 'EVIDENCE_MISMATCH')
    assert.is((f?.data as { refusal?: string } | undefined)?.refusal, 'SOURCE_FILE_NOT_FOUND')
    assert.match(
      f?.message ?? '',
      /cannot have been recorded at commit [0-9a-f]{12}: asking again is refused there with SOURCE_FILE_NOT_FOUND/
    )
    assert.not.ok(codes(r, 'notice').includes('EVIDENCE_NOT_RECHECKED'), 'not "could not ask"')
    assert.is(r.evidence?.mismatched, 1)
  } finally {
    await client.close()
  }
  const cli = vba(['verify', dir, '--against', world.profile])
  assert.is(cli.code, 1, cli.stdout)
  assert.match(cli.stdout, /EVIDENCE_MISMATCH.*SOURCE_FILE_NOT_FOUND/)
})

test('a made-up table at the bound snapshot is EVIDENCE_MISMATCH naming TABLE_NOT_FOUND, with the re-import hint', async () => {
  const dir = await honestCase()
  forgeRequest(dir, 'database.rows', (c) => {
    ;(c['request'] as { table: string }).table = 'invented_table'
    const settings = c['settings'] as { allowed_tables?: string[] }
    if (Array.isArray(settings.allowed_tables)) settings.allowed_tables.push('invented_table')
  })
  const client = await openVba({ profile: world.profile })
  try {
    const r = await client.cases.verify(dir, { against: true })
    assert.not.ok(r.valid)
    const f = r.findings.find((x) => x.code === 'EVIDENCE_MISMATCH')
    assert.ok(
      ['TABLE_NOT_FOUND', 'TABLE_NOT_ALLOWED'].includes((f?.data as { refusal?: string } | undefined)?.refusal ?? ''),
      JSON.stringify(r.findings)
    )
    assert.match(
      f?.message ?? '',
      'a database re-imported under the unchanged snapshot id demo-world-fixture has the same effect'
    )
    assert.match(f?.message ?? '', 'give every import its own snapshot_id')
  } finally {
    await client.close()
  }
})

test('an SQLite world reports the type a column stands for (DECIMAL(14,4), not TEXT_DECIMAL); a capture recorded before that re-derives as it was', async () => {
  const dir = await honestCase()
  const SCHEMA = { kind: 'database.schema', table: 'creature_template' }
  const typeOf = (c: { result: Record<string, unknown> }): unknown =>
    (c.result['columns'] as Array<{ name: string; type: string }>).find((x) => x.name === 'DamageModifier')?.type
  const profile = right(await loadProfile(world.profile)())
  // what a library before sqlite_types recorded: the declared type, no sqlite_types in the settings
  const before = createProjectResearch(profile, { sqliteTypes: 'declared' })
  try {
    const old = await queryInCase(dir, before, SCHEMA, 'q-schema-before')
    assert.is(old.capture === undefined ? null : typeOf(old.capture), 'TEXT_DECIMAL(14,4)')
    assert.is((old.capture?.settings as Record<string, unknown>)['sqlite_types'], undefined)
  } finally {
    await before.close()
  }
  const client = await openVba({ profile: world.profile })
  try {
    const now = await client.research.queryInCase(dir, SCHEMA, { commandId: 'q-schema' })
    assert.is(now.capture === undefined ? null : typeOf(now.capture), 'DECIMAL(14,4)')
    assert.is((now.capture?.settings as Record<string, unknown>)['sqlite_types'], 'mysql')
    const r = await client.cases.verify(dir, { against: true })
    assert.ok(r.valid, JSON.stringify(r.findings))
    assert.is(r.evidence?.mismatched, 0, JSON.stringify(r.findings))
    assert.ok((r.evidence?.matched ?? 0) >= 4, JSON.stringify(r.evidence))
  } finally {
    await client.close()
  }
})

test('a bag and a PostgreSQL case are re-derived too', async () => {
  const dir = await honestCase()
  forgeCapture(dir, 'source.read', (c) => {
    const lines = (c['result'] as { lines: Array<{ text: string }> }).lines
    if (lines[0] !== undefined) lines[0].text = '#include "Forged.h"'
  })
  const bag = path.join(tempDir('rederive-bag'), 'case.tar')
  assert.is(vba(['export', dir, bag]).code, 0)
  const viaBag = vba(['verify', bag, '--against', world.profile])
  assert.is(viaBag.code, 1, viaBag.stdout + viaBag.stderr)
  assert.match(viaBag.stdout, 'EVIDENCE_MISMATCH')
  const store: TestStore = await postgresStore('rederive')
  try {
    assert.is(vba(['store', 'migrate', '--store', store.url]).code, 0)
    const imported = vba(['store', 'import', dir, '--store', store.url])
    assert.is(imported.code, 0, imported.stderr)
    const viaStore = vba(['verify', imported.stdout.trim(), '--store', store.url, '--against', world.profile])
    assert.is(viaStore.code, 1, viaStore.stdout + viaStore.stderr)
    assert.match(viaStore.stdout, /EVIDENCE_MISMATCH.*npc_wolpertinger\.cpp:1/)
  } finally {
    await store.drop()
  }
})

test.run()
