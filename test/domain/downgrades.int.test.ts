/**
 * No version is a way around a rule: the downgrades that verified VALID (a RevisionCompleted sealed
 * again as version 1, which switched `revision.derived` off; an InvestigationStarted as version 3,
 * which switched `research.binding` off) are RULE_VERSION in a case of today's format generation,
 * through the library and the CLI, for directories, bags and both SQL stores; in a case that claims
 * to predate generations they verify VALID only with the rules that did not apply named
 * (RULE_NOT_APPLIED), the report shows those facts and captures as not derived, and --strict (the
 * verifier's, the importer's) refuses them. The writer refuses to append an old version too.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { openVba } from '../../src/index.js'
import { appendCommand } from '../../src/adapters/case-store/append.js'
import { openCase } from '../../src/fp.js'
import { attempt } from '../../src/failures/error.js'
import { migrateStore, openSqlStore } from '../../src/adapters/sql-store/sql-store.js'
import { vba } from '../helpers/cli.js'
import { left, repoRoot, right, tempDir } from '../helpers/fs.js'
import { mariadbServer, postgresStore, type TestStore } from '../helpers/stores.js'

const FORGED = path.join(repoRoot(), 'case-format', 'examples', 'forged')
const VALID = path.join(repoRoot(), 'case-format', 'examples', 'valid', 'investigation')
const copy = (name: string): string => {
  const dir = path.join(tempDir(`downgrade-${name}`), 'case')
  cpSync(name === 'valid' ? VALID : path.join(FORGED, name), dir, { recursive: true })
  return dir
}
const rules = (findings: ReadonlyArray<{ code: string; data?: Record<string, unknown> }>, code: string): string[] =>
  findings.filter((f) => f.code === code).map((f) => String(f.data?.['rule']))

const test = suite('downgrades')

test('a downgraded RevisionCompleted or InvestigationStarted in a case of today is RULE_VERSION (library and CLI)', async () => {
  const client = await openVba()
  try {
    for (const [name, seq] of [
      ['RULE_VERSION', 5],
      ['RULE_VERSION-start', 6]
    ] as const) {
      const dir = copy(name)
      const r = await client.cases.verify(dir)
      assert.not.ok(r.valid, name)
      const f = r.findings.find((x) => x.code === 'RULE_VERSION')
      assert.is(f?.seq, seq)
      assert.match(f?.message ?? '', 'an older version from a newer writer')
      const cli = vba(['verify', dir])
      assert.is(cli.code, 1, cli.stdout)
      assert.match(cli.stdout, /RULE_VERSION .*version\.current/)
    }
  } finally {
    await client.close()
  }
})

test('the writer refuses to append an old version into a case of today (RULE_VIOLATION, nothing written)', async () => {
  const dir = copy('valid')
  const h = right(await openCase(dir)())
  const before = readFileSync(path.join(dir, 'events.jsonl'))
  const refused = left(
    await attempt(
      appendCommand(h, {
        commandId: 'old-note',
        expectedGeneration: h.cursor.seq,
        events: [{ type: 'NoteRecorded', version: 1, actor: 'operator', data: { text: 'as version 1' } }]
      })
    )
  )
  assert.is(refused.code, 'RULE_VIOLATION')
  assert.match(refused.message, 'version.current')
  assert.ok(readFileSync(path.join(dir, 'events.jsonl')).equals(before))
})

test('in a case that predates generations: VALID with RULE_NOT_APPLIED naming the events; --strict refuses it', async () => {
  const client = await openVba()
  try {
    const dir = copy('RULE_NOT_APPLIED-start')
    const r = await client.cases.verify(dir)
    assert.ok(r.valid)
    assert.equal(rules(r.findings, 'RULE_NOT_APPLIED'), ['revision.derived', 'research.binding', 'research.binding'])
    assert.ok(r.findings.every((f) => f.severity === 'notice'))
    assert.match(r.findings[0]?.message ?? '', 'facts not re-derived; 1 event(s): seq 5')
    assert.match(r.findings[2]?.message ?? '', 'no binding recorded')
    const strict = await client.cases.verify(dir, { strict: true })
    assert.not.ok(strict.valid)
    assert.ok(strict.findings.every((f) => f.code !== 'RULE_NOT_APPLIED' || f.severity === 'error'))
  } finally {
    await client.close()
  }
  const dir = copy('RULE_NOT_APPLIED')
  const plain = vba(['verify', dir])
  assert.is(plain.code, 0, plain.stdout)
  assert.match(
    plain.stdout,
    'VALID (2 notices; 2 rule(s) not applied, see RULE_NOT_APPLIED: --strict refuses this case)'
  )
  assert.match(plain.stdout, 'revision.derived not applied')
  const strict = vba(['verify', dir, '--strict'])
  assert.is(strict.code, 1, strict.stdout)
  assert.match(strict.stdout, /error +RULE_NOT_APPLIED/)
  // A case written today has every rule applied.
  assert.is(vba(['verify', copy('valid'), '--strict']).code, 0)
})

test('the report shows the facts and captures of rules that did not apply as not derived', async () => {
  const dir = copy('RULE_NOT_APPLIED-start')
  const out = path.join(tempDir('downgrade-report'), 'r.html')
  const r = vba(['report', dir, '--out', out])
  assert.is(r.code, 0, r.stderr)
  const html = readFileSync(out, 'utf8')
  assert.match(html, 'verified: chain and rules hold, but not every rule applied')
  assert.match(html, /id="facts-not-derived">Not derived: revision 1 was completed without its enrichment settings/)
  assert.match(html, /id="evidence-not-checked">Origins not checked: no binding was recorded for E1, E2, E3, E4/)
  const honest = path.join(tempDir('downgrade-report'), 'honest.html')
  assert.is(vba(['report', copy('valid'), '--out', honest]).code, 0)
  const page = readFileSync(honest, 'utf8')
  assert.not.match(page, 'not every rule applied')
  assert.not.match(page, 'facts-not-derived')
})

test('bags: a downgrade travels through export, and import refuses it; --strict refuses an old one', async () => {
  const tar = path.join(tempDir('downgrade-bag'), 'case.tar')
  assert.is(vba(['export', copy('RULE_VERSION'), tar]).code, 0)
  const verify = vba(['verify', tar])
  assert.is(verify.code, 1)
  assert.match(verify.stdout, 'RULE_VERSION')
  const imported = vba(['import', tar, path.join(tempDir('downgrade-import'), 'case')])
  assert.is.not(imported.code, 0, imported.stderr)
  assert.match(imported.stderr, 'CASE_CORRUPT')
  assert.match(imported.stderr, 'RULE_VERSION')
  const old = path.join(tempDir('downgrade-bag-old'), 'case.tar')
  assert.is(vba(['export', copy('RULE_NOT_APPLIED'), old]).code, 0)
  assert.is(vba(['verify', old]).code, 0)
  assert.is(vba(['verify', old, '--strict']).code, 1)
  const client = await openVba()
  try {
    assert.not.ok((await client.transport.verify(old, { strict: true })).valid)
    assert.ok((await client.transport.verify(old)).valid)
  } finally {
    await client.close()
  }
  const refused = vba(['import', '--strict', old, path.join(tempDir('downgrade-import-old'), 'case')])
  assert.is.not(refused.code, 0, refused.stderr)
  assert.match(refused.stderr, 'RULE_NOT_APPLIED')
  assert.is(vba(['import', old, path.join(tempDir('downgrade-import-old2'), 'case')]).code, 0)
})

const maria = await mariadbServer()
const stores: TestStore[] = []
for (const kind of ['postgres', 'mariadb'] as const) {
  test(`${kind}: a downgraded row is RULE_VERSION; an old case's notices and --strict`, async () => {
    const fresh = async () => {
      const t = kind === 'postgres' ? await postgresStore('downgrade') : await maria.store('downgrade')
      stores.push(t)
      await migrateStore(t.url, { environment: t.environment })
      return { t, store: await openSqlStore(t.url, { environment: t.environment }) }
    }
    const { t, store } = await fresh()
    const second = await fresh()
    try {
      // The store imports only what verifies: the downgrade is refused at the door.
      const refused = await store.importDirectory(copy('RULE_VERSION')).then(
        () => null,
        (e: { failure?: { code: string } }) => e.failure?.code ?? 'thrown'
      )
      assert.is(refused, 'CASE_CORRUPT')
      // A downgrade written into the rows of an honest case is found by the store's own scan.
      await store.importDirectory(copy('valid'))
      const forged = readFileSync(path.join(FORGED, 'RULE_VERSION', 'events.jsonl'), 'utf8')
        .trim()
        .split('\n')
      for (const [i, line] of forged.entries())
        await store
          .knex('vba_events')
          .where({ case_id: 'case-investigation', seq: i + 1 })
          .update({ line: Buffer.from(line) })
      const last = JSON.parse(forged[forged.length - 1] ?? '{}') as { hash: string }
      await store
        .knex('vba_cases')
        .where({ case_id: 'case-investigation' })
        .update({ head_hash: last.hash, log_bytes: forged.join('\n').length + 1 })
      const v = await store.verify('case-investigation')
      assert.not.ok(v.valid)
      assert.ok(rules(v.findings, 'RULE_VERSION').includes('version.current'), JSON.stringify(v.findings))
      const cli = vba(['verify', '--store', t.url, 'case-investigation'], { env: { ...t.environment } })
      assert.is(cli.code, 1, cli.stderr)
      assert.match(cli.stdout, 'RULE_VERSION')
      // An old case: valid with its notices, refused with --strict.
      await second.store.importDirectory(copy('RULE_NOT_APPLIED'))
      const plain = await second.store.verify('case-investigation')
      assert.ok(plain.valid, JSON.stringify(plain.findings))
      assert.equal(rules(plain.findings, 'RULE_NOT_APPLIED'), ['revision.derived', 'research.binding'])
      assert.not.ok((await second.store.verify('case-investigation', { strict: true })).valid)
      const strict = vba(['verify', '--store', second.t.url, 'case-investigation', '--strict'], {
        env: { ...second.t.environment }
      })
      assert.is(strict.code, 1, strict.stderr)
    } finally {
      await store.close()
      await second.store.close()
    }
  })
}

test.after(async () => {
  for (const t of stores) await t.drop()
  await maria.stop()
})

test.run()
