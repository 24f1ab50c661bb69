/**
 * `vba eval` from the command line, two bugs at a time: with `--model-command` (a program that
 * answers from the prompt), with an OpenAI-compatible endpoint (the tests' own local server), and
 * with the built-in baseline; the table, the progress lines, results.json and `vba eval score`.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import type { Results } from '../../src/eval/score.js'
import { readerBrain, writeEvalFixture } from '../helpers/eval-suite.js'
import { startModelEndpoint } from '../helpers/model-endpoint.js'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { vba, VBA_BIN } from '../helpers/cli.js'

const fixture = writeEvalFixture()

/** Reads the Frost Warden's or the seal's code when the report names them, else a file no fix changed. */
const placeFor = (prompt: string): { path: string; start: number; end: number } =>
  /Frost Warden/.test(prompt)
    ? { path: 'src/server/scripts/Northrend/boss_frost_warden.cpp', start: 30, end: 45 }
    : /Seal of Command/.test(prompt)
      ? { path: 'src/server/scripts/Spells/spell_paladin.cpp', start: 40, end: 55 }
      : { path: 'src/server/game/Entities/Unit/Unit.cpp', start: 1, end: 20 }
const brain = readerBrain(placeFor)

const expectTwoHits = (out: string, stdout: string): Results => {
  const r = JSON.parse(readFileSync(path.join(out, 'results.json'), 'utf8')) as Results
  assert.equal(
    r.bugs.map((b) => [b.id, b.state, b.file_hit, b.line_hit]),
    [
      ['bug-a', 'CONCLUDED', true, true],
      ['bug-b', 'CONCLUDED', true, true],
      ['bug-c', 'CONCLUDED', false, false]
    ]
  )
  assert.is((stdout.match(/^\[\d\/3\] bug-/gm) ?? []).length, 3, stdout)
  assert.match(stdout, /^total \(3\) +3 concluded +2 66\.7% +2 66\.7%/m)
  const s = vba(['eval', 'score', out])
  assert.is(s.code, 0, s.stdout + s.stderr)
  assert.match(s.stdout, 'reproduced byte for byte')
  return r
}

const cli = suite('vba eval (CLI)')

/** A model command's program: it answers from the prompt as `brain` does. */
const script = path.join(tempDir('eval-model'), 'model.mjs')
writeFileSync(
  script,
  `import { readerBrain } from ${JSON.stringify(path.join(repoRoot(), 'dist', 'test', 'helpers', 'eval-suite.js'))}
const place = (p) => /Frost Warden/.test(p) ? { path: 'src/server/scripts/Northrend/boss_frost_warden.cpp', start: 30, end: 45 }
  : /Seal of Command/.test(p) ? { path: 'src/server/scripts/Spells/spell_paladin.cpp', start: 40, end: 55 }
  : { path: 'src/server/game/Entities/Unit/Unit.cpp', start: 1, end: 20 }
let prompt = ''
process.stdin.on('data', (d) => { prompt += d })
process.stdin.on('end', () => process.stdout.write(readerBrain(place)(prompt)))
`
)

cli('--model-command with --concurrency 2', () => {
  const out = path.join(tempDir('eval-cmd'), 'run')
  const r = vba([
    'eval',
    fixture.suite,
    '--config',
    fixture.profile,
    '--model-command',
    `VBA_TEST_API_KEY=sk-test-S3CRET ${JSON.stringify(process.execPath)} ${JSON.stringify(script)} --token S3CRET`,
    '--concurrency',
    '2',
    '--out',
    out
  ])
  assert.is(r.code, 0, r.stdout + r.stderr)
  const results = expectTwoHits(out, r.stdout)
  assert.is(results.bugs[0]?.turns, 4)
  // The run names its model by the command's program only: no argument, no environment value.
  const model = { kind: 'command', program: path.basename(process.execPath) }
  assert.equal(results.model, model)
  assert.equal((JSON.parse(readFileSync(path.join(out, 'run.json'), 'utf8')) as { model: unknown }).model, model)
  assert.match(r.stdout, new RegExp(`^model: command ${path.basename(process.execPath)}$`, 'm'))
  for (const f of ['run.json', 'results.json', 'summary.html'])
    assert.not.match(readFileSync(path.join(out, f), 'utf8'), 'S3CRET', f)
  // Resumed with another model: refused before anything runs, both named.
  const other = vba(['eval', fixture.suite, '--config', fixture.profile, '--baseline', '--out', out])
  assert.is(other.code, 2, other.stdout + other.stderr)
  assert.match(
    other.stderr,
    `vba: INVALID_ARGUMENT: ${out} holds a run of the model command ${path.basename(process.execPath)}, not baseline: its results would mix two models; use another --out for this model`
  )
})

