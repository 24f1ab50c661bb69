/**
 * `vba investigate`, `vba case query` and `vba case prepare` check the profile against the case
 * before they write anything (src/cli/research-preflight.ts): a commit the repository does not
 * hold is a profile mistake (exit 2), not an outage after the case was started and a model paid;
 * research under another binding than the one the case is bound to is refused before its query
 * runs; a case prepared at another commit than the profile's is said when its investigation starts.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { vba } from '../helpers/cli.js'
import { preparedDemoCase } from '../helpers/prepared-case.js'

/** Answers the interpretation, then concludes on nothing: enough to start and bind a case. */
const MODEL = `const turn = Number(process.env.VBA_TURN)
for await (const _ of process.stdin);
process.stdout.write(JSON.stringify(turn === 1 ? { interpretation: { summary: 'Netted wolpertingers despawn.' } } : { next: { kind: 'tool', operation: 'project.query', arguments: { kind: 'source.files', text: 'wolpertinger' } } }))
`

/** A copy of `profile` naming `commit` instead of its own (relative paths resolve the same: same folder). */
const atCommit = (profile: string, commit: string, name: string): string => {
  const file = path.join(path.dirname(profile), name)
  writeFileSync(file, readFileSync(profile, 'utf8').replace(/^commit = "[0-9a-f]{40}"$/m, `commit = "${commit}"`))
  return file
}

/** A second commit in the demo world's repository (the profile's folder holds it as `core`). */
const secondCommit = (profile: string): string => {
  const core = path.join(path.dirname(profile), 'core')
  const git = (...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], {
      cwd: core,
      encoding: 'utf8'
    }).trim()
  git('commit', '-q', '--allow-empty', '-m', 'a later commit')
  return git('rev-parse', 'HEAD')
}

const log = (dir: string): string => readFileSync(path.join(dir, 'events.jsonl'), 'utf8')

const preflight = suite('research preflight')

preflight('a commit the repository does not hold: refused as a profile mistake, nothing written', async () => {
  const { dir, profile, root } = await preparedDemoCase('', 'preflight')
  const absent = atCommit(profile, '1'.repeat(40), 'absent.toml')
  writeFileSync(path.join(root, 'model.mjs'), MODEL)
  const before = log(dir)
  const run = vba(['investigate', dir, '--config', absent, '--model-command', `node ${path.join(root, 'model.mjs')}`])
  assert.is(run.code, 2, run.stderr)
  assert.match(run.stderr, `vba: CONFIG_INVALID: ${absent}: commit ${'1'.repeat(40)} is not in the repository`)
  assert.match(run.stderr, `vba check --config ${absent}`)
  assert.not.match(run.stdout, 'started the investigation')
  assert.is(log(dir), before, 'nothing appended: the case is not started, no model was called')

  writeFileSync(path.join(root, 'q.json'), JSON.stringify({ kind: 'source.files', text: 'wolpertinger' }))
  const query = vba(['case', 'query', dir, '--config', absent, '--query', path.join(root, 'q.json')])
  assert.is(query.code, 2, query.stderr)
  assert.match(query.stderr, 'CONFIG_INVALID')
  assert.not.match(query.stderr, 'retry', 'a profile mistake is not an outage to retry')
  assert.is(log(dir), before, 'no reservation recorded')

  const again = vba(['case', 'prepare', dir, '--config', absent, '--input', path.join(root, 'report.json'), '--again'])
  assert.is(again.code, 2, again.stderr)
  assert.match(again.stderr, 'CONFIG_INVALID')
  assert.is(log(dir), before)
})

preflight(
  'another commit than the case is bound to: refused before the query; a different preparation is said',
  async () => {
    const { dir, profile, root } = await preparedDemoCase('', 'preflight')
    const later = atCommit(profile, secondCommit(profile), 'later.toml')
    writeFileSync(path.join(root, 'model.mjs'), MODEL)
    writeFileSync(path.join(root, 'q.json'), JSON.stringify({ kind: 'source.files', text: 'wolpertinger' }))
    const before = log(dir)

    // Before the start, an operator's query is bound to the revision's binding.
    const query = vba(['case', 'query', dir, '--config', later, '--query', path.join(root, 'q.json')])
    assert.is(query.code, 2, query.stderr)
    assert.match(query.stderr, 'the revision it was prepared under')
    assert.match(query.stderr, 'vba case prepare --again')
    assert.is(log(dir), before)

    // The start binds the investigation to the profile's commit: said, then run.
    const model = `node ${path.join(root, 'model.mjs')}`
    const run = vba(['investigate', dir, '--config', later, '--model-command', model, '--max-turns', '2'])
    assert.match(
      run.stdout.split('\n')[0] ?? '',
      /^warning: the case was prepared under https:\/\/example\.org\/demo-core\.git at [0-9a-f]{12}/
    )
    assert.match(run.stdout, 'started the investigation')

    // Started under the later commit, it refuses the profile it was prepared with.
    const back = log(dir)
    const other = vba(['investigate', dir, '--config', profile, '--model-command', model])
    assert.is(other.code, 2, other.stderr)
    assert.match(other.stderr, 'since the investigation started')
    assert.match(other.stderr, 'use the profile it started with')
    assert.is(log(dir), back)
    const verified = vba(['verify', dir])
    assert.is(verified.code, 0, verified.stdout + verified.stderr)
  }
)

preflight(
  'queries before the start that the budget of the start could not hold are refused before they are recorded',
  async () => {
    const { dir, profile, root } = await preparedDemoCase('', 'preflight')
    const small = path.join(path.dirname(profile), 'small.toml')
    // A query costs 2 once started; before the start it reserves 1, and is checked at that price.
    writeFileSync(small, readFileSync(profile, 'utf8').replace(/^total = 8$/m, 'total = 2\nproject_query = 2'))
    for (const [i, text] of ['wolpertinger', 'Despawn'].entries()) {
      writeFileSync(path.join(root, `q${i}.json`), JSON.stringify({ kind: 'source.files', text }))
      const ok = vba(['case', 'query', dir, '--config', small, '--query', path.join(root, `q${i}.json`)])
      assert.is(ok.code, 0, ok.stderr)
    }
    const status = vba(['status', dir])
    assert.match(
      status.stdout,
      'research before the start: 2 unit(s) committed (2 consumed, 0 held); the start needs a [budget] total of at least 2'
    )
    const before = log(dir)
    writeFileSync(path.join(root, 'q2.json'), JSON.stringify({ kind: 'source.files', text: 'Spell' }))
    const third = vba(['case', 'query', dir, '--config', small, '--query', path.join(root, 'q2.json')])
    assert.is(third.code, 2, third.stderr)
    assert.match(
      third.stderr,
      'vba: BUDGET_EXHAUSTED: 2 unit(s) of research are committed before the investigation starts, and a query before the start costs 1'
    )
    assert.match(third.stderr, `${small}: [budget] total = 2`)
    assert.is(log(dir), before, 'nothing recorded: the case can still be started')
  }
)

preflight.run()
