/**
 * The fleet verbs through the real binary, on PostgreSQL and a private MariaDB: store migrate and
 * import, every case verb with --store (and VBA_STORE), export from a store byte-identical to the
 * directory's, queue list/claim/release, vba work, and the errors a user can cause (no store, a
 * wrong password, an unmigrated store), none of which shows a password.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { createHash } from 'node:crypto'
import { exportCase } from '../../src/fp.js'
import { shownStoreUrl } from '../../src/cli/stores.js'
import { shellWord } from '../../src/cli/next-step.js'
import { startServe, vba } from '../helpers/cli.js'
import { right, tempDir } from '../helpers/fs.js'
import { writeInvestigation, writeShortModel, writeWorld } from '../helpers/investigation.js'
import { mariadbServer, postgresStore, STORE_PASSWORD_ENV, type TestStore } from '../helpers/stores.js'

const maria = await mariadbServer()
const made: TestStore[] = []
const sha = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex')

const world = tempDir('cli-store-world')
const refDir = path.join(tempDir('cli-store-ref'), 'case')
await writeInvestigation(refDir, world)
const refTar = path.join(tempDir('cli-store-tar'), 'case.tar')
right(await exportCase(refDir, refTar)())
const profile = writeWorld(tempDir('cli-store-world2'))
const model = path.join(tempDir('cli-store-model'), 'model.sh')
writeShortModel(model)

for (const kind of ['postgres', 'mariadb'] as const) {
  const test = suite(`vba with --store on ${kind}`)
  let t: TestStore
  const env = (): Record<string, string> => ({ ...t.environment })

  test.before(async () => {
    t = kind === 'postgres' ? await postgresStore('cli') : await maria.store('cli')
    made.push(t)
  })

  test("migrate, import, and every case verb on the imported case; export is byte-identical to the directory's", async () => {
    const before = vba(['case', 'note', 'case-investigation', 'x', '--store', t.url], { env: env() })
    assert.is(before.code, 2, before.stderr)
    assert.match(before.stderr, 'STORE_SCHEMA_OUTDATED')
    const m = vba(['store', 'migrate', '--store', t.url], { env: env() })
    assert.is(m.code, 0, m.stderr)
    assert.match(m.stdout, 'applied 0001_case_store')
    assert.match(
      vba(['store', 'migrate', '--store', t.url], { env: env() }).stdout,
      'the store is at the latest schema'
    )
    const imp = vba(['store', 'import', refTar, '--store', t.url], { env: env() })
    assert.is(imp.code, 0, imp.stderr)
    assert.is(imp.stdout.trim(), 'case-investigation')
    const again = vba(['store', 'import', refDir, '--store', t.url], { env: env() })
    assert.is(again.code, 2)
    assert.match(again.stderr, 'CASE_EXISTS')
    const v = vba(['verify', 'case-investigation', '--store', t.url], { env: env() })
    assert.is(v.code, 0, v.stderr + v.stdout)
    assert.is(v.stdout, vba(['verify', refDir]).stdout)
    assert.is(
      vba(['replay', 'case-investigation', '--json'], { env: { ...env(), VBA_STORE: t.url } }).stdout,
      vba(['replay', refDir, '--json']).stdout
    )
    // The same status, but for the name of the case in the commands it says to run next: its id and the store.
    const inStore = vba(['status', 'case-investigation', '--store', t.url], { env: env() }).stdout
    assert.match(
      inStore,
      `next: vba report case-investigation --store ${shellWord(shownStoreUrl(t.url))} --out report.html`
    )
    assert.is(
      inStore,
      vba(['status', refDir]).stdout.replaceAll(refDir, `case-investigation --store ${shellWord(shownStoreUrl(t.url))}`)
    )
    assert.is(
      vba(['show', 'case-investigation', '--json', '--store', t.url], { env: env() }).stdout,
      vba(['show', refDir, '--json']).stdout
    )
    const out = path.join(tempDir('cli-store-out'), 'case.tar')
    const ex = vba(['export', 'case-investigation', out, '--store', t.url], { env: env() })
    assert.is(ex.code, 0, ex.stderr)
    assert.is(sha(out), sha(refTar))
    const htmlStore = path.join(tempDir('cli-store-report'), 'store.html')
    const htmlDir = path.join(tempDir('cli-store-report'), 'dir.html')
    assert.is(vba(['report', 'case-investigation', '--out', htmlStore, '--store', t.url], { env: env() }).code, 0)
    assert.is(vba(['report', refDir, '--out', htmlDir]).code, 0)
    assert.ok(
      readFileSync(htmlStore).equals(readFileSync(htmlDir)),
      'the report of a case is the same from either store'
    )
    const note = vba(['case', 'note', 'case-investigation', 'reviewed by the night shift', '--store', t.url], {
      env: env()
    })
    assert.is(note.code, 0, note.stderr)
    assert.match(note.stdout, /recorded: generation 26; receipt 26:sha256:[0-9a-f]{64}/)
    const receipt = /receipt (\S+)/.exec(note.stdout)?.[1] as string
    assert.is(vba(['verify', 'case-investigation', '--store', t.url, '--expect-head', receipt], { env: env() }).code, 0)
  })

  test('vba serve --store: the listing and each report over HTTP, read-only', async () => {
    const { child, base } = await startServe(['--store', t.url], env())
    try {
      const index = await fetch(base)
      assert.is(index.status, 200)
      assert.match(index.headers.get('content-security-policy') ?? '', "default-src 'none'")
      const listing = await index.text()
      assert.match(listing, 'href="/case/case-investigation"')
      const secret = t.environment[STORE_PASSWORD_ENV]
      if (secret !== undefined) assert.not.match(listing, secret)
      const page = await (await fetch(`${base}case/case-investigation`)).text()
      assert.match(page, 'The SmartAI despawn on spell hit races the item reward')
      assert.is((await fetch(`${base}case/case-none`)).status, 404)
      assert.is((await fetch(base, { method: 'DELETE' })).status, 405)
    } finally {
      child.kill('SIGTERM')
    }
  })

  test('case init, prepare, queue list, claim, release, and vba work until idle', async () => {
    const init = vba(['case', 'init', 'case-cli', '--title', 'from the CLI', '--store', t.url], { env: env() })
    assert.is(init.code, 0, init.stderr)
    const input = path.join(tempDir('cli-store-input'), 'report.json')
    writeFileSync(
      input,
      JSON.stringify({ report: 'Quest 11117 cannot be completed.', entities: [{ type: 'quest', id: 11117 }] })
    )
    const prep = vba(['case', 'prepare', 'case-cli', '--config', profile, '--input', input, '--store', t.url], {
      env: env()
    })
    assert.is(prep.code, 0, prep.stderr)
    const list = vba(['queue', 'list', '--store', t.url], { env: env() })
    assert.is(list.code, 0, list.stderr)
    assert.match(list.stdout, /runnable\s+case-cli\s+NOT_STARTED, revision 1.*prepared, not started/)
    assert.match(list.stdout, /waiting\s+case-investigation\s+CONCLUDED.*concluded/)
    const claim = vba(['queue', 'claim', '--store', t.url, '--worker', 'ops-1', '--lease-ms', '60000', '--json'], {
      env: env()
    })
    assert.is(claim.code, 0, claim.stderr)
    assert.is((JSON.parse(claim.stdout) as { claimed: { case_id: string } }).claimed.case_id, 'case-cli')
    assert.is(
      vba(['queue', 'claim', '--store', t.url, '--worker', 'ops-2'], { env: env() }).code,
      5,
      'nothing else is runnable'
    )
    const busy = vba(['investigate', 'case-cli', '--config', profile, '--model-command', model, '--store', t.url], {
      env: env()
    })
    assert.is(busy.code, 4)
    assert.match(busy.stderr, /CASE_LEASED: case case-cli is being worked on by ops-1/)
    const wrong = vba(['queue', 'release', 'case-cli', '--worker', 'ops-2', '--store', t.url], { env: env() })
    assert.is(wrong.code, 2)
    assert.match(wrong.stderr, 'CASE_NOT_LEASED')
    assert.is(vba(['queue', 'release', 'case-cli', '--worker', 'ops-1', '--store', t.url], { env: env() }).code, 0)
    const w = vba(
      [
        'work',
        '--config',
        profile,
        '--model-command',
        model,
        '--worker',
        'cli-worker',
        '--until-idle',
        '--store',
        t.url
      ],
      { env: env() }
    )
    assert.is(w.code, 0, w.stderr)
    assert.match(w.stdout, 'cli-worker: claimed case-cli')
    assert.match(w.stdout, /1 claim\(s\), 1 advanced, .*0 failed; nothing left to do/)
    const lines = vba(['queue', 'list', '--json', '--store', t.url], { env: env() })
      .stdout.trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { case_id: string; state: string; runnable: boolean; page?: unknown })
    const last = lines[lines.length - 1] as unknown as {
      page: { next: unknown; counts: { total: number; runnable: number } }
    }
    assert.equal([last.page.next, last.page.counts.total, last.page.counts.runnable], [null, 2, 0])
    const json = lines.slice(0, -1)
    assert.equal(
      json.map((e) => e.runnable),
      [false, false]
    )
    assert.ok(
      json.some((e) => e.case_id === 'case-cli' && e.state !== 'NOT_STARTED'),
      JSON.stringify(json)
    )
  })

  test('errors a user can cause: no store, a wrong password, gc on a store; no password in any output', async () => {
    const none = vba(['queue', 'claim', '--worker', 'w'], { env: { VBA_STORE: '' } })
    assert.is(none.code, 2)
    assert.match(none.stderr, 'name the store')
    const bad = vba(['queue', 'list', '--store', 'ftp://x/y'])
    assert.is(bad.code, 2)
    assert.match(bad.stderr, 'STORE_INVALID')
    if (kind === 'mariadb') {
      const secret = 'wrong-secret-123'
      const wrong = vba(['queue', 'list', '--store', t.url], { env: { [STORE_PASSWORD_ENV]: secret } })
      assert.is(wrong.code, 3)
      assert.match(wrong.stderr, 'STORE_UNAVAILABLE: the store refused the credentials')
      assert.not.match(wrong.stderr + wrong.stdout, secret)
      const inline = vba([
        'queue',
        'list',
        '--store',
        t.url.replace('vba_store@', `vba_store:${secret}@`).replace(/\?password_env=.*$/, '')
      ])
      assert.not.match(inline.stderr + inline.stdout, secret)
      const missing = vba(['queue', 'list', '--store', t.url], { env: { [STORE_PASSWORD_ENV]: '' } })
      assert.is.not(missing.code, 0)
    } else {
      const down = vba(['queue', 'list', '--store', 'postgres://postgres@127.0.0.1:1/nothing'])
      assert.is(down.code, 3)
      assert.match(down.stderr, 'STORE_UNAVAILABLE')
      const nodb = vba(['queue', 'list', '--store', 'postgres://postgres@127.0.0.1:5432/vba_no_such_db'])
      assert.is(nodb.code, 3)
      assert.match(nodb.stderr, 'does not exist')
    }
    const missingCase = vba(['status', 'case-none', '--store', t.url], { env: env() })
    assert.is(missingCase.code, 2)
    assert.match(missingCase.stderr, 'CASE_NOT_FOUND')
  })

  if (kind === 'mariadb') {
    test.after(async () => {
      for (const x of made) await x.drop().catch(() => undefined)
      await maria.stop()
    })
  }
  test.run()
}

const dirs = suite('vba queue list ROOT')
dirs('lists a folder of case directories with the same reasons', async () => {
  const root = tempDir('cli-queue-root')
  const { cpSync } = await import('node:fs')
  cpSync(refDir, path.join(root, 'concluded'), { recursive: true })
  const init = vba(['case', 'init', path.join(root, 'fresh')])
  assert.is(init.code, 0)
  const r = vba(['queue', 'list', root])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, /waiting\s+\S+concluded\s+CONCLUDED.*: concluded/)
  assert.match(r.stdout, /waiting\s+\S+fresh\s+NOT_STARTED, revision 0.*prepare the case first/)
  assert.match(r.stdout, '0 runnable, 2 case(s) (NOT_STARTED 1, CONCLUDED 1); 2 shown')
  // A page of one names the command for the next; that one lists the other case and is the last.
  const first = vba(['queue', 'list', root, '--limit', '1'])
  assert.is(first.code, 0, first.stderr)
  assert.match(first.stdout, /concluded\s+CONCLUDED/)
  assert.not.match(first.stdout, 'fresh')
  const next = /^next page: vba queue list (\S+) --limit 1 --after concluded$/m.exec(first.stdout)
  assert.ok(next !== null, first.stdout)
  const second = vba(['queue', 'list', root, '--limit', '1', '--after', 'concluded'])
  assert.match(second.stdout, /fresh\s+NOT_STARTED/)
  assert.not.match(second.stdout, 'next page')
  const bad = vba(['queue', 'list', root, '--state', 'DONE'])
  assert.is(bad.code, 2)
  assert.match(bad.stderr, 'INVALID_ARGUMENT: --state takes one of')
})
dirs.run()
