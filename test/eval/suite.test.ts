/** The suite format: the truth's JSON Schema as committed, the ranges of a diff, and the public suite read whole. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { parseDiffRanges, readSuite, truthSchema } from '../../src/eval/suite.js'
import { readInputs } from '../../src/commands/prepare.js'
import { FailureError } from '../../src/failures/error.js'
import { repoRoot, tempDir } from '../helpers/fs.js'

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

/** A suite of one bug `a`: report.md, and truth.json at a commit whose fix changed `changed`. */
const oneBug = (changed: unknown = [{ path: 'src/a.cpp', lines: [1, 2] }]): string => {
  const root = path.join(tempDir('suite-hostile'), 'suite')
  mkdirSync(path.join(root, 'a'), { recursive: true })
  writeFileSync(path.join(root, 'a', 'report.md'), 'The quest item is not given.')
  writeFileSync(path.join(root, 'a', 'truth.json'), JSON.stringify({ commit: 'a'.repeat(40), changed }))
  return root
}

const refusal = async (root: string): Promise<string> => {
  try {
    await readSuite(root)
  } catch (e) {
    if (e instanceof FailureError) return `${e.failure.code}: ${e.failure.message}`
    throw e
  }
  throw new Error('the suite was read')
}

s(
  'a suite is read only from its own regular files: links to a report, a truth or a bug folder are refused',
  async () => {
    const secret = path.join(tempDir('suite-secret'), 'token')
    writeFileSync(secret, 'S3CRET-TOKEN')

    const report = oneBug()
    const reportFile = path.join(report, 'a', 'report.md')
    rmSync(reportFile)
    symlinkSync(secret, reportFile)
    const r = await refusal(report)
    assert.match(r, 'INPUT_INVALID: a/report.md is a symbolic link')
    assert.not.match(r, 'S3CRET')

    const truth = oneBug()
    const truthFile = path.join(truth, 'a', 'truth.json')
    const copy = path.join(tempDir('suite-truth'), 'truth.json')
    writeFileSync(copy, readFileSync(truthFile))
    rmSync(truthFile)
    symlinkSync(copy, truthFile)
    assert.match(await refusal(truth), /^INPUT_INVALID: a\/truth\.json is a symbolic link/)

    const folder = oneBug()
    symlinkSync(secret, path.join(folder, 'README.md'))
    assert.equal(
      (await readSuite(folder)).map((b) => b.id),
      ['a'],
      'a link to a file beside the bugs is no bug'
    )
    symlinkSync(path.join(folder, 'a'), path.join(folder, 'b'))
    assert.match(await refusal(folder), 'INPUT_INVALID: b is a symbolic link: a suite holds its bug folders itself')
  }
)

s(
  "a report and its attachments are read as the suite's own files: no link, nor a folder on the way that is one",
  async () => {
    const secretDir = tempDir('suite-secret-dir')
    writeFileSync(path.join(secretDir, 'token.txt'), 'S3CRET-TOKEN')
    const root = oneBug()
    const report = path.join(root, 'a', 'report.json')
    rmSync(path.join(root, 'a', 'report.md'))
    symlinkSync(secretDir, path.join(root, 'a', 'att'))
    writeFileSync(report, JSON.stringify({ report: 'x', attachments: [{ name: 'log', path: 'att/token.txt' }] }))
    const leaked = await readInputs(report, { ownFile: true }).then(
      () => 'read',
      (e: unknown) => (e instanceof FailureError ? `${e.failure.code}: ${e.failure.message}` : String(e))
    )
    assert.match(
      leaked,
      'INPUT_INVALID: attachment "log": "att/token.txt" leads outside the directory of the report file'
    )
    // the report itself, swapped for a link after the suite was read
    const linked = path.join(root, 'a', 'report.md')
    symlinkSync(path.join(secretDir, 'token.txt'), linked)
    const swapped = await readInputs(linked, { ownFile: true }).then(
      () => 'read',
      (e: unknown) => (e instanceof FailureError ? `${e.failure.code}: ${e.failure.message}` : String(e))
    )
    assert.match(swapped, 'INPUT_INVALID: report.md is a symbolic link')
  }
)

s('a changed path is a repository path: absolute, traversing, option-like or empty ones are refused', async () => {
  for (const [p, why] of [
    ['/etc/passwd', 'must be relative'],
    ['../../etc/passwd', 'no . or .. segments'],
    ['-rf', 'must not start with "-"'],
    ['', 'is empty']
  ] as const) {
    const r = await refusal(oneBug([{ path: p, lines: [1, 2] }]))
    assert.match(r, 'INPUT_INVALID', p)
    assert.match(r, why, p)
  }
})

s('hidden folders of a suite (its .git) are not bugs', async () => {
  const root = oneBug()
  mkdirSync(path.join(root, '.git', 'objects'), { recursive: true })
  const bugs = await readSuite(root)
  assert.equal(
    bugs.map((b) => b.id),
    ['a']
  )
})

s.run()
