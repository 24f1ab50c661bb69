/** What an operator who reviews and hands on cases is told when a copied case is not as it should be. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  truncateSync,
  statSync,
  writeFileSync
} from 'node:fs'
import * as path from 'node:path'
import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'
import { preparedDemoCase } from '../helpers/prepared-case.js'

const review = suite('vba: a reviewer is told what to do next')

review('export names a stray regular file under objects/sha256 and says to move it out', () => {
  const dir = path.join(tempDir('review'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  assert.is(vba(['case', 'note', dir, 'reviewed']).code, 0)
  writeFileSync(path.join(dir, 'objects', 'sha256', 'notes.txt'), 'the reviewer wrote secret=hunter2')
  const out = path.join(tempDir('review-out'), 'case.tar')
  const r = vba(['export', dir, out])
  assert.is(r.code, 1, r.stderr)
  // It had said "case does not verify: 1 finding(s), first: FOREIGN_FILE", naming nothing.
  assert.match(
    r.stderr,
    /^vba: CASE_CORRUPT: 1 file\(s\) in the case directory do not belong to the case package, and a bag would leave them out: objects\/sha256\/notes\.txt; move them out of the case directory, then export/
  )
  assert.not.match(r.stderr, 'hunter2')
  assert.equal(readdirSync(path.dirname(out)), [], 'nothing written')
})

review('a write to a case locked on another host says how to tell and how to lift it', () => {
  const dir = path.join(tempDir('review'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  // A case directory copied (rsync, cp -a) from the machine where a writer held it.
  writeFileSync(
    path.join(dir, '.vba-lock'),
    JSON.stringify({ pid: 4711, host: 'build-7.example', token: 'x', acquired_at: '2026-01-01T00:00:00.000Z' })
  )
  const r = vba(['case', 'note', dir, 'reviewed'])
  assert.is(r.code, 4, r.stderr)
  // It had said only "case is being written by process 4711 on build-7.example".
  assert.match(r.stderr, 'vba: CASE_LOCKED: case is locked by process 4711 on host build-7.example (another host')
  assert.match(r.stderr, `check the case (vba verify ${dir}), then run: vba case unlock ${dir} --force\n`)
})

review('status of a case locked on another host names the lock, and how to tell and lift it', () => {
  const dir = path.join(tempDir('review'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  // A case directory copied (rsync, cp -a) from the machine where a writer held it.
  writeFileSync(
    path.join(dir, '.vba-lock'),
    JSON.stringify({ pid: 4711, host: 'build-7.example', token: 'x', acquired_at: '2026-01-01T00:00:00.000Z' })
  )
  const r = vba(['status', dir])
  assert.is(r.code, 0, r.stderr)
  // It had said nothing of the lock, which refuses every write.
  assert.match(
    r.stdout,
    `\nlocked by process 4711 on host build-7.example (another host: vba cannot tell whether it runs): every write is refused; once that process has stopped, or if this directory was copied while it wrote, check the case (vba verify ${dir}), then run: vba case unlock ${dir} --force\n`
  )
  // What to run next waits for the lock (it had been suggested as if the case could be written).
  assert.match(r.stdout, /\nnext, once the lock is lifted: vba /)
  assert.not.match(r.stdout, /\nnext: /)
  const j = JSON.parse(vba(['status', dir, '--json']).stdout) as { lock: unknown; state: string }
  assert.is(j.state, 'NOT_STARTED')
  assert.equal(j.lock, {
    state: 'held',
    pid: 4711,
    host: 'build-7.example',
    this_host: false,
    acquired_at: '2026-01-01T00:00:00.000Z',
    reason: null
  })
  // A lock of this host whose process is gone was named already; --json now carries it too.
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  writeFileSync(
    path.join(dir, '.vba-lock'),
    JSON.stringify({ pid: gone, host: hostname(), token: 'x', acquired_at: '2026-01-01T00:00:00.000Z' })
  )
  assert.match(vba(['status', dir]).stdout, `\nlocked by a writer that is gone (owner process ${gone} is not running)`)
  const stale = JSON.parse(vba(['status', dir, '--json']).stdout) as { lock: { state: string; this_host: boolean } }
  assert.is(stale.lock.state, 'stale')
  assert.is(stale.lock.this_host, true)
  rmSync(path.join(dir, '.vba-lock'))
  assert.is((JSON.parse(vba(['status', dir, '--json']).stdout) as { lock: unknown }).lock, null)
  assert.not.match(vba(['status', dir]).stdout, 'locked')
})

review('--expect-head FILE holding a bare receipt says so and how to give it, without quoting the file', () => {
  const tmp = tempDir('review')
  const dir = path.join(tmp, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const note = vba(['case', 'note', dir, 'reviewed'])
  const receipt = /receipt (\d+:sha256:[0-9a-f]{64})/.exec(note.stdout)?.[1]
  assert.ok(receipt, note.stdout)
  const file = path.join(tmp, 'receipt.txt')
  writeFileSync(file, `${receipt}\n`)
  const r = vba(['verify', dir, '--expect-head', file])
  assert.is(r.code, 2, r.stderr)
  // It had said "not a signed head (…): no blank line between the text and the signatures".
  assert.match(
    r.stderr,
    `vba: INVALID_ARGUMENT: --expect-head ${file} holds a bare receipt (SEQ:HASH), not a signed head`
  )
  assert.match(r.stderr, `--expect-head "$(cat ${file})"`)
  assert.not.match(r.stderr, receipt.slice(12))
  assert.is(vba(['verify', dir, '--expect-head', receipt]).code, 0)
})

review('verify --expect-head confirms a receipt the case holds, in text and in the JSON summary', () => {
  const dir = path.join(tempDir('review'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const receipt = /receipt (\d+:sha256:[0-9a-f]{64})/.exec(vba(['case', 'note', dir, 'reviewed']).stdout)?.[1] ?? ''
  const [seq, hash] = [Number(receipt.split(':')[0]), receipt.slice(receipt.indexOf(':') + 1)]
  // It had printed the case's head and VALID, and nothing of the receipt it was asked about.
  const atHead = vba(['verify', dir, '--expect-head', receipt])
  assert.is(atHead.code, 0, atHead.stderr)
  assert.match(atHead.stdout, `\nreceipt ${receipt} matches: the case holds its event at seq ${seq}, its head\n`)
  assert.is(vba(['case', 'note', dir, 'again']).code, 0)
  assert.is(vba(['case', 'note', dir, 'and again']).code, 0)
  const later = vba(['verify', dir, '--expect-head', receipt])
  assert.match(
    later.stdout,
    `\nreceipt ${receipt} matches: the case holds its event at seq ${seq}, and 2 later events extend it (head ${seq + 2})\n`
  )
  const summary = (j: string) =>
    (JSON.parse(j.trim().split('\n').at(-1) ?? '') as { summary: { receipt?: unknown; valid: boolean } }).summary
  assert.equal(summary(vba(['verify', dir, '--expect-head', receipt, '--json']).stdout).receipt, {
    hash,
    matched: true,
    seq
  })
  const ahead = `${seq + 5}:${hash}`
  const cut = vba(['verify', dir, '--expect-head', ahead])
  assert.is(cut.code, 1)
  assert.match(cut.stdout, 'HEAD_ROLLBACK')
  assert.not.match(cut.stdout, 'matches')
  assert.equal(summary(vba(['verify', dir, '--expect-head', ahead, '--json']).stdout).receipt, {
    hash,
    matched: false,
    seq: seq + 5
  })
  assert.not.ok('receipt' in summary(vba(['verify', dir, '--json']).stdout))
  // A bag says the same in its JSON summary as the case does.
  const tar = path.join(tempDir('review-bag'), 'case.tar')
  assert.is(vba(['export', dir, tar]).code, 0)
  const bag = vba(['verify', tar, '--expect-head', receipt, '--json'])
  assert.is(bag.code, 0, bag.stderr)
  assert.equal(summary(bag.stdout).receipt, { hash, matched: true, seq })
})

review('the command a bare receipt file is told to use pastes back for a file name with a space', () => {
  const tmp = tempDir('review')
  const dir = path.join(tmp, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const receipt = /receipt (\d+:sha256:[0-9a-f]{64})/.exec(vba(['case', 'note', dir, 'reviewed']).stdout)?.[1] ?? ''
  const file = path.join(tmp, 'my receipts', 'r 1.txt')
  mkdirSync(path.dirname(file))
  writeFileSync(file, `${receipt}\n`)
  const r = vba(['verify', dir, '--expect-head', file])
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, `--expect-head "$(cat '${file}')"`)
})

review('import into a taken directory names a new one to use, and one under a file says which file', () => {
  const tmp = tempDir('review')
  const dir = path.join(tmp, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const tar = path.join(tmp, 'case.tar')
  assert.is(vba(['export', dir, tar]).code, 0)
  mkdirSync(path.join(tmp, 'case-2'))
  const r = vba(['import', tar, dir])
  assert.is(r.code, 2, r.stderr)
  // It had said only "case exists and is not empty".
  assert.is(
    r.stderr,
    `vba: CASE_EXISTS: ${dir} exists and is not empty; import into a new directory instead (${dir}-3 does not exist), or move the existing one aside first\n`
  )
  assert.is(vba(['import', tar, `${dir}-3`]).code, 0)
  // A file where a directory above DIR is to go: it had said "DIR exists and is not a directory".
  const file = path.join(tmp, 'notes.txt')
  writeFileSync(file, 'x')
  const under = vba(['import', tar, path.join(file, 'sub', 'case')])
  assert.is(under.code, 2, under.stderr)
  assert.is(
    under.stderr,
    `vba: OUTPUT_DIR_MISSING: ${path.join(file, 'sub', 'case')} cannot be created: ${file} is not a directory; give a DIR under a directory (absent ones are created)\n`
  )
  // Absent directories above DIR are created.
  assert.is(vba(['import', tar, path.join(tmp, 'new', 'parent', 'case')]).code, 0)
  // One that cannot be written in is named (root may write anywhere: /proc refuses everyone).
  if (existsSync('/proc/self')) {
    const denied = vba(['import', tar, '/proc/vba-case'])
    assert.is(denied.code, 3, denied.stderr)
    assert.match(
      denied.stderr,
      /^vba: IO_ERROR: cannot create \/proc\/vba-case in \/proc \(E[A-Z]+\); give a DIR in a directory you can write\n$/
    )
    // Deeper, the directory named is the one that refuses, not an absent one below it.
    // (It had never returned: Node's recursive mkdir loops where /proc answers ENOENT.)
    const deep = vba(['import', tar, '/proc/vba-a/b/case'])
    assert.match(deep.stderr, /^vba: IO_ERROR: cannot create \/proc\/vba-a\/b\/case in \/proc \(E[A-Z]+\)/)
    const world = vba(['demo-world', '/proc/vba-w/x'])
    assert.is(world.code, 3, world.stderr)
    assert.match(world.stderr, /^vba: IO_ERROR: write the demo world into \/proc\/vba-w\/x: ENOENT\n$/)
  }
})

review('a case whose log was cut short names the cut as the first finding, and says what lists them all', () => {
  const dir = path.join(tempDir('review'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  assert.is(vba(['case', 'note', dir, 'first']).code, 0)
  assert.is(vba(['case', 'note', dir, 'second']).code, 0)
  const log = path.join(dir, 'events.jsonl')
  truncateSync(log, statSync(log).size - 40)
  const r = vba(['status', dir])
  assert.is(r.code, 1, r.stderr)
  // It had named a consequence first (RULE_COMMAND: the last command left incomplete) and no next step.
  assert.match(r.stderr, /vba: CASE_CORRUPT: case does not verify: \d+ error finding\(s\), first: LOG_TRUNCATED \(/)
  assert.match(r.stderr, 'vba verify lists them all')
  const v = vba(['verify', dir, '--json'])
  const first = v.stdout.split('\n').find((l) => l.startsWith('{"finding"'))
  assert.match(first ?? '', '"code":"LOG_TRUNCATED"')
})

review('export of a case with a line that is not UTF-8 names the first finding verify names', () => {
  const tmp = tempDir('review')
  const dir = path.join(tmp, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  assert.is(vba(['case', 'note', dir, 'first']).code, 0)
  assert.is(vba(['case', 'note', dir, 'second']).code, 0)
  const log = path.join(dir, 'events.jsonl')
  const bytes = readFileSync(log)
  bytes[bytes.indexOf('first')] = 0xff
  writeFileSync(log, bytes)
  const v = vba(['verify', dir, '--json'])
  assert.is(v.code, 1, v.stderr)
  const first = (JSON.parse(v.stdout.split('\n')[0] ?? '') as { finding: { code: string; message: string } }).finding
  assert.is(`${first.code} (${first.message})`, 'EVENT_MALFORMED (line is not valid UTF-8)')
  const out = path.join(tmp, 'case.tar')
  const r = vba(['export', dir, out])
  assert.is(r.code, 1, r.stderr)
  // It had read the line with replacement characters and named EVENT_HASH_MISMATCH (an edited event).
  assert.match(
    r.stderr,
    `vba: CASE_CORRUPT: case does not verify: 1 error finding(s), first: ${first.code} (${first.message});`
  )
  assert.not.ok(existsSync(out))
})

review(
  'a removed enrichment settings object is OBJECT_MISSING, listed first, and no rule calls it forged',
  async () => {
    const { dir } = await preparedDemoCase('', 'review')
    const digest = /"enrichment":\{"digest":"sha256:([0-9a-f]{64})"/.exec(
      readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
    )?.[1]
    assert.ok(digest)
    const file = path.join(dir, 'objects', 'sha256', digest.slice(0, 2), digest.slice(2))
    assert.ok(existsSync(file))
    rmSync(file)
    const v = vba(['verify', dir, '--json'])
    assert.is(v.code, 1, v.stderr)
    const codes = v.stdout
      .split('\n')
      .filter((l) => l.startsWith('{"finding"'))
      .map((l) => (JSON.parse(l) as { finding: { code: string; message: string } }).finding)
    assert.is(codes[0]?.code, 'OBJECT_MISSING', JSON.stringify(codes))
    // It had also said "the recorded enrichment settings are not enrichment settings" (RULE_REVISION).
    assert.not.ok(
      codes.some((f) => f.message.includes('not enrichment settings')),
      JSON.stringify(codes)
    )
  }
)

review('verify of an archive that is not there says ARCHIVE_NOT_FOUND, as import does', () => {
  const tmp = tempDir('review')
  const r = vba(['verify', path.join(tmp, 'gone.tar')])
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, `vba: ARCHIVE_NOT_FOUND: ${path.join(tmp, 'gone.tar')} does not exist`)
})

review('report --out x.pdf is refused (an HTML page under a PDF name), and says how to get a PDF', () => {
  const tmp = tempDir('review')
  const dir = path.join(tmp, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const out = path.join(tmp, 'out')
  const r = vba(['report', dir, '--out', path.join(out, 'case.PDF')])
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, 'vba: INVALID_ARGUMENT: vba report writes one HTML page, not a pdf file: name it FILE.html')
  assert.match(r.stderr, '--print-to-pdf')
  assert.not.ok(existsSync(out))
})

review('an empty name where a directory, a file or a case goes is refused, never read as the current directory', () => {
  const tmp = tempDir('review')
  for (const args of [
    ['case', 'init', ''],
    ['verify', ''],
    ['status', ''],
    ['export', '', path.join(tmp, 'x.tar')],
    ['import', path.join(tmp, 'x.tar'), ''],
    ['report', '', '--out', path.join(tmp, 'r.html')]
  ]) {
    const r = vba(args)
    assert.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`)
    // case init '' had said " exists and is not empty", of the current directory.
    assert.match(
      r.stderr,
      /^vba: INVALID_ARGUMENT: the \w+ argument of vba [a-z ]+ is empty \(an unset shell variable\?\)/
    )
  }
  assert.equal(readdirSync(tmp), [])
})

review.run()
