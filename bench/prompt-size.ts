/**
 * bench/prompt-size: the prompt size per turn of the scripted investigation of issue 19
 * (scripts/lib/scripted-investigation.ts) on the generated repository (bench/generated-repo.ts,
 * with the demo core's scripts added) and the demo world database. Per turn: the characters of the
 * version-2 prompt, what its guard left out, and as the reference in the same run the version-1
 * renderer on the same state (ratio v2/v1) and the limit (20,000). Targets: every prompt under
 * 20,000 characters; the prompt after source.context at most 8,000.
 *
 * With `--repository PATH` the same investigation runs on that repository (a real core, at
 * `--commit C`, default its HEAD; without a snapshot index) instead of a generated one.
 *
 * `--show N` prints the prompt of turn N.
 *
 *   node dist/bench/prompt-size.js [--files N] [--repository PATH [--commit C]] [--show N]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { execFileSync } from 'node:child_process'
import * as E from 'fp-ts/lib/Either.js'
import { DEMO_CORE_FILES } from '../src/demo/core-repo.js'
import { DEMO_DATABASE, ADAPTER_PROFILE } from '../src/demo/world.js'
import Database from 'better-sqlite3'
import { writeWorldSqliteWith } from '../src/demo/world-sqlite.js'
import { replayCase } from '../src/fp.js'
import { initCaseState, type CaseState } from '../src/domain/case-state.js'
import { evolve } from '../src/domain/case-evolve.js'
import { FactsDocument } from '../src/domain/facts-document.js'
import { Capture } from '../src/events/capture.js'
import type { RecordedEvent } from '../src/events/chain.js'
import { renderPrompt } from '../src/projections/prompt.js'
import { renderPromptV1 } from '../src/projections/prompt-v1/render.js'
import { factLinesV1 } from '../src/projections/prompt-v1/facts.js'
import { runScriptedInvestigation } from '../scripts/lib/scripted-investigation.js'
import { generateRepo } from './generated-repo.js'
import { machine, benchArgs } from './lib.js'

const values = benchArgs(import.meta.url, {
  files: { type: 'string', default: '2000' },
  repository: { type: 'string' },
  commit: { type: 'string' },
  show: { type: 'string' }
})

/** The [source] section: the given repository at its commit, or a generated one under `root`. */
const sourceSection = (root: string): { section: string; what: string } => {
  if (values.repository === undefined) {
    const commit = generateRepo(path.join(root, 'core.git'), Number(values.files), DEMO_CORE_FILES)
    return {
      section: `[source]\nrepository = "core.git"\nurl = "https://example.org/generated.git"\ncommit = "${commit}"\ncache_dir = "cache"\n`,
      what: `${values.files} generated files + the demo scripts`
    }
  }
  const repo = path.resolve(values.repository)
  const commit = execFileSync('git', ['--git-dir', repo, 'rev-parse', values.commit ?? 'HEAD'], {
    encoding: 'utf8'
  }).trim()
  return {
    section: `[source]\nrepository = ${JSON.stringify(repo)}\nurl = "https://example.org/core.git"\ncommit = "${commit}"\ncache = false\n`,
    what: `${repo} at ${commit.slice(0, 12)}`
  }
}

interface Row {
  turn: number
  phase: string
  v2: number
  v1: number
  cut: readonly string[]
}

const main = async (): Promise<void> => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'vba-bench-prompt-'))
  try {
    const t0 = Date.now()
    const source = sourceSection(root)
    writeWorldSqliteWith(Database, path.join(root, 'world.sqlite'))
    const profile = path.join(root, 'project.toml')
    writeFileSync(
      profile,
      `${DEMO_DATABASE}\n${source.section}\n${readFileSync(ADAPTER_PROFILE, 'utf8')}\n[budget]\ntotal = 8\n`
    )
    const dir = path.join(root, 'case')
    const run = await runScriptedInvestigation(profile, dir)
    process.stdout.write(
      `prompt-size: ${source.what}, set up and investigated in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${machine()}\n`
    )
    // the reference: the version-1 renderer on the state before each recorded prompt
    const object = (ref: { digest: string }): Buffer =>
      readFileSync(path.join(dir, 'objects', 'sha256', ref.digest.slice(7, 9), ref.digest.slice(9)))
    const rows: Row[] = []
    const measure = {
      name: 'measure',
      version: 1,
      init: initCaseState,
      view: () => null,
      evolve: (s: CaseState, e: RecordedEvent): CaseState => {
        if (e.type === 'ModelRequested') {
          const doc = s.facts === null ? null : FactsDocument.decode(JSON.parse(object(s.facts).toString('utf8')))
          const facts = doc === null || E.isLeft(doc) ? [] : doc.right.facts
          const captures = new Map<string, Capture>()
          for (const [d, ref] of s.research.evidenceRefs) {
            const c = Capture.decode(JSON.parse(object(ref).toString('utf8')))
            if (E.isRight(c)) captures.set(d, c.right)
          }
          const report = s.report === null ? '' : object(s.report).toString('utf8')
          const v2 = renderPrompt(s, { report, facts, captures })
          const v1 = renderPromptV1(s, { report, facts: factLinesV1(facts), captures })
          if (String(e.data.turn) === values.show) process.stdout.write(`${v2.text}\n`)
          rows.push({ turn: e.data.turn, phase: e.data.phase, v2: v2.text.length, v1: v1.text.length, cut: v2.cut })
        }
        return evolve(s, e)
      }
    }
    const replayed = await replayCase(dir, [measure])()
    if (E.isLeft(replayed)) throw new Error(replayed.left.message)
    const what = [
      'interpretation',
      'after interpreting',
      'after source.context',
      'after source.read',
      'after the rows',
      'after a refused table',
      'after lab feedback',
      'conclusion turn'
    ]
    process.stdout.write('turn  phase           v2 chars  v1 chars  v2/v1  of limit  guard   step\n')
    for (const r of rows) {
      process.stdout.write(
        `${String(r.turn).padStart(4)}  ${r.phase.padEnd(14)}  ${String(r.v2).padStart(8)}  ${String(r.v1).padStart(8)}  ${(r.v2 / r.v1).toFixed(2).padStart(5)}  ${(r.v2 / 20_000).toFixed(2).padStart(8)}  ${(r.cut.length === 0 ? '-' : `${r.cut.length} cut`).padEnd(6)}  ${what[r.turn - 1] ?? ''}\n`
      )
    }
    const afterContext = rows[2]?.v2 ?? Infinity
    const largest = Math.max(...rows.map((r) => r.v2))
    process.stdout.write(
      `after source.context: ${afterContext} characters (target ≤ 8000: ${afterContext <= 8000 ? 'met' : 'MISSED'}); largest prompt ${largest} (target < 20000: ${largest < 20_000 ? 'met' : 'MISSED'}); state ${run.state}\n`
    )
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

await main()
