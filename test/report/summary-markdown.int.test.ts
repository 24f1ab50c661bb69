/**
 * The way back to the tracker (issue 30): `vba case summary CASE --markdown` of a concluded case
 * (the scripted investigation of the demo world) with the profile's web view: the conclusion, the
 * hypotheses, every cited source window as a permalink at the pinned commit, the budget and the
 * verification in words; the HTML report links the same windows. A forged case says it does not verify.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { forger } from '../../src/testing.js'
import { runScriptedInvestigation } from '../../scripts/lib/scripted-investigation.js'
import { permalink, sourceWindows } from '../../src/projections/report/permalinks.js'
import { vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const world = await writeDemoWorld(path.join(tempDir('summary-world'), 'world'))
const dir = path.join(tempDir('summary-case'), 'case')
const run = await runScriptedInvestigation(world.profile, dir)
const WEB = 'https://github.com/example/demo-core/blob/{commit}/{path}#L{start}-L{end}'
const profile = path.join(world.dir, 'web.toml')
writeFileSync(
  profile,
  readFileSync(world.profile, 'utf8').replace(/^commit = (.*)$/m, `commit = $1\nweb_view = ${JSON.stringify(WEB)}`)
)

const summary = suite('the summary for the tracker')

summary('a concluded case: conclusion, hypotheses, permalinks with their lines, budget, verification', () => {
  assert.is(run.state, 'CONCLUDED')
  const r = vba(['case', 'summary', dir, '--markdown', '--config', profile])
  assert.is(r.code, 0, r.stderr)
  const text = r.stdout
  assert.match(text, /^### vba investigation: Quest 11117: netted wolpertingers vanish$/m)
  assert.match(text, /^\*\*Conclusion\*\* \(turn \d+\): .+$/m)
  assert.match(text, /^- H1 \((supported|open)\): .+ \(evidence E\d+/m)
  const links = [...text.matchAll(/^- (E\d+): \[(\S+) L(\d+)-L(\d+)\]\((\S+)\) at `([0-9a-f]{12})`$/gm)]
  assert.ok(links.length > 0, text)
  for (const [, , file, start, end, url, commit] of links) {
    assert.ok(world.commit.startsWith(commit ?? '-'), 'at the pinned commit')
    assert.is(
      url,
      permalink(WEB, { commit: world.commit, path: file ?? '', start: Number(start), end: Number(end) }),
      'the template filled in'
    )
    assert.ok(Number(start) <= Number(end))
  }
  assert.match(
    text,
    /^\*\*Budget\*\*: \d+ of \d+ unit\(s\) spent on \d+ piece\(s\) of evidence; \d+ model token\(s\)\.$/m
  )
  assert.match(text, '**Verification**: case `case-working-memory` verified: the hash chain is intact')
  // without a web view: the windows as paths and lines
  const plain = vba(['case', 'summary', dir, '--markdown'])
  assert.is(plain.code, 0, plain.stderr)
  assert.match(plain.stdout, /^- E\d+: `src\/\S+ L\d+-L\d+` at `[0-9a-f]{12}`$/m)
  assert.not.match(plain.stdout, 'https://')
  // the HTML report links the windows of the evidence
  const out = path.join(tempDir('summary-report'), 'r.html')
  const page = vba(['report', dir, '--out', out, '--config', profile])
  assert.is(page.code, 0, page.stderr)
  const html = readFileSync(out, 'utf8')
  assert.ok(html.includes(`href="${links[0]?.[5]?.replaceAll('&', '&amp;') ?? '-'}"`), 'the permalink in the report')
})

summary(
  'the windows of a capture: a read, the blocks of a context answer, search hits; never of a database answer',
  () => {
    const git = { type: 'git' as const, url: 'u', commit: 'c'.repeat(40), tree: 't', path_prefix: '' }
    const base = { format: 'vba-capture', version: 1, request: {}, settings: {}, origin: git }
    const windows = (kind: string, result: Record<string, unknown>) =>
      sourceWindows({ ...base, kind, result } as unknown as Parameters<typeof sourceWindows>[0]).map(
        (w) => `${w.path}:${w.start}-${w.end}`
      )
    assert.equal(windows('source.read', { path: 'a.cpp', lines: [{ line: 3 }, { line: 4 }, { line: 9 }] }), [
      'a.cpp:3-9'
    ])
    assert.equal(
      windows('source.context', {
        blocks: [
          { path: 'b.cpp', start_line: 10, lines: ['x', 'y'] },
          { path: 'c.cpp', start_line: 1, lines: ['z'] }
        ],
        hits: [{ path: 'b.cpp', line: 11 }]
      }),
      ['b.cpp:10-11', 'c.cpp:1-1']
    )
    assert.equal(
      windows('source.search', {
        hits: [
          { path: 'd.h', line: 5 },
          { path: 'd.h', line: 5 }
        ]
      }),
      ['d.h:5-5']
    )
    // A path git never records (a forged capture's) gets no window: its permalink would leave the repository.
    assert.equal(
      windows('source.search', {
        hits: ['../../other/repo/blob/x.cpp', '/etc/passwd', 'a//b.h', './c.h', 'ok/e.h'].map((p) => ({
          path: p,
          line: 2
        }))
      }),
      ['ok/e.h:2-2']
    )
    assert.equal(
      sourceWindows({
        ...base,
        kind: 'database.rows',
        origin: { type: 'database', client: 'mysql2', database: 'world', snapshot_id: 's' },
        result: { rows: [] }
      } as unknown as Parameters<typeof sourceWindows>[0]),
      []
    )
  }
)

summary(
  'text and paths of a hostile case stay text in the Markdown: no link, code span or HTML of their own, invisible characters as codes',
  () => {
    const hostile = path.join(tempDir('summary-hostile'), 'case')
    cpSync(dir, hostile, { recursive: true })
    const f = forger(hostile)
    const events = f.envelopes()
    const conclusion = events.find((e) => e.type === 'ConclusionRecorded')
    const cited = (conclusion?.data as { evidence: string[] }).evidence[0]
    const captured = events.find(
      (e) => e.type === 'CaptureRecorded' && (e.data as { evidence_id: string }).evidence_id === cited
    )
    assert.ok(conclusion !== undefined && captured !== undefined, 'a concluded case citing a capture')
    const ref = (captured.data as { capture: { digest: string; media_type: string } }).capture
    const hex = ref.digest.slice('sha256:'.length)
    const capture = JSON.parse(
      readFileSync(path.join(hostile, 'objects', 'sha256', hex.slice(0, 2), hex.slice(2)), 'utf8')
    )
    // A file name git allows: brackets, parentheses, backticks, HTML, a bidi override.
    const evil = 'src/x](https:evil.example) `y` <img src=x>\u202E.cpp'
    const repath = (u: unknown): unknown =>
      Array.isArray(u)
        ? u.map(repath)
        : typeof u === 'object' && u !== null
          ? Object.fromEntries(Object.entries(u).map(([k, v]) => [k, k === 'path' ? evil : repath(v)]))
          : u
    const forged = f.object(
      new TextEncoder().encode(JSON.stringify({ ...capture, result: repath(capture.result) })),
      ref.media_type
    )
    f.rewrite(captured.seq, (d) => ({ ...(d as Record<string, unknown>), capture: forged }))
    f.rewrite(conclusion.seq, (d) => ({
      ...(d as Record<string, unknown>),
      summary: 'Reversed \u202Etxt.exe here &rlm;gnp.exe.'
    }))
    const linked = vba(['case', 'summary', hostile, '--markdown', '--config', profile])
    assert.is(linked.code, 0, linked.stderr)
    assert.match(
      linked.stdout,
      // An entity (&rlm; is U+200F) stays text too: the tracker's renderer would make it the character.
      'Reversed <U+202E>txt.exe here &rlm;gnp.exe.'.replace(/[<>&]/g, (c) => `\\${c}`)
    )
    assert.not.ok(linked.stdout.includes('\u202E'), 'no bidi override reaches the tracker')
    const line = linked.stdout.split('\n').find((l) => l.startsWith(`- ${cited}: [`)) ?? ''
    const text = 'src/x\\](https:evil.example) \\`y\\` \\<img src=x\\><U+202E>.cpp'.replace(/<U\+202E>/, '\\<U+202E\\>')
    assert.ok(line.startsWith(`- ${cited}: [${text} L`), line)
    const url = /\]\((\S+)\) at `[0-9a-f]{12}`$/.exec(line)?.[1] ?? ''
    assert.ok(url.startsWith('https://github.com/example/demo-core/blob/'), line)
    assert.not.match(url, /[()\s]/, 'the link ends where the permalink ends')
    const plain = vba(['case', 'summary', hostile, '--markdown'])
    assert.is(plain.code, 0, plain.stderr)
    const code = plain.stdout.split('\n').find((l) => l.startsWith(`- ${cited}: `)) ?? ''
    assert.ok(code.startsWith(`- ${cited}: \`\`src/x](https:evil.example) \`y\` <img src=x><U+202E>.cpp L`), code)
    assert.ok(/ L\d+(-L\d+)?`` at `[0-9a-f]{12}`$/.test(code), code)
  }
)

summary('a forged case says it does not verify', () => {
  const lines = readFileSync(path.join(dir, 'events.jsonl'), 'utf8').split('\n')
  const at = lines.findIndex((l) => l.includes('"ConclusionRecorded"'))
  forger(dir).rewrite(at + 1, (d) => ({ ...(d as Record<string, unknown>), summary: 'A forged conclusion.' }))
  const r = vba(['case', 'summary', dir, '--markdown'])
  assert.is(r.code, 0, r.stderr)
  assert.match(r.stdout, /\*\*Verification\*\*: case `case-working-memory` does NOT verify: \d+ error finding\(s\)/)
})

summary.run()
