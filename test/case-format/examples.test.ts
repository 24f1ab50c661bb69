import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { parseReceipt } from '../../src/adapters/case-store/verify.js'
import { scanCase, type ScanOptions } from '../../src/adapters/case-store/scan.js'
import { verifyCase } from '../../src/fp.js'
import { replayCase } from '../../src/fp.js'
import { defaultProjections } from '../../src/projections/defaults.js'
import { canonicalJson } from '../../src/events/canonical.js'
import { FINDING_CODES, RECEIPT_CODES, RULE_CODES } from '../../src/events/findings.js'
import { writeExamples, BROKEN_CODES, FORGED_NAMES, LEFTOVER_CODES } from '../../scripts/make-examples.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'

const EXAMPLES = path.join(repoRoot(), 'case-format', 'examples')
const dirs = (group: string): string[] =>
  readdirSync(path.join(EXAMPLES, group))
    .filter((n) => statSync(path.join(EXAMPLES, group, n)).isDirectory())
    .sort()

const examples = suite('case-format/examples')

examples(
  'every valid example verifies with no findings (the frozen ones: only the rules their versions keep from applying)',
  async () => {
    assert.equal(dirs('valid'), [
      'basic',
      'investigation',
      'written-with-v1-events',
      'written-with-v1-prompts',
      'written-with-v2-legacy-wording'
    ])
    for (const name of dirs('valid')) {
      const dir = path.join(EXAMPLES, 'valid', name)
      const report = right(await verifyCase(dir)())
      assert.ok(report.valid, name)
      const frozen = name.startsWith('written-with-')
      if (!frozen) {
        assert.equal(report.findings, [], name)
        assert.ok(right(await verifyCase(dir, { strict: true })()).valid, `${name} under --strict`)
        continue
      }
      assert.ok(
        report.findings.every((f) => f.code === 'RULE_NOT_APPLIED' && f.severity === 'notice'),
        JSON.stringify(report.findings)
      )
      const strict = right(await verifyCase(dir, { strict: true })())
      assert.is(strict.valid, report.findings.length === 0, `${name} under --strict`)
    }
  }
)

examples('every broken example is invalid and produces the finding it is named after', async () => {
  const errorCodes = Object.entries(FINDING_CODES)
    .filter(([, s]) => s === 'error')
    .map(([c]) => c)
    .sort()
  assert.equal(dirs('broken'), errorCodes, 'one broken example per error code')
  for (const code of dirs('broken')) {
    const report = right(await verifyCase(path.join(EXAMPLES, 'broken', code))())
    assert.not.ok(report.valid, code)
    assert.ok(
      report.findings.some((f) => f.code === code),
      `${code}: got ${report.findings.map((f) => f.code).join(', ')}`
    )
  }
})

examples('every leftover example is valid and reports its notice', async () => {
  // RULE_NOT_APPLIED is no leftover: its examples are forged (verified with --strict).
  const noticeCodes = Object.entries(FINDING_CODES)
    .filter(([c, s]) => s === 'notice' && c !== 'RULE_NOT_APPLIED')
    .map(([c]) => c)
    .sort()
  assert.equal(dirs('leftovers'), noticeCodes)
  for (const code of dirs('leftovers')) {
    const report = right(await verifyCase(path.join(EXAMPLES, 'leftovers', code))())
    assert.ok(report.valid, code)
    assert.equal(
      report.findings.map((f) => f.code),
      [code]
    )
  }
})

examples(
  'every forged example verifies INVALID with exactly the findings listed beside it; every rule family has one',
  async () => {
    assert.equal(dirs('forged'), [...FORGED_NAMES].sort())
    const families = [...Object.keys(RULE_CODES), ...Object.keys(RECEIPT_CODES), 'RULE_NOT_APPLIED'].sort()
    assert.equal(
      families.filter((c) => FORGED_NAMES.includes(c)),
      families,
      'one forged case per rule family and receipt finding'
    )
    for (const name of FORGED_NAMES)
      assert.ok(
        families.some((c) => name === c || name.startsWith(`${c}-`)),
        `${name} is named after its family`
      )
    for (const name of dirs('forged')) {
      const dir = path.join(EXAMPLES, 'forged', name)
      const receipt = existsSync(`${dir}.receipt`) ? parseReceipt(readFileSync(`${dir}.receipt`, 'utf8')) : null
      const strict = existsSync(`${dir}.strict`)
      const report = right(
        await verifyCase(dir, { ...(receipt === null ? {} : { expectHead: receipt }), ...(strict ? { strict } : {}) })()
      )
      assert.not.ok(report.valid, name)
      // Without --strict such a case is valid, and says which rules did not apply.
      if (strict) {
        const plain = right(await verifyCase(dir)())
        assert.ok(plain.valid, name)
        assert.ok(plain.findings.length > 0 && plain.findings.every((f) => f.code === 'RULE_NOT_APPLIED'), name)
      }
      const expected = JSON.parse(readFileSync(`${dir}.expected.json`, 'utf8')) as Array<{
        code: string
        rule?: string
        seq?: number
      }>
      const got = report.findings.map((f) => ({
        code: f.code,
        ...(f.data?.['rule'] === undefined ? {} : { rule: f.data['rule'] }),
        ...(f.seq === undefined ? {} : { seq: f.seq })
      }))
      assert.equal(got, expected, name)
      // without the rules the chain is intact: the forgery is invisible to a hash check alone
      assert.ok(
        report.findings.every((f) => f.code.startsWith('RULE_') || f.code.startsWith('HEAD_')),
        name
      )
    }
  }
)

