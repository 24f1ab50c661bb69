import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { parseReceipt } from '../../src/adapters/case-store/verify.js'
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

examples('every valid example verifies with no findings', async () => {
  assert.equal(dirs('valid'), ['basic', 'investigation', 'written-with-v1-events', 'written-with-v1-prompts'])
  for (const name of dirs('valid')) {
    const report = right(await verifyCase(path.join(EXAMPLES, 'valid', name))())
    assert.ok(report.valid, name)
    assert.equal(report.findings, [], name)
  }
})

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
  const noticeCodes = Object.entries(FINDING_CODES)
    .filter(([, s]) => s === 'notice')
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
    assert.equal(
      [...Object.keys(RULE_CODES), ...Object.keys(RECEIPT_CODES)].sort(),
      [...FORGED_NAMES].sort(),
      'one forged case per rule family and receipt finding'
    )
    for (const name of dirs('forged')) {
      const dir = path.join(EXAMPLES, 'forged', name)
      const receipt = existsSync(`${dir}.receipt`) ? parseReceipt(readFileSync(`${dir}.receipt`, 'utf8')) : null
      const report = right(await verifyCase(dir, receipt === null ? {} : { expectHead: receipt })())
      assert.not.ok(report.valid, name)
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
  assert.is(BROKEN_CODES.length + LEFTOVER_CODES.length, Object.keys(FINDING_CODES).length)
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

const parallel = suite('line digests on a worker thread')

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

parallel.run()