cli('an OpenAI-compatible endpoint with --concurrency 2: tokens and latency from the recorded provenance', async () => {
  const endpoint = await startModelEndpoint(undefined, brain)
  try {
    const out = path.join(tempDir('eval-http'), 'run')
    const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      // the endpoint runs in this process: the CLI must not block it (spawn, not spawnSync)
      import('node:child_process').then(({ spawn }) => {
        const child = spawn(process.execPath, [
          VBA_BIN,
          'eval',
          fixture.suite,
          '--config',
          fixture.profile,
          '--model-url',
          endpoint.url,
          '--model',
          'test-model',
          '--concurrency',
          '2',
          '--out',
          out
        ])
        let stdout = ''
        let stderr = ''
        child.stdout.on('data', (d: Buffer) => {
          stdout += d.toString('utf8')
        })
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString('utf8')
        })
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }))
      })
    })
    assert.is(r.code, 0, r.stdout + r.stderr)
    const results = expectTwoHits(out, r.stdout)
    assert.is(endpoint.requests.length, 12, 'four turns for each of the three bugs')
    const origin = new URL(endpoint.url).origin
    assert.equal(results.model, { kind: 'http', origin, name: 'test-model' })
    assert.match(r.stdout, `model: test-model at ${origin}\n`)
    assert.ok(results.bugs.every((b) => (b.tokens ?? 0) > 0 && b.model_latency_ms !== null))
    assert.ok((results.totals.median_tokens ?? 0) > 0)
  } finally {
    await endpoint.close()
  }
})

