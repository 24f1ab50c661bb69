/**
 * `vba serve` against hostile requests and hostile case folders (issue 23, point 8): the Host
 * header must name the server (DNS rebinding), a malformed URL is a coded 400, nothing of the
 * request is echoed, `--port` is a decimal number, two directories with one case id are two rows
 * with their own reports, each case is read once per change and in bounded time, and the first
 * SIGTERM stops the server even while a case in the folder is a FIFO.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { request } from 'node:http'
import * as path from 'node:path'
import { directoryQueue } from '../../src/adapters/case-store/directory-queue.js'
import { openCase } from '../../src/adapters/case-store/directory-store.js'
import { recordNote } from '../../src/fp.js'
import { sampleCase } from '../helpers/case.js'
import { startServe, vba } from '../helpers/cli.js'
import { right, tempDir } from '../helpers/fs.js'

/** A GET with any Host header (fetch would not send a forged one). */
const get = (base: string, pathname: string, host?: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const u = new URL(base)
    const req = request(
      { host: u.hostname, port: u.port, path: pathname, method: 'GET', headers: host === undefined ? {} : { host } },
      (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (d: string) => {
          body += d
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      }
    )
    req.on('error', reject)
    req.end()
  })

/** A root with two copies of the sample case (same case id) that differ by one note. */
const twinRoot = async (): Promise<string> => {
  const h = await sampleCase()
  const root = tempDir('serve-twins')
  cpSync(h.dir, path.join(root, 'first'), { recursive: true })
  cpSync(h.dir, path.join(root, 'second'), { recursive: true })
  right(await recordNote(path.join(root, 'second'), { text: 'only in the second directory' })())
  return root
}

const test = suite('vba serve, hostile requests (point 8)')

