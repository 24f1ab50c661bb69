/**
 * `vba eval` on a generated repository with three bugs and their fix commits: the oracle scores
 * every bug as a file and line hit, a model citing the wrong file scores none, a blocked bug is
 * scored blocked, `vba eval score` reproduces results.json byte for byte from the cases, and an
 * edited case fails verification and is reported, not scored. Also the truth from git and the
 * resumption of a run.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { loadProfile } from '../../src/adapters/config/profile.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { runEval, type EvalModel, type EvalOptions } from '../../src/eval/run.js'
import type { RunModel } from '../../src/eval/run-folder.js'
import { changedOf, readSuite, type Bug } from '../../src/eval/suite.js'
import { FailureError } from '../../src/failures/error.js'
import type { Results } from '../../src/eval/score.js'
import { garbageModel, oracleModel, writeEvalFixture, wrongFileModel } from '../helpers/eval-suite.js'
import { tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'

const fixture = writeEvalFixture()
const profile = await loadProfile(fixture.profile)
const ORACLE: RunModel = { kind: 'function', name: 'oracle' }
const run = (model: EvalModel, out: string, lines: string[] = [], modelId = ORACLE): Promise<Results> =>
  runEval({
    suite: fixture.suite,
    out,
    profile,
    model,
    modelId,
    maxTurns: 8,
    openSource: openSourceResearch,
    onProgress: (l) => lines.push(l)
  })

const ev = suite('vba eval')

ev('the truth of a fix commit is the hunks it changes, as lines of the commit before it', async () => {
  const bugs = await readSuite(fixture.suite)
  assert.equal(
    bugs.map((b) => b.id),
    ['bug-a', 'bug-b', 'bug-c']
  )
  assert.equal(await changedOf(bugs[0]!, fixture.repo), [
    { path: 'src/server/scripts/Northrend/boss_frost_warden.cpp', lines: [37, 37] }
  ])
  assert.equal(await changedOf(bugs[1]!, fixture.repo), [
    { path: 'src/server/scripts/Spells/spell_paladin.cpp', lines: [48, 48] }
  ])
  assert.equal(await changedOf(bugs[2]!, null), [{ path: 'src/server/game/Entities/Pet/Pet.cpp', lines: [64, 64] }])
})

ev(
  'the oracle hits every file and line; the run writes results, summary and reports; score reproduces it',
  async () => {
    const out = path.join(tempDir('eval-run'), 'run')
    const lines: string[] = []
    const r = await run(oracleModel, out, lines)
    assert.is(lines.length, 3, lines.join('\n'))
    assert.ok(
      lines.every((l) => /^\[\d\/3\] bug-[abc]: CONCLUDED; file hit yes, line hit yes/.test(l)),
      lines.join('\n')
    )
    assert.equal(
      r.bugs.map((b) => [b.id, b.state, b.file_hit, b.line_hit, b.first_hit_rank]),
      [
        ['bug-a', 'CONCLUDED', true, true, 1],
        ['bug-b', 'CONCLUDED', true, true, 1],
        ['bug-c', 'CONCLUDED', true, true, 1]
      ]
    )
    assert.is(r.totals.file_hit_rate, 1)
    assert.is(r.totals.line_hit_rate, 1)
    const b = r.bugs[0]!
    assert.is(b.turns, 4)
    assert.is(b.queries, 1)
    assert.is(b.budget_spent, 1)
    assert.ok((b.prompt_chars ?? 0) > 2000 && b.wall_ms !== null && b.head !== null)
    for (const f of ['results.json', 'summary.html', 'run.json', 'reports/bug-a.html', 'cases/bug-c/case.json'])
      assert.ok(existsSync(path.join(out, f)), f)
    const summary = readFileSync(path.join(out, 'summary.html'), 'utf8')
    assert.match(summary, '<a href="reports/bug-b.html">bug-b</a>')
    // the gh export's URL is the origin of bug-b's report
    assert.match(
      readFileSync(path.join(out, 'reports/bug-b.html'), 'utf8'),
      'https://github.com/example/core/issues/5517'
    )

    const published = readFileSync(path.join(out, 'results.json'))
    const rescored = path.join(tempDir('eval-score'), 'results.json')
    const s = vba(['eval', 'score', out, '--out', rescored])
    assert.is(s.code, 0, s.stdout + s.stderr)
    assert.match(s.stdout, 'results.json reproduced byte for byte from the cases')
    assert.match(s.stdout, 'total (3)')
    assert.ok(readFileSync(rescored).equals(published), 'the recomputed results are the same bytes')

    // Running again resumes: every case is kept, nothing is asked of the model, the same results.
    const again: string[] = []
    await run(
      () => async () => {
        throw new Error('no model call on a finished run')
      },
      out,
      again
    )
    assert.ok(
      again.every((l) => l.endsWith('(kept from an earlier run)')),
      again.join('\n')
    )
    assert.ok(readFileSync(path.join(out, 'results.json')).equals(published))

    // The run names its model and repository; a resume with another model, or against another
    // repository, is refused before anything runs (its cases and results would mix two of them).
    const runFile = path.join(out, 'run.json')
    const recorded = JSON.parse(readFileSync(runFile, 'utf8')) as Record<string, unknown>
    assert.equal([recorded['repository'], recorded['model']], [fixture.repo, ORACLE])
    assert.equal((JSON.parse(published.toString('utf8')) as Results).model, ORACLE)
    const refusal = (o: Partial<EvalOptions>): Promise<string> =>
      runEval({ suite: fixture.suite, out, profile, model: wrongFileModel, modelId: ORACLE, maxTurns: 8, ...o }).then(
        () => 'resumed',
        (e: unknown) => (e instanceof FailureError ? `${e.failure.code}: ${e.failure.message}` : String(e))
      )
    assert.is(
      await refusal({ modelId: { kind: 'function', name: 'wrong-file' } }),
      `INVALID_ARGUMENT: ${out} holds a run of the model function oracle, not function wrong-file: its results would mix two models; use another --out for this model`
    )
    const elsewhere = path.join(tempDir('eval-elsewhere'), 'core')
    assert.is(
      await refusal({ repository: elsewhere }),
      `INVALID_ARGUMENT: ${out} holds a run against the repository ${fixture.repo}, not ${elsewhere}: its cases and results would mix two repositories; use another --out for this run (or resume with --repository ${fixture.repo})`
    )
    assert.ok(readFileSync(path.join(out, 'results.json')).equals(published), 'nothing ran')
    assert.equal(JSON.parse(readFileSync(runFile, 'utf8')), recorded)
    // A run.json written before the model was recorded is resumed, and the model filled in.
    writeFileSync(runFile, JSON.stringify({ ...recorded, model: undefined }))
    const old = await run(
      () => async () => {
        throw new Error('no model call on a finished run')
      },
      out
    )
    assert.equal(old.model, ORACLE)
    assert.equal(JSON.parse(readFileSync(runFile, 'utf8')), recorded)
    assert.ok(readFileSync(path.join(out, 'results.json')).equals(published))

    // An edited case fails verification: reported, not scored; score says so and exits 1.
    const edited = path.join(tempDir('eval-edit'), 'run')
    cpSync(out, edited, { recursive: true })
    const log = path.join(edited, 'cases', 'bug-a', 'events.jsonl')
    writeFileSync(log, readFileSync(log, 'utf8').replace('"Found."', '"Found!"'))
    const bad = vba(['eval', 'score', edited, '--json'])
    assert.is(bad.code, 1, bad.stderr)
    const recomputed = JSON.parse(bad.stdout) as Results
    const a = recomputed.bugs.find((x) => x.id === 'bug-a')!
    assert.is(a.verified, false)
    assert.is(a.state, 'UNVERIFIED')
    assert.is(a.file_hit, null)
    assert.ok(a.findings.length > 0, JSON.stringify(a))
    assert.is(recomputed.totals.unverified, 1)
    assert.is(recomputed.totals.file_hits, 2)
    assert.match(bad.stderr, 'DIFFERS')
    // A case re-chained after the run (a new event at its end) is caught by the head results.json names.
    const grown = path.join(tempDir('eval-grow'), 'run')
    cpSync(out, grown, { recursive: true })
    const note = vba(['case', 'note', path.join(grown, 'cases', 'bug-c'), 'edited after the run'])
    assert.is(note.code, 0, note.stderr)
    const g = JSON.parse(vba(['eval', 'score', grown, '--json']).stdout) as Results
    assert.equal(g.bugs.find((x) => x.id === 'bug-c')?.state, 'CONCLUDED', 'a later event is not a rollback')
  }
)

ev('a model that cites the wrong file scores no hit; a blocked bug is scored blocked', async () => {
  const wrong = await run(wrongFileModel, path.join(tempDir('eval-wrong'), 'run'), [], {
    kind: 'function',
    name: 'wrong-file'
  })
  assert.equal(
    wrong.bugs.map((b) => [b.state, b.file_hit, b.line_hit, b.first_hit_rank]),
    [
      ['CONCLUDED', false, false, null],
      ['CONCLUDED', false, false, null],
      ['CONCLUDED', false, false, null]
    ]
  )
  assert.is(wrong.totals.file_hit_rate, 0)
  const mixed = await run(
    (bug) => (bug.id === 'bug-b' ? garbageModel(bug) : oracleModel(bug)),
    path.join(tempDir('eval-mixed'), 'run')
  )
  const blocked = mixed.bugs.find((b) => b.id === 'bug-b')!
  assert.is(blocked.state, 'BLOCKED')
  assert.is(blocked.reason, 'INVALID_LLM_RESPONSES')
  assert.is(blocked.file_hit, false)
  assert.is(mixed.totals.file_hits, 2)
  assert.is(mixed.totals.concluded, 2)
})

ev(
  'a run stopped at its turn limit continues where it stopped; a bug git cannot diff is told and the others run',
  async () => {
    const out = path.join(tempDir('eval-resume'), 'run')
    const first = await runEval({
      suite: fixture.suite,
      out,
      profile,
      model: oracleModel,
      modelId: ORACLE,
      maxTurns: 2,
      openSource: openSourceResearch
    })
    assert.equal(
      first.bugs.map((b) => [b.state, b.turns, b.file_hit]),
      [
        ['INVESTIGATING', 2, false],
        ['INVESTIGATING', 2, false],
        ['INVESTIGATING', 2, false]
      ]
    )
    // A signal stops the run: the investigation under way after its step, no other bug is started.
    const stopped = path.join(tempDir('eval-signal'), 'run')
    const stop = new AbortController()
    const interrupted = await runEval({
      suite: fixture.suite,
      out: stopped,
      profile,
      model: (bug) => {
        const oracle = oracleModel(bug)
        return async (request) => {
          if (request.turn === 2) stop.abort()
          return oracle(request)
        }
      },
      modelId: ORACLE,
      maxTurns: 8,
      openSource: openSourceResearch,
      signal: stop.signal
    })
    assert.equal(
      interrupted.bugs.map((b) => b.state),
      ['INVESTIGATING', 'MISSING', 'MISSING']
    )
    const resumed = await run(oracleModel, stopped)
    assert.is(resumed.totals.line_hits, 3)

    const lines: string[] = []
    const second = await run(oracleModel, out, lines)
    assert.ok(
      lines.every((l) => !l.includes('kept')),
      lines.join('\n')
    )
    assert.equal(
      second.bugs.map((b) => [b.state, b.turns, b.line_hit]),
      [
        ['CONCLUDED', 4, true],
        ['CONCLUDED', 4, true],
        ['CONCLUDED', 4, true]
      ]
    )

    const unknown = path.join(tempDir('eval-unknown'), 'suite')
    cpSync(fixture.suite, unknown, { recursive: true })
    const truth = path.join(unknown, 'bug-a', 'truth.json')
    writeFileSync(truth, readFileSync(truth, 'utf8').replace(fixture.commits[0] as string, 'f'.repeat(40)))
    const told: string[] = []
    const r = await runEval({
      suite: unknown,
      out: path.join(tempDir('eval-unknown-run'), 'run'),
      profile,
      model: oracleModel,
      modelId: ORACLE,
      maxTurns: 8,
      openSource: openSourceResearch,
      onProgress: (l) => told.push(l)
    })
    assert.ok(
      told.some((l) => l.startsWith('[') && l.includes('bug-a: no case (failed: SOURCE_UNAVAILABLE')),
      told.join('\n')
    )
    assert.equal(
      r.bugs.map((b) => [b.id, b.state, b.file_hit]),
      [
        ['bug-a', 'MISSING', null],
        ['bug-b', 'CONCLUDED', true],
        ['bug-c', 'CONCLUDED', true]
      ]
    )
  }
)

ev('a suite with a bad truth is refused with a coded message', async () => {
  const bad = path.join(tempDir('eval-bad'), 'suite')
  cpSync(fixture.suite, bad, { recursive: true })
  writeFileSync(path.join(bad, 'bug-a', 'truth.json'), JSON.stringify({ commit: 'abc' }))
  const r = vba(['eval', bad, '--config', fixture.profile, '--baseline', '--out', path.join(tempDir('o'), 'run')])
  assert.is(r.code, 2, r.stderr)
  assert.match(r.stderr, 'INPUT_INVALID')
  assert.match(r.stderr, 'truth.json')
})

ev('listed changed ranges are checked against the file at the commit: a range past its end is refused', async () => {
  const pet = 'src/server/game/Entities/Pet/Pet.cpp'
  const suiteDir = path.join(tempDir('eval-past'), 'suite')
  cpSync(fixture.suite, suiteDir, { recursive: true })
  const truthFile = path.join(suiteDir, 'bug-c', 'truth.json')
  const truth = JSON.parse(readFileSync(truthFile, 'utf8')) as Record<string, unknown>
  const bugC = async (changed: unknown): Promise<Bug> => {
    writeFileSync(truthFile, JSON.stringify({ ...truth, changed }))
    return (await readSuite(suiteDir)).find((b) => b.id === 'bug-c')!
  }
  const refusal = (bug: Bug): Promise<string> =>
    changedOf(bug, fixture.repo).then(
      () => 'accepted',
      (e: unknown) => (e instanceof FailureError ? `${e.failure.code}: ${e.failure.message}` : String(e))
    )
  // Pet.cpp has 85 lines at bug-c's commit: its last lines are a range, and so is the form of lines
  // appended at its end (the line before and after the insertion, 85-86); one starting past it is not.
  const last = await bugC([{ path: pet, lines: [80, 85] }])
  assert.equal(await changedOf(last, fixture.repo), [{ path: pet, lines: [80, 85] }])
  const appended = await bugC([{ path: pet, lines: [85, 86] }])
  assert.equal(await changedOf(appended, fixture.repo), [{ path: pet, lines: [85, 86] }])
  const at = (fixture.commits[2] as string).slice(0, 12)
  assert.is(
    await refusal(await bugC([{ path: pet, lines: [86, 87] }])),
    `INPUT_INVALID: bug-c: changed ${pet} lines 86-87 lie past the end of the file: it has 85 lines at ${at}`
  )
  assert.is(
    await refusal(await bugC([{ path: 'src/server/game/Nowhere.cpp', lines: [1, 2] }])),
    `INPUT_INVALID: bug-c: changed names src/server/game/Nowhere.cpp, which is no file at ${at}`
  )
  // Without a repository a listed range cannot be checked, and needs none.
  assert.equal(await changedOf(await bugC([{ path: pet, lines: [900, 901] }]), null), [
    { path: pet, lines: [900, 901] }
  ])
  // vba eval refuses the suite before anything runs: exit 2, no run folder.
  const out = path.join(tempDir('eval-past-run'), 'run')
  const r = vba(['eval', suiteDir, '--config', fixture.profile, '--baseline', '--out', out])
  assert.is(r.code, 2, r.stdout + r.stderr)
  assert.match(r.stderr, `vba: INPUT_INVALID: bug-c: changed ${pet} lines 900-901 lie past the end of the file`)
  assert.not.ok(existsSync(out), 'no run folder is made')
})

ev('a run folder in the suite folder (itself, inside it, or inside it through a link) is refused', () => {
  const suiteDir = path.join(tempDir('eval-inside'), 'suite')
  cpSync(fixture.suite, suiteDir, { recursive: true })
  const link = path.join(tempDir('eval-inside-link'), 'suite-link')
  symlinkSync(suiteDir, link)
  for (const [out, what] of [
    [path.join(suiteDir, 'run'), 'inside the suite folder'],
    [suiteDir, 'the suite folder'],
    [path.join(link, 'runs', 'one'), 'inside the suite folder']
  ] as const) {
    const r = vba(['eval', suiteDir, '--config', fixture.profile, '--baseline', '--out', out])
    assert.is(r.code, 2, r.stdout + r.stderr)
    assert.match(r.stderr, `vba: INVALID_ARGUMENT: --out ${out} is ${what} ${suiteDir}`)
  }
  assert.equal(readdirSync(suiteDir).sort(), ['bug-a', 'bug-b', 'bug-c'], 'nothing was written into the suite')
})

ev.run()
