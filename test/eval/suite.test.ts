/** The suite format: the truth's JSON Schema as committed, the ranges of a diff, and the public suite read whole. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { parseDiffRanges, readSuite, truthSchema } from '../../src/eval/suite.js'
import { readInputs } from '../../src/commands/prepare.js'
import { repoRoot } from '../helpers/fs.js'

const s = suite('eval suite format')

s('eval/truth.schema.json is what the codec gives (npm run schemas)', () => {
  const committed = readFileSync(path.join(repoRoot(), 'eval', 'truth.schema.json'), 'utf8')
  assert.is(committed, `${JSON.stringify(truthSchema(), null, 2)}\n`)
})

s('a diff as changed ranges of the old side: replaced lines, an insertion point, an added file left out', () => {
  const diff = [
    'diff --git a/src/a.cpp b/src/a.cpp',
    '--- a/src/a.cpp',
    '+++ b/src/a.cpp',
    '@@ -10,3 +10,4 @@ void f()',
    '@@ -40 +41 @@',
    '@@ -60,0 +62,2 @@',
    'diff --git a/src/new.cpp b/src/new.cpp',
    '--- /dev/null',
    '+++ b/src/new.cpp',
    '@@ -0,0 +1,5 @@'
  ].join('\n')
  assert.equal(parseDiffRanges(diff), [
    { path: 'src/a.cpp', lines: [10, 12] },
    { path: 'src/a.cpp', lines: [40, 40] },
    { path: 'src/a.cpp', lines: [60, 61] }
  ])
})

s(
  'the public AzerothCore suite: every bug has a report the inputs reader takes and a fix of 1-3 C++ files',
  async () => {
    const bugs = await readSuite(path.join(repoRoot(), 'eval', 'azerothcore'))
    assert.ok(bugs.length >= 12, `${bugs.length} bugs`)
    for (const b of bugs) {
      assert.ok(b.truth.fix_commit !== undefined && b.truth.issue !== undefined && b.truth.title !== undefined, b.id)
      const inputs = await readInputs(b.reportFile)
      assert.ok(inputs.report.length > 100, b.id)
    }
  }
)

s.run()