test('a Host header that does not name the server is refused (421); the bound address and localhost are served', async () => {
  const root = await twinRoot()
  const { child, base } = await startServe([root])
  try {
    const port = new URL(base).port
    for (const host of [
      `evil.example:${port}`,
      `127.0.0.1.evil.example:${port}`,
      `localhost:${Number(port) + 1}`,
      'localhost'
    ]) {
      const r = await get(base, '/', host)
      assert.is(r.status, 421, `Host: ${host}`)
      assert.not.match(r.body, 'first', 'no listing for a foreign host')
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`])
      assert.is((await get(base, '/', host)).status, 200, `Host: ${host}`)
  } finally {
    child.kill('SIGTERM')
  }
})

test('a malformed URL is a coded 400; nothing from the request is echoed into a page', async () => {
  const root = await twinRoot()
  const { child, base } = await startServe([root])
  try {
    const bad = await get(base, '/case/%E0%A4%A')
    assert.is(bad.status, 400)
    assert.match(bad.body, 'INVALID_ARGUMENT')
    for (const p of ['/case/%00%3Cscript%3E', '/nothing%00here']) {
      const r = await get(base, p)
      assert.is(r.status, 404)
      assert.not.ok(r.body.includes('\u0000'), 'no NUL in the page')
      assert.not.match(r.body, 'script')
    }
  } finally {
    child.kill('SIGTERM')
  }
})

test('the listing repeats no parameter it was given: a bad state and a page key stay out of the page', async () => {
  const root = await twinRoot()
  const { child, base } = await startServe([root])
  try {
    const spoof = 'Your cases moved: see evil.example'
    const bad = await get(base, `/?state=${encodeURIComponent(spoof)}`)
    assert.is(bad.status, 400)
    assert.match(bad.body, 'INVALID_ARGUMENT')
    assert.match(bad.body, 'state: one or more of NOT_STARTED')
    assert.not.match(bad.body, 'evil.example')
    const later = await get(base, `/?limit=1&after=${encodeURIComponent(spoof)}`)
    assert.is(later.status, 200)
    assert.not.match(later.body, 'evil.example')
    assert.match(later.body, 'on a later page (<a href="/?limit=1">first page</a>)')
  } finally {
    child.kill('SIGTERM')
  }
})

test('--port takes decimal digits 0-65535 only', () => {
  const root = tempDir('serve-port')
  for (const port of ['0x50', '1e3', '65536', '-1', '8080.0', ' 80']) {
    const r = vba(['serve', root, '--port', port])
    assert.is(r.code, 2, `--port ${JSON.stringify(port)}: ${r.stderr}`)
    assert.match(r.stderr, 'INVALID_ARGUMENT')
  }
})

test('two directories with the same case id are two rows, each linking to its own report', async () => {
  const root = await twinRoot()
  const { child, base } = await startServe([root])
  try {
    const listing = (await get(base, '/')).body
    assert.match(listing, 'href="/case/first"')
    assert.match(listing, 'href="/case/second"')
    const first = await get(base, '/case/first')
    const second = await get(base, '/case/second')
    assert.is(first.status, 200)
    assert.is(second.status, 200)
    assert.not.match(first.body, 'only in the second directory')
    assert.match(second.body, 'only in the second directory')
  } finally {
    child.kill('SIGTERM')
  }
})

test('the first SIGTERM stops the server, also with a FIFO in the folder; the FIFO case is listed as unreadable', async () => {
  const root = await twinRoot()
  rmSync(path.join(root, 'second', 'events.jsonl'))
  execFileSync('mkfifo', [path.join(root, 'second', 'events.jsonl')])
  const { child, base } = await startServe([root])
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal }))
  )
  const listing = await get(base, '/')
  assert.is(listing.status, 200)
  assert.match(listing.body, 'CASE_CORRUPT')
  assert.is((await get(base, '/case/first')).status, 200)
  // One SIGTERM and nothing else: the server ends by itself (a server that ignored it would hang the
  // file until the runner kills it, a failure).
  child.kill('SIGTERM')
  const { code, signal } = await exited
  assert.is(signal, null, 'it handled the SIGTERM (not ended by it)')
  assert.is(code, 0, 'exited after the first SIGTERM')
})

test('the listing pages: the counts of every case, a next link while more follow, a state filter; a bad state is a coded 400', async () => {
  const root = await twinRoot()
  cpSync(path.join(root, 'first'), path.join(root, 'third'), { recursive: true })
  const { child, base } = await startServe([root])
  try {
    const one = await get(base, '/?limit=2')
    assert.is(one.status, 200)
    assert.is((one.body.match(/<tr><td>/g) ?? []).length, 2)
    assert.match(one.body, '3 case(s)')
    assert.match(one.body, '<a rel="next" href="/?limit=2&amp;after=second">next page</a>')
    assert.not.match(one.body, 'third')
    const two = await get(base, '/?limit=2&after=second')
    assert.is((two.body.match(/<tr><td>/g) ?? []).length, 1)
    assert.match(two.body, '(third)')
    assert.match(two.body, 'the last page')
    const state = await get(base, '/?state=CONCLUDED')
    assert.is((state.body.match(/<tr><td>/g) ?? []).length, 0, 'the sample case is not concluded')
    assert.match(state.body, '0 shown in CONCLUDED')
    const bad = await get(base, '/?state=%3Cscript%3E')
    assert.is(bad.status, 400)
    assert.match(bad.body, 'INVALID_ARGUMENT')
    assert.not.match(bad.body, '<script>')
  } finally {
    child.kill('SIGTERM')
  }
})

test.run()

// ---------------------------------------------------------------------------------------------
const cache = suite('each case is read once per change, in bounded time (point 8)')

cache('a second listing reads no case; an append makes exactly that case read again', async () => {
  const root = await twinRoot()
  let opens = 0
  const counting: typeof openCase = (dir) => {
    opens++
    return openCase(dir)
  }
  const q = directoryQueue(root, { open: counting })
  const first = await q.list()
  assert.is(first.length, 2)
  assert.is(opens, 2)
  await q.list()
  await q.list()
  assert.is(opens, 2, 'nothing read again while nothing changed')
  right(await recordNote(path.join(root, 'first'), { text: 'a change' })())
  const after = await q.list()
  assert.is(opens, 3, 'only the changed case was read again')
  assert.is(after.find((e) => e.dir?.endsWith('first') === true)?.generation, 5)
})

cache('a case that does not answer in time is listed as not read, and the listing still comes', async () => {
  const root = await twinRoot()
  mkdirSync(path.join(root, 'zz-empty'))
  const hanging: typeof openCase = (dir) => (dir.endsWith('second') ? new Promise(() => undefined) : openCase(dir))
  const rows = await directoryQueue(root, { open: hanging, caseTimeoutMs: 200 }).list()
  assert.is(rows.length, 2)
  assert.match(rows.find((e) => e.dir?.endsWith('second') === true)?.why ?? '', 'took longer than 0.2 s')
  assert.is(rows.find((e) => e.dir?.endsWith('first') === true)?.generation, 4)
})

cache(
  'with summaries, a first listing reads no log; a stale summary is not used, a forged one is caught when the case is opened',
  async () => {
    const root = await twinRoot()
    let opens = 0
    const counting: typeof openCase = (dir) => {
      opens++
      return openCase(dir)
    }
    const first = path.join(root, 'first')
    const stale = readFileSync(path.join(first, '.vba-summary'))
    const rows = await directoryQueue(root, { open: counting, summaries: true }).list()
    assert.is(opens, 0, 'both cases listed from their summaries')
    assert.equal(
      rows.map((e) => [e.case_id, e.generation, e.state]),
      [
        ['case-sample', 4, 'NOT_STARTED'],
        ['case-sample', 5, 'NOT_STARTED']
      ]
    )
    // A summary of an older head (written back after an append) is not used: the log is read.
    right(await recordNote(first, { text: 'a change' })())
    writeFileSync(path.join(first, '.vba-summary'), stale)
    const q = directoryQueue(root, { open: counting, summaries: true })
    assert.is((await q.list()).find((e) => e.dir === first)?.generation, 5)
    assert.is(opens, 1, 'the case with a stale summary was read from its log')
    // A forged summary naming HEAD's head is listed until the case is opened; then the log says.
    const second = path.join(root, 'second')
    const forged = JSON.parse(readFileSync(path.join(second, '.vba-summary'), 'utf8')) as { row: { state: string } }
    forged.row.state = 'CONCLUDED'
    writeFileSync(path.join(second, '.vba-summary'), `${JSON.stringify(sortKeys(forged))}\n`)
    const forgedQueue = directoryQueue(root, { open: counting, summaries: true })
    assert.is((await forgedQueue.list()).find((e) => e.dir === second)?.state, 'CONCLUDED')
    await forgedQueue.check(second)
    const checked = (await forgedQueue.list()).find((e) => e.dir === second)
    assert.is(checked?.state, 'NOT_STARTED')
    assert.is(checked?.runnable, false)
    assert.match(checked?.why ?? '', 'SUMMARY_MISMATCH')
    // verify does not count the summary as part of the package.
    const v = vba(['verify', second, '--json'])
    assert.is(v.code, 0, v.stderr)
  }
)

cache.run()

/** A JSON value with its object members in code-point order (canonical, as the summary is written). */
const sortKeys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v !== null && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])])
        )
      : v
