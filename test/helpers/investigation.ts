/**
 * A whole investigation written through the library's typed commands, deterministically (fixed
 * clock and ids, a scripted model, the fixture world as an embedded SQLite file, no git): a
 * prepared revision, the start, a query recorded as evidence, a hypothesis, an operator note and a
 * conclusion. The examples and the rule tests forge on top of it.
 */
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../../src/fp.js'
import { loadProfile } from '../../src/fp.js'
import { fixedEnv } from '../../src/adapters/env.js'
import { createProjectResearch } from '../../src/research/project-research.js'
import { enrichmentConfig } from '../../src/commands/prepare.js'
import { prepareRevision } from '../../src/fp.js'
import { advance } from '../../src/fp.js'
import { startInvestigation } from '../../src/fp.js'
import { recordNote } from '../../src/fp.js'
import { settingsOf } from '../../src/investigation/settings.js'
import { latestEvidence, scriptedModel } from '../../src/investigation/scripted-model.js'
import Database from 'better-sqlite3'
import { writeWorldSqliteWith } from '../../src/demo/world-sqlite.js'
import { DEMO_DATABASE } from '../../src/demo/world.js'
import type { CaseAt } from '../../src/adapters/case-store/store.js'
import type { InvestigationSettings } from '../../src/events/settings.js'

const must = <A>(r: E.Either<unknown, A>): A => {
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left))
  return r.right
}

/** A database-only profile (no source) with a small enrichment and budget. */
export const INVESTIGATION_PROFILE = `${DEMO_DATABASE}
[budget]
total = 4

[loop]
max_invalid_responses = 2
retry_delay_ms = 60000

[enrichment]
max_queries = 12

[enrichment.entities.quest]
table = "quest_template"
id_column = "ID"
columns = ["ID", "LogTitle", "QuestDescription"]

[[enrichment.texts]]
table = "quest_template"
column = "QuestDescription"
role = "quest giver text"

[[enrichment.relationships]]
relation = "quest_starter"
from_table = "quest_template"
from_column = "ID"
table = "creature_queststarter"
column = "quest"
columns = ["id", "quest"]

[[enrichment.relationships]]
relation = "starter_creature"
from_table = "creature_queststarter"
from_column = "id"
from_id_column = "quest"
table = "creature_template"
column = "entry"
columns = ["entry", "name", "AIName"]
entity_type = "creature"
`

export const SMART_QUERY = {
  kind: 'database.rows',
  table: 'smart_scripts',
  columns: ['entryorguid', 'source_type', 'id', 'action_type', 'comment'],
  filters: [{ column: 'entryorguid', operator: 'eq', value: 23487 }],
  offset: 0,
  limit: 10
}

/** Writes the world (SQLite) and the profile into `worldDir`; returns the profile path. */
export const writeWorld = (worldDir: string): string => {
  writeWorldSqliteWith(Database, path.join(worldDir, 'world.sqlite'))
  const file = path.join(worldDir, 'project.toml')
  writeFileSync(file, INVESTIGATION_PROFILE)
  return file
}

/**
 * Writes the concluded investigation into `dir` (a directory that must not exist, or a case id
 * in a store, named case-investigation), with its world in `worldDir`, started with the profile's
 * settings as `settings` changes them. Deterministic: the same bytes on every run and machine.
 */
export const writeInvestigation = async (
  dir: CaseAt,
  worldDir: string,
  settings: (s: InvestigationSettings) => InvestigationSettings = (s) => s
): Promise<void> => {
  const env = fixedEnv('2026-11-30T10:00:00.000Z', 'inv')
  const profile = must(await loadProfile(writeWorld(worldDir))())
  const research = createProjectResearch(profile)
  try {
    const title = 'Quest 11117: wolpertingers vanish when netted'
    if (typeof dir === 'string') must(await initCase({ dir, caseId: 'case-investigation', title, env })())
    else await dir.store.create(dir.caseId, { caseId: dir.caseId, title, env })
    must(
      await prepareRevision(
        dir,
        research,
        must(enrichmentConfig(profile)),
        {
          report:
            'Players report that quest 11117 can no longer be completed: wild wolpertingers vanish when netted, but nothing is added to the bags.',
          entities: [{ type: 'quest', id: 11117 }]
        },
        { env }
      )()
    )
    must(await startInvestigation(dir, { settings: settings(must(settingsOf(profile))), env })())
    const first = scriptedModel([
      JSON.stringify({
        interpretation: { summary: 'Netting a wild wolpertinger should give an item; the creature despawns instead.' }
      }),
      JSON.stringify({ next: { kind: 'tool', operation: 'project.query', arguments: SMART_QUERY } }),
      (p) =>
        JSON.stringify({
          next: {
            kind: 'hypothesis',
            action: 'propose',
            statement: 'The SmartAI of creature 23487 despawns it on the net spell hit.',
            evidence: [latestEvidence(p)]
          }
        })
    ])
    must(await advance(dir, { model: first.model, research, env, maxTurns: 3 })())
    must(
      await recordNote(dir, {
        text: 'Reproduced on the test realm: the creature despawns, no item.',
        commandId: 'note-repro',
        env
      })()
    )
    const second = scriptedModel([
      JSON.stringify({
        next: {
          kind: 'conclusion',
          summary: 'The SmartAI despawn on spell hit races the item reward; fix the action order.',
          hypotheses: ['H1'],
          evidence: ['E4']
        }
      })
    ])
    must(await advance(dir, { model: second.model, research, env, maxTurns: 1 })())
  } finally {
    await research.close()
  }
}

/**
 * Writes an executable `--model-command` script at `file` that answers the interpretation and then
 * concludes at once (no evidence): the shortest investigation a worker or `vba investigate` runs.
 */
export const writeShortModel = (file: string): string => {
  writeFileSync(
    file,
    `#!/bin/sh
prompt=$(cat)
case "$prompt" in
  *'Answer with the interpretation.'*) echo '{"interpretation":{"summary":"Netting should give an item."}}' ;;
  *) echo '{"next":{"kind":"conclusion","summary":"Nothing found in this short run.","hypotheses":[],"evidence":[]}}' ;;
esac
`,
    { mode: 0o755 }
  )
  return file
}
