/**
 * Text input that is not UTF-8 (issue 23, point 12): an argument, a query file, a report file or a
 * profile holding bytes that are not UTF-8 is refused with INPUT_NOT_UTF8 (exit 2) instead of
 * silently becoming U+FFFD; a U+FFFD that was really typed is text like any other.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba, VBA_BIN } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

const MAIN = VBA_BIN

/** `vba` with raw argument bytes (bash's $'\xff' quoting), which child_process cannot pass. */
const vbaRaw = (args: string): { code: number | null; stdout: string; stderr: string } => {
  const r = spawnSync('bash', ['-c', `exec "${process.execPath}" "${MAIN}" ${args}`], { encoding: 'utf8' })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

const test = suite('input that is not UTF-8')

test('an argument that is not UTF-8 is refused before anything is done; a typed U+FFFD is accepted', () => {
  const dir = path.join(tempDir('utf8'), 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const log = (): string => readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
  const r = vbaRaw(`case note '${dir}' $'caf\\xe9 au lait'`)
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, /^vba: INPUT_NOT_UTF8: argument 4 is not valid UTF-8/)
  assert.is(log(), '', 'nothing recorded')
  const d = vbaRaw(`case init $'${path.join(tempDir('utf8'), 'ca')}\\xffse'`)
  assert.is(d.code, 2)
  const ok = vba(['case', 'note', dir, 'replacement \ufffd typed on purpose'])
  assert.is(ok.code, 0, ok.stderr)
  assert.match(log(), 'replacement \ufffd typed on purpose')
})

test('a query file, a report file and a profile that are not UTF-8 are INPUT_NOT_UTF8', async () => {
  const root = tempDir('utf8-files')
  const world = await writeDemoWorld(path.join(root, 'world'))
  const query = path.join(root, 'q.json')
  writeFileSync(
    query,
    Buffer.concat([Buffer.from('{"kind":"source.files","text":"wolp'), Buffer.from([0xff]), Buffer.from('"}')])
  )
  const q = vba(['research', '--config', world.profile, '--query', query])
  assert.is(q.code, 2, q.stderr)
  assert.match(q.stderr, /^vba: INPUT_NOT_UTF8: the query file .* is not valid UTF-8/)
  const stdin = spawnSync(process.execPath, [MAIN, 'research', '--config', world.profile, '--query', '-'], {
    input: Buffer.concat([
      Buffer.from('{"kind":"source.files","text":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}')
    ]),
    encoding: 'utf8'
  })
  assert.is(stdin.status, 2)
  assert.match(stdin.stderr, 'INPUT_NOT_UTF8')
  const dir = path.join(root, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  const report = path.join(root, 'report.json')
  writeFileSync(
    report,
    Buffer.concat([
      Buffer.from('{"report":"netted wolpertingers vanish '),
      Buffer.from([0xe9]),
      Buffer.from('","entities":[{"type":"quest","id":11117}]}')
    ])
  )
  const p = vba(['case', 'prepare', dir, '--config', world.profile, '--input', report])
  assert.is(p.code, 2, p.stderr)
  assert.match(p.stderr, /^vba: INPUT_NOT_UTF8: report.json is not valid UTF-8/)
  // UTF-8 that is no text: NUL bytes (a binary file), or nothing visible
  for (const [bytes, why] of [
    [Buffer.alloc(200), 'the report holds NUL characters: it is not text'],
    [Buffer.from('\u200b\u00a0\t\u2028 \u0007'), 'the report holds no visible character']
  ] as const) {
    const md = path.join(root, 'report.md')
    writeFileSync(md, bytes)
    const n = vba(['case', 'prepare', dir, '--config', world.profile, '--input', md])
    assert.is(n.code, 2, n.stderr)
    assert.match(n.stderr, `vba: INPUT_INVALID: ${why}`)
  }
  assert.is(readFileSync(path.join(dir, 'events.jsonl'), 'utf8'), '', 'nothing recorded')
  const profile = path.join(root, 'bad.toml')
  writeFileSync(
    profile,
    Buffer.concat([readFileSync(world.profile), Buffer.from('\n# caf'), Buffer.from([0xe9]), Buffer.from('\n')])
  )
  const c = vba(['research', '--config', profile, '--query', query])
  assert.is(c.code, 2)
  assert.match(c.stderr, /^vba: INPUT_NOT_UTF8: profile .* is not valid UTF-8/)
})

test.run()
