/**
 * Honest summaries (issue 37, point 6), through the CLI on the demo world: this run's counts and
 * the whole case's told apart after a resume; a Ctrl-C'd turn says its request is recorded and the
 * next run asks again as the next turn; a conclusion that rests only on empty evidence is marked
 * by investigate, status, the summary and the report; `vba verify OUT.tar` says "bag VALID" and
 * "case VALID"; the report of a prepared case names the revision's binding.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync, writeFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import * as path from 'node:path'
import { writeDemoWorld } from '../../src/demo/world.js'
import { vba, VBA_BIN } from '../helpers/cli.js'
import { tempDir } from '../helpers/fs.js'

/** A model program: the interpretation, a search for a name the core does not hold, a conclusion citing that search. */
const weakModel = (root: string): string => {
  const file = path.join(root, 'weak-model.mjs')
  writeFileSync(
    file,
    `let prompt = ''
for await (const c of process.stdin) prompt += c
const latest = /Latest result (E\\d+)/.exec(prompt)?.[1]
const answers = [
  { interpretation: { summary: 'Netted wolpertingers despawn without giving the item.' } },
  { next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.search', text: 'NoSuchHandlerAnywhere' } } },
  { next: { kind: 'conclusion', summary: 'No handler exists for the net.', hypotheses: [], evidence: [latest] } }
]
process.stdout.write(JSON.stringify(answers[Number(process.env.VBA_TURN) - 1] ?? answers[2]))
`
  )
  return `node ${JSON.stringify(file)}`
}

const prepared = async (name: string, report: object): Promise<{ root: string; dir: string; profile: string }> => {
  const root = tempDir(name)
  const world = await writeDemoWorld(path.join(root, 'world'))
  const dir = path.join(root, 'case')
  assert.is(vba(['case', 'init', dir, '--title', 'Netted wolpertingers vanish']).code, 0)
  writeFileSync(path.join(root, 'report.json'), JSON.stringify(report))
  const p = vba(['case', 'prepare', dir, '--config', world.profile, '--input', path.join(root, 'report.json')])
  assert.is(p.code, 0, p.stderr)
  return { root, dir, profile: world.profile }
}

const WOLPERTINGERS = { report: 'Wolpertingers vanish for quest 11117.', entities: [{ type: 'quest', id: 11117 }] }

const honest = suite('honest summaries')

honest(
  "a resumed run: this run's turns and tokens and the whole case's, labelled; a weak conclusion is marked by investigate, status, summary and report; the bag and the case VALID by name",
  async () => {
    const { root, dir, profile } = await prepared('honest-weak', WOLPERTINGERS)
    const model = weakModel(root)
    const first = vba(['investigate', dir, '--config', profile, '--model-command', model, '--max-turns', '1'])
    assert.is(first.code, 5, first.stdout + first.stderr)
    assert.match(first.stdout, /INVESTIGATING: this run 1 model turn, 0 tokens; the case 1 turn, 0 tokens,/)
    const rest = vba(['investigate', dir, '--config', profile, '--model-command', model])
    assert.is(rest.code, 0, rest.stdout + rest.stderr)
    assert.match(rest.stdout, /CONCLUDED: this run 2 model turns, 0 tokens; the case 3 turns, 0 tokens,/)
    const warning = /warning: the conclusion rests only on partial or empty evidence: (E\d+) \(no hits\)/
    const id = warning.exec(rest.stdout)?.[1] ?? ''
    assert.ok(id !== '', rest.stdout)
    assert.match(vba(['status', dir]).stdout, warning)
    const json = JSON.parse(vba(['status', dir, '--json']).stdout) as { weak_support: { id: string; why: string }[] }
    assert.equal(json.weak_support, [{ id, why: 'no hits' }])
    assert.match(
      vba(['case', 'summary', dir, '--markdown']).stdout,
      `**Warning**: the conclusion rests only on partial or empty evidence: ${id} (no hits).`
    )
    const out = path.join(root, 'report.html')
    assert.is(vba(['report', dir, '--out', out]).code, 0)
    assert.match(readFileSync(out, 'utf8'), `<p class="warn" id="weak-support">the conclusion rests only on partial`)

    const tar = path.join(root, 'out.tar')
    assert.is(vba(['export', dir, tar]).code, 0)
    const v = vba(['verify', tar])
    assert.is(v.code, 0, v.stdout)
    assert.match(v.stdout, /^bag: BagIt 1\.0, \d+ payload files, \d+ bytes: bag VALID$/m)
    assert.match(v.stdout, /^case VALID$/m)
    assert.match(v.stdout, /^VALID: the bag and the case in it$/m)
  }
)

honest("a Ctrl-C'd turn: its request is recorded, the next run asks again as the next turn", async () => {
  const { root, dir, profile } = await prepared('honest-sigint', WOLPERTINGERS)
  const gated = path.join(root, 'gated.mjs')
  writeFileSync(
    gated,
    `for await (const _ of process.stdin);
await new Promise((r) => setTimeout(r, 20000))
`
  )
  const r = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
    const child = spawn(process.execPath, [
      VBA_BIN,
      'investigate',
      dir,
      '--config',
      profile,
      '--model-command',
      `node ${gated}`
    ])
    let stdout = ''
    let sent = false
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString()
      if (!sent && stdout.includes('model command node started')) {
        sent = true
        child.kill('SIGINT')
      }
    })
    child.on('close', (code) => resolve({ code, stdout }))
  })
  assert.is(r.code, 5, r.stdout)
  assert.match(r.stdout, 'turn 1 (interpretation, prompt')
  assert.match(
    r.stdout,
    'cancelled by the controller: the request of turn 1 is recorded, no answer to it (the next run asks again, as turn 2)'
  )
  assert.match(r.stdout, /\(stopped by a signal\): this run 0 model turns/)
  assert.not.match(r.stdout, 'nothing recorded')
  const next = vba(['investigate', dir, '--config', profile, '--model-command', weakModel(root), '--max-turns', '1'])
  assert.match(next.stdout, 'turn 2 (interpretation, prompt')
})

honest('the report of a prepared case that asked no query names the commit and snapshot of its binding', async () => {
  const { root, dir } = await prepared('honest-binding', { report: 'Something is off.', entities: [] })
  const out = path.join(root, 'report.html')
  assert.is(vba(['report', dir, '--out', out]).code, 0)
  const html = readFileSync(out, 'utf8')
  assert.not.match(html, 'no source research')
  assert.match(
    html,
    /<dt>source commit<\/dt><dd class="mono">[0-9a-f]{40} <span class="muted">\(revision 1 is bound to it; no query asked there\)<\/span>/
  )
  assert.match(
    html,
    '<dt>world snapshot</dt><dd class="mono">world @ demo-world-fixture <span class="muted">(revision 1 is bound to it; no query asked there)</span>'
  )
})

honest.run()