cli(
  'the baseline (a profile without [source], the repository named by --repository) finds the Seal of Command script and the Frost Warden by their names',
  () => {
    const out = path.join(tempDir('eval-base'), 'run')
    const r = vba([
      'eval',
      fixture.suite,
      '--config',
      fixture.sourceless,
      '--repository',
      fixture.repo,
      '--baseline',
      '--out',
      out,
      '--json'
    ])
    assert.is(r.code, 0, r.stderr)
    const results = JSON.parse(r.stdout) as Results
    assert.equal(
      results.bugs.map((b) => [b.id, b.state, b.file_hit]),
      [
        ['bug-a', 'CONCLUDED', true],
        ['bug-b', 'CONCLUDED', true],
        ['bug-c', 'CONCLUDED', false]
      ]
    )
    assert.ok(
      results.bugs.every((b, i) => b.tokens === 0 && (i === 2 || (b.queries ?? 0) >= 2)),
      'a function model: no tokens; a search and a read for the bugs it finds'
    )
    // run.json names the repository: the truths of fix commits are derived again from it
    const s = vba(['eval', 'score', out])
    assert.is(s.code, 0, s.stdout + s.stderr)
    assert.match(s.stdout, 'reproduced byte for byte')
    assert.match(s.stdout, /^model: baseline$/m)
    // Resumed against another repository: refused before anything runs, both named.
    const elsewhere = path.join(tempDir('eval-elsewhere'), 'core')
    const moved = vba([
      'eval',
      fixture.suite,
      '--config',
      fixture.sourceless,
      '--repository',
      elsewhere,
      '--baseline',
      '--out',
      out
    ])
    assert.is(moved.code, 2, moved.stdout + moved.stderr)
    assert.match(
      moved.stderr,
      `vba: INVALID_ARGUMENT: ${out} holds a run against the repository ${fixture.repo}, not ${elsewhere}: its cases and results would mix two repositories; use another --out`
    )

    // Operator mistakes are coded refusals (exit 2), not internal errors (exit 70).
    const published = path.join(out, 'results.json')
    const exists = vba(['eval', 'score', out, '--out', published])
    assert.is(exists.code, 2, exists.stderr)
    assert.match(exists.stderr, `vba: OUTPUT_EXISTS: ${published} exists`)
    const forced = vba(['eval', 'score', out, '--out', published, '--force'])
    assert.is(forced.code, 0, forced.stderr)
    const broken = path.join(tempDir('eval-broken'), 'run')
    cpSync(out, broken, { recursive: true })
    writeFileSync(path.join(broken, 'run.json'), '[')
    const notJson = vba(['eval', 'score', broken])
    assert.is(notJson.code, 2, notJson.stderr)
    assert.match(notJson.stderr, `vba: INPUT_INVALID: ${path.join(broken, 'run.json')}: not JSON`)
    writeFileSync(path.join(broken, 'run.json'), '{"format":"vba-eval-run","version":1,"suite":5}')
    const shape = vba(['eval', 'score', broken])
    assert.is(shape.code, 2, shape.stderr)
    assert.match(shape.stderr, 'is not the run file of vba eval')
    const file = path.join(tempDir('eval-file'), 'keep.txt')
    writeFileSync(file, 'keep')
    const intoFile = vba(['eval', fixture.suite, '--config', fixture.sourceless, '--baseline', '--out', file])
    assert.is(intoFile.code, 2, intoFile.stderr)
    assert.match(intoFile.stderr, `vba: INVALID_ARGUMENT: --out ${file} is a file, not a folder`)
    assert.is(readFileSync(file, 'utf8'), 'keep')
    const token = vba([
      'mcp',
      '--config',
      fixture.sourceless,
      '--case',
      path.join(out, 'cases', 'bug-a'),
      '--http',
      '127.0.0.1:0',
      '--token-file',
      path.join(out, 'no-token')
    ])
    assert.is(token.code, 2, token.stderr)
    assert.match(token.stderr, 'vba: INVALID_ARGUMENT: --token-file')
    assert.match(token.stderr, 'cannot be read (ENOENT)')
  }
)

cli(
  'a run in which the model fails for every bug exits 3 and says why per bug; run again, the blocked bugs are retried',
  () => {
    const out = path.join(tempDir('eval-down'), 'run')
    const args = ['eval', fixture.suite, '--config', fixture.sourceless, '--repository', fixture.repo, '--out', out]
    // the same model command both times: down until the flag file is there
    const flag = path.join(tempDir('eval-down-flag'), 'up')
    const command = `test -e ${JSON.stringify(flag)} || { echo "no route to the model" >&2; exit 3; }; ${JSON.stringify(process.execPath)} ${JSON.stringify(script)}`
    const down = vba([...args, '--model-command', command])
    assert.is(down.code, 3, down.stdout + down.stderr)
    assert.match(
      down.stdout,
      /^\[\d\/3\] bug-a: BLOCKED \/ MODEL_UNAVAILABLE.*\(the model: MODEL_COMMAND_FAILED: the model command exited with 3: no route to the model\)$/m
    )
    assert.match(down.stderr, 'vba: no bug of the suite could be investigated')
    writeFileSync(flag, '')
    const again = vba([...args, '--model-command', command])
    assert.is(again.code, 0, again.stdout + again.stderr)
    assert.not.match(again.stdout, 'kept from an earlier run')
    assert.match(again.stdout, /^\[\d\/3\] bug-a: CONCLUDED/m)
  }
)

cli.run()
