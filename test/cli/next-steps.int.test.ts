/**
 * Blocked cases say what to do (issue 37, point 5), through the CLI on the demo world: `vba
 * status`, `vba investigate` and `vba serve` print the exact next command for each block reason
 * (the retry time, `--manual-retry`, the feedback to give); a case blocked until a retry time is
 * exit 5 from investigate (not 4); `vba resume --help` says which blocks it lifts; a profile whose
 * [source_analysis] differs from the started case is refused by investigate itself, both values named.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { startServe, VBA_BIN, vba } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

/** A model program answering turn N with answers[N-1] (the last one after that). */
const modelProgram = (root: string, answers: unknown[]): string => {
  const file = path.join(root, `model-${answers.length}-${Math.random().toString(36).slice(2)}.mjs`)
  writeFileSync(
    file,
    `const answers = ${JSON.stringify(answers.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))))}
for await (const _ of process.stdin);
process.stdout.write(answers[Math.min(Number(process.env.VBA_TURN), answers.length) - 1])
`
  )
  return `node ${JSON.stringify(file)}`
}

const INTERPRET = { interpretation: { summary: 'Netted wolpertingers despawn without giving the item.' } }
const CONCLUDE = { next: { kind: 'conclusion', summary: 'Needs a lab test.', hypotheses: [], evidence: [] } }

