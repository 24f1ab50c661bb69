/**
 * vba store import of a case the store already holds: CASE_EXISTS (exit 2, nothing written) that
 * says how the stored case stands to the imported one: the same head (nothing to import), or
 * another head, with the verify that compares them.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as path from 'node:path'
import { exportCase } from '../../src/fp.js'
import { vba } from '../helpers/cli.js'
import { right, tempDir } from '../helpers/fs.js'
import { writeInvestigation } from '../helpers/investigation.js'
import { postgresStore, type TestStore } from '../helpers/stores.js'

const test = suite('vba store import of a case the store holds')
let t: TestStore
const refDir = path.join(tempDir('import-exists-ref'), 'case')
await writeInvestigation(refDir, tempDir('import-exists-world'))
const refTar = path.join(tempDir('import-exists-tar'), 'case.tar')
right(await exportCase(refDir, refTar)())

test.before(async () => {
  t = await postgresStore('impexists')
})
test.after(async () => {
  await t.drop()
})

test('the same head: nothing to import; another head: both named, and how to compare', () => {
  assert.is(vba(['store', 'migrate', '--store', t.url]).code, 0)
  const first = vba(['store', 'import', refTar, '--store', t.url])
  assert.is(first.code, 0, first.stderr)
  const caseId = first.stdout.trim()
  const head = vba(['head', refDir]).stdout.trim().split('\n')[0] ?? ''
  const again = vba(['store', 'import', refTar, '--store', t.url])
  assert.is(again.code, 2)
  assert.match(again.stderr, `CASE_EXISTS: the store`)
  assert.match(again.stderr, `already holds case ${caseId} at the same head ${head}: nothing to import`)

  assert.is(vba(['case', 'note', caseId, 'a note after the import', '--store', t.url]).code, 0)
  const diverged = vba(['store', 'import', refTar, '--store', t.url])
  assert.is(diverged.code, 2)
  assert.match(
    diverged.stderr,
    new RegExp(`already holds case ${caseId} at \\d+:sha256:[0-9a-f]{64}, the import is at ${head}`)
  )
  assert.match(diverged.stderr, `vba verify ${caseId} --store URL --expect-head ${head}`)
})

test.run()
