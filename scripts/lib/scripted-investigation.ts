/**
 * The scripted investigation of issue 19, on a demo world (or any profile binding the demo world
 * database and a core with the demo's scripts): interpret; source.context "23487" under
 * src/server/; source.read of the net's spell script; the spell_script_names row of the net; a
 * table outside the allowlist; a lab test, answered by the operator's feedback; a hypothesis citing
 * the code and the rows; a conclusion. Deterministic (fixed clock and ids, a scripted model), so
 * the docs can show its prompts and a test can check they do not drift. Used by the docs script,
 * the tests and bench/prompt-size.
 */
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { openSourceResearch } from '../../src/research/source/open.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import type { AdvanceStep } from '../../src/investigation/loop.js'
import { advance } from '../../src/fp.js'
import { recordFeedback, startInvestigation } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { scriptedModel, type ScriptStep } from '../../src/investigation/scripted-model.js'

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}

export const REPORT =
  'Players cannot complete quest 11117: a wild wolpertinger (creature 23487) vanishes when it is netted, and no Wild Wolpertinger is added to the bags.'
export const FEEDBACK =
  'Netted three on the test realm: each despawns at once; no Wild Wolpertinger item is added. The combat log shows the net spell 41621 hitting.'

const query = (args: Record<string, unknown>): string =>
  JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: args } })
/** The evidence id the prompt names as its latest result. */
const latest = (prompt: string): string => /Latest result (E\d+)/.exec(prompt)?.[1] ?? 'E1'

export interface ScriptedRun {
  /** Every prompt the model received, turn by turn. */
  readonly prompts: readonly string[]
  readonly steps: readonly AdvanceStep[]
  readonly state: string
}

/** Runs the scripted investigation in a new case `dir` with the world of `profileFile`. */
export const runScriptedInvestigation = async (profileFile: string, dir: string): Promise<ScriptedRun> => {
  const env = fixedEnv('2026-11-30T09:00:00.000Z', 'wm')
  const profile = must(await loadProfile(profileFile)())
  const research = createProjectResearch(profile, { openSource: openSourceResearch })
  const steps: AdvanceStep[] = []
  const onStep = (s: AdvanceStep): void => {
    steps.push(s)
  }
  const seen: Record<string, string> = {}
  try {
    must(
      await initCase({ dir, caseId: 'case-working-memory', title: 'Quest 11117: netted wolpertingers vanish', env })()
    )
    must(
      await prepareRevision(
        dir,
        research,
        must(enrichmentConfig(profile)),
        { report: REPORT, entities: [{ type: 'creature', id: 23487 }] },
        { env }
      )()
    )
    must(await startInvestigation(dir, { settings: must(settingsOf(profile)), env })())
    const first: ScriptStep[] = [
      JSON.stringify({
        interpretation: {
          summary:
            'Netting a wild wolpertinger (23487) with the Wolpertinger Net should add the item Wild Wolpertinger; the creature despawns instead and nothing is added.'
        }
      }),
      query({ kind: 'source.context', text: '23487', path_prefix: 'src/server/' }),
      (p) => {
        seen['context'] = latest(p)
        return query({
          kind: 'source.read',
          path: 'src/server/scripts/Events/brewfest.cpp',
          start_line: 1028,
          end_line: 1058
        })
      },
      (p) => {
        seen['read'] = latest(p)
        return query({
          kind: 'database.rows',
          table: 'spell_script_names',
          columns: ['spell_id', 'ScriptName'],
          filters: [{ column: 'spell_id', operator: 'eq', value: 41621 }],
          offset: 0,
          limit: 10
        })
      },
      (p) => {
        seen['rows'] = latest(p)
        return query({
          kind: 'database.rows',
          table: 'spell_dbc',
          columns: ['ID', 'Effect1'],
          filters: [{ column: 'ID', operator: 'eq', value: 41621 }],
          offset: 0,
          limit: 5
        })
      },
      JSON.stringify({
        next: {
          kind: 'lab_test',
          description: 'Net three wild wolpertingers on the test realm and watch the bags and the combat log.'
        }
      })
    ]
    const a = scriptedModel(first)
    must(await advance(dir, { model: a.model, research, env, onStep })())
    must(await recordFeedback(dir, 'L1', FEEDBACK, { env })())
    const b = scriptedModel([
      () =>
        JSON.stringify({
          next: {
            kind: 'hypothesis',
            action: 'propose',
            statement:
              "The net's spell script spell_brewfest_wolpertinger_net despawns the creature on the hit, before the creature's SmartAI can add the item.",
            evidence: [seen['context'] ?? 'E1', seen['read'] ?? 'E1', seen['rows'] ?? 'E1']
          }
        }),
      JSON.stringify({
        next: {
          kind: 'conclusion',
          summary:
            "The spell script despawns the wolpertinger on the net's hit; the SmartAI action that adds the item never runs. Let the script give the item or leave the despawn to SmartAI.",
          hypotheses: ['H1'],
          evidence: [seen['read'] ?? 'E1']
        }
      })
    ])
    const done = must(await advance(dir, { model: b.model, research, env, onStep })())
    return { prompts: [...a.prompts, ...b.prompts], steps, state: done.state }
  } finally {
    await research.close()
  }
}