/** A prepared demo case and its profile. */
const prepared = async (): Promise<{ dir: string; profile: string; root: string }> => {
  const root = tempDir('next-steps')
  const world = await writeDemoWorld(path.join(root, 'world'))
  const dir = path.join(root, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  writeFileSync(
    path.join(root, 'report.json'),
    JSON.stringify({ report: 'Wolpertingers vanish for quest 11117.', entities: [{ type: 'quest', id: 11117 }] })
  )
  const p = vba(['case', 'prepare', dir, '--config', world.profile, '--input', path.join(root, 'report.json')])
  assert.is(p.code, 0, p.stderr)
  return { dir, profile: world.profile, root }
}

const next = suite('next steps of a case')

next('a case that is not prepared, and one that is: status names case prepare, then investigate', async () => {
  const root = tempDir('next-empty')
  const dir = path.join(root, 'case')
  assert.is(vba(['case', 'init', dir]).code, 0)
  assert.match(
    vba(['status', dir]).stdout,
    `next: vba case prepare ${dir} --config PROFILE --input REPORT (the bug report: Markdown or text`
  )
  const p = await prepared()
  const s = vba(['status', p.dir])
  assert.match(s.stdout, `next: vba investigate ${p.dir} --config PROFILE (starts the investigation`)
  assert.equal((JSON.parse(vba(['status', p.dir, '--json']).stdout) as { next: string[] }).next.length, 1)
})

next(
  'MODEL_UNAVAILABLE: investigate says the retry time and --manual-retry; again before the time: RETRY_NOT_YET, exit 5, the command; status the same; --manual-retry goes on',
  async () => {
    const { dir, profile, root } = await prepared()
    const down = vba(['investigate', dir, '--config', profile, '--model-command', 'echo "down" >&2; exit 7'])
    assert.is(down.code, 3, down.stdout + down.stderr)
    const retry = /BLOCKED \/ MODEL_UNAVAILABLE, retry not before (\S+Z)/.exec(down.stdout)?.[1] ?? ''
    assert.ok(retry !== '', down.stdout)
    assert.match(
      down.stdout,
      `next: vba investigate ${dir} --config ${profile} --model-command CMD after ${retry} (the retry), or now: vba investigate ${dir} --config ${profile} --model-command CMD --manual-retry`
    )
    assert.not.match(down.stdout, 'echo "down"', 'the command itself (it may hold a secret) is not shown')
    const early = vba(['investigate', dir, '--config', profile, '--model-command', 'exit 7'])
    assert.is(early.code, 5, early.stdout + early.stderr)
    assert.match(early.stdout, `vba: RETRY_NOT_YET: the case is blocked (MODEL_UNAVAILABLE) until ${retry}`)
    assert.match(early.stdout, `or now: vba investigate ${dir} --config ${profile} --model-command CMD --manual-retry`)
    const json = vba(['investigate', dir, '--config', profile, '--model-command', 'exit 7', '--json'])
    assert.is(json.code, 5)
    const blocked = JSON.parse(json.stdout.trim()) as { blocked: { code: string; next: string[] } }
    assert.is(blocked.blocked.code, 'RETRY_NOT_YET')
    assert.match(blocked.blocked.next[0] ?? '', '--manual-retry')
    const status = vba(['status', dir])
    assert.match(status.stdout, `next: vba investigate ${dir} --config PROFILE after ${retry} (the retry), or now:`)
    // The failed call used turn 1: the interpretation is asked for in turn 2.
    const model = modelProgram(root, [INTERPRET, INTERPRET, CONCLUDE])
    const on = vba(['investigate', dir, '--config', profile, '--model-command', model, '--manual-retry'])
    assert.is(on.code, 0, on.stdout + on.stderr)
    assert.match(on.stdout, 'resumed into INTERPRETING (manual retry)')
    assert.match(vba(['status', dir]).stdout, `next: vba report ${dir} --out report.html`)
  }
)

next('INVALID_LLM_RESPONSES: the next command, where to see the answers, how to tell the model', async () => {
  const { dir, profile, root } = await prepared()
  const r = vba(['investigate', dir, '--config', profile, '--model-command', modelProgram(root, ['not json'])])
  assert.is(r.code, 5, r.stdout + r.stderr)
  assert.match(r.stdout, 'BLOCKED / INVALID_LLM_RESPONSES')
  assert.match(
    r.stdout,
    `or now: vba investigate ${dir} --config ${profile} --model-command CMD --manual-retry (recorded); see the refused answers in vba report ${dir} --out report.html`
  )
  assert.match(vba(['status', dir]).stdout, `vba case note ${dir} TEXT`)
  // where the hint sends the operator, the refused answers are
  const page = path.join(root, 'report.html')
  assert.is(vba(['report', dir, '--out', page]).code, 0)
  assert.match(readFileSync(page, 'utf8'), 'not json')
})

next(
  'AWAITING_TEST_FEEDBACK: status and investigate name the lab test and the feedback command; serve shows it',
  async () => {
    const { dir, profile, root } = await prepared()
    const lab = { next: { kind: 'lab_test', description: 'Net a wild wolpertinger on the test realm.' } }
    const r = vba(['investigate', dir, '--config', profile, '--model-command', modelProgram(root, [INTERPRET, lab])])
    assert.is(r.code, 5, r.stdout + r.stderr)
    assert.match(r.stdout, `next: vba case feedback ${dir} L1 'WHAT THE TEST SHOWED' (lab test L1)`)
    assert.match(r.stdout, `then: vba investigate ${dir} --config ${profile}`)
    assert.match(vba(['status', dir]).stdout, `next: vba case feedback ${dir} L1 'WHAT THE TEST SHOWED'`)
    const { child, base } = await startServe([path.dirname(dir)])
    try {
      const page = await (await fetch(base)).text()
      assert.match(page, `vba case feedback ${dir} ID`)
    } finally {
      child.kill()
    }
  }
)

next('vba resume --help says which blocks it lifts and that --expect-generation is optional', () => {
  const h = vba(['resume', '--help'])
  assert.is(h.code, 0)
  const text = h.stdout.replace(/\s+/g, ' ')
  assert.match(text, 'INVALID_LLM_RESPONSES or MODEL_UNAVAILABLE')
  assert.match(text, 'RESEARCH_UNAVAILABLE: vba investigate --manual-retry')
  assert.match(text, 'optional: refuse unless the case is still at generation N')
})

next(
  'a profile whose [source_analysis] differs from the started case is refused by investigate, both values named',
  async () => {
    const { dir, profile, root } = await prepared()
    const model = modelProgram(root, [INTERPRET, CONCLUDE])
    const first = vba(['investigate', dir, '--config', profile, '--model-command', model, '--max-turns', '1'])
    assert.is(first.code, 5, first.stdout + first.stderr)
    const other = path.join(path.dirname(profile), 'other.toml')
    writeFileSync(other, readFileSync(profile, 'utf8').replace('context_lines = 8', 'context_lines = 3'))
    const r = vba(['investigate', dir, '--config', other, '--model-command', model])
    assert.is(r.code, 2, r.stdout + r.stderr)
    assert.match(
      r.stderr,
      `vba: CONTEXT_SETTINGS_DIFFER: ${other}: [source_analysis] differs from the settings the investigation started with (context_lines: the case started with 8, the profile has 3)`
    )
    assert.not.match(r.stdout, 'turn 2')
    const same = vba(['investigate', dir, '--config', profile, '--model-command', model])
    assert.is(same.code, 0, same.stdout + same.stderr)
  }
)

next(
  'a directory named with controls or like an option: printed as codes, and the next: hint pastes back into a shell',
  () => {
    const root = tempDir('next-names')
    const run = (args: string[]) => spawnSync(process.execPath, [VBA_BIN, ...args], { cwd: root, encoding: 'utf8' })
    const sh = (command: string) => spawnSync('bash', ['-c', command], { cwd: root, encoding: 'utf8' })
    // A line break, a screen clear and a bidi override in a directory's name.
    const odd = 'new\nline\u001b[2J\u202e'
    const init = run(['case', 'init', odd, '--id', 'odd-name'])
    assert.is(init.status, 0, init.stderr)
    assert.is(init.stdout, 'created case odd-name in new<U+000A>line<U+001B>[2J<U+202E>\n')
    const hint = run(['status', odd])
      .stdout.split('\n')
      .find((l) => l.startsWith('next: vba case prepare '))
    const word = /^next: vba case prepare (\S+) --config PROFILE/.exec(hint ?? '')?.[1]
    assert.is(word, "$'new\\nline\\033[2J\\342\\200\\256'", hint)
    assert.is(sh(`printf %s ${word}`).stdout, odd, 'bash reads the word back as the name')
    assert.is(sh(`node ${VBA_BIN} status ${word}`).status, 0, 'the pasted case works')
    // An option-like name is written ./--foo (as given, it would be read as an option).
    assert.is(run(['case', 'init', '--', '--foo']).status, 0)
    const dashed = run(['status', '--', '--foo']).stdout
    assert.match(dashed, 'next: vba case prepare ./--foo --config PROFILE')
    assert.is(sh(`node ${VBA_BIN} status ./--foo`).status, 0)
    // import names its destination as codes too.
    assert.is(run(['export', '--', '--foo', 'c.tar']).status, 0)
    const imported = run(['import', 'c.tar', 'in\u001b[31m'])
    assert.is(imported.status, 0, imported.stderr)
    assert.match(imported.stdout, / into in<U\+001B>\[31m\n$/)
  }
)

next.run()