examples('the committed examples are exactly what the generator writes today', async () => {
  const fresh = path.join(tempDir('examples'), 'examples')
  await writeExamples(fresh)
  const list = (root: string, rel = ''): string[] =>
    readdirSync(path.join(root, rel)).flatMap((n) => {
      const r = rel === '' ? n : `${rel}/${n}`
      if (
        r === 'valid/written-with-v1-events' ||
        r === 'valid/written-with-v1-prompts' ||
        r === 'valid/written-with-v2-legacy-wording' ||
        n.endsWith('.replay.json') ||
        n === '.gitattributes'
      )
        return []
      return statSync(path.join(root, r)).isDirectory() ? list(root, r) : [r]
    })
  const committed = list(EXAMPLES).sort()
  assert.equal(list(fresh).sort(), committed)
  for (const rel of committed)
    assert.ok(
      readFileSync(path.join(fresh, rel)).equals(readFileSync(path.join(EXAMPLES, rel))),
      `${rel} differs: run npm run examples`
    )
  // Every finding code has its example: RULE_NOT_APPLIED among the forged ones.
  assert.is(BROKEN_CODES.length + LEFTOVER_CODES.length + 1, Object.keys(FINDING_CODES).length)
})

examples.run()

const frozen = suite('frozen case written with version-1 events')

frozen('replays into current event versions, byte-identical to its recorded replay', async () => {
  const dir = path.join(EXAMPLES, 'valid', 'written-with-v1-events')
  const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { version: number })
  assert.equal(
    lines.map((l) => l.version),
    [1, 1, 2],
    'the fixture really holds version-1 events'
  )
  const result = right(await replayCase(dir, defaultProjections())())
  // Every projection recorded then, at the same version, must still give the same bytes.
  const recorded = JSON.parse(readFileSync(`${dir}.replay.json`, 'utf8')) as {
    generation: number
    head_hash: string
    views: Record<string, { version: number; view: unknown }>
  }
  assert.is(result.generation, recorded.generation)
  assert.is(result.head_hash, recorded.head_hash)
  for (const [name, then] of Object.entries(recorded.views)) {
    const now = result.views[name]
    if (now === undefined || now.version !== then.version)
      assert.unreachable(`projection ${name}@${then.version} is gone; keep old versions replayable`)
    else assert.is(right(canonicalJson(now.view)), right(canonicalJson(then.view)), name)
  }
  const summary = result.views['summary']?.view as { events_upcast: number }
  assert.is(summary.events_upcast, 2)
})

frozen.run()

const parallel = suite('line checks on worker threads')

parallel('give the same findings as inline checks for every example', async () => {
  for (const group of ['valid', 'broken', 'leftovers', 'forged']) {
    for (const name of dirs(group)) {
      const dir = path.join(EXAMPLES, group, name)
      const inline = right(await verifyCase(dir, { parallelFromBytes: Number.MAX_SAFE_INTEGER })())
      const worker = right(await verifyCase(dir, { parallelFromBytes: 0 })())
      assert.equal(worker, inline, `${group}/${name}`)
    }
  }
})

parallel('fold the same events with the same findings on one and two workers, in verify and in replay', async () => {
  for (const group of ['valid', 'broken', 'leftovers', 'forged']) {
    for (const name of dirs(group)) {
      const dir = path.join(EXAMPLES, group, name)
      for (const canonical of [true, false]) {
        const scan = async (o: ScanOptions) => {
          // Each event as JSON: its data too, which a worker's line parses only when read.
          const events: string[] = []
          const r = await scanCase(dir, { ...o, canonical, onEvent: (e) => events.push(JSON.stringify(e)) })
          return { findings: r.findings, seq: r.seq, hash: r.hash, bytes: r.bytes, ids: r.eventIds, events }
        }
        const inline = await scan({ parallelFromBytes: Number.MAX_SAFE_INTEGER })
        for (const lineWorkers of [1, 2])
          assert.equal(await scan({ parallelFromBytes: 0, lineWorkers }), inline, `${group}/${name} ${lineWorkers}`)
      }
    }
  }
})

parallel.run()
