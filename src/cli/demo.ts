#!/usr/bin/env node
/**
 * `npm run demo [-- DIR]`: the main job on embedded defaults, nothing to configure. Creates a case,
 * appends commands (including an idempotent retry and a stale-generation conflict), verifies and
 * replays it, and prints where the case is.
 */
import { plural } from '../projections/query-kinds/parts.js'
import { attempt } from '../failures/error.js'
import { mkdtempSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../adapters/case-store/init.js'
import { addAttachment, recordNote } from '../commands/typed.js'
import { verifyCase } from '../adapters/case-store/verify.js'
import { replayCase } from '../adapters/case-store/replay.js'
import { defaultProjections } from '../projections/defaults.js'
import type { Failure } from '../failures/failure.js'
import { formatFailure, terminalText } from './io.js'
import { shellPath } from './next-step.js'
import { renderVerifyReport } from './case-verbs.js'
import { writeWorldSqlite } from '../demo/world-sqlite.js'
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'
import { cliOpenSource } from './source-open.js'
import { enrichmentConfig, prepareRevision } from '../commands/prepare.js'
import { advance } from '../investigation/loop.js'
import { startInvestigation } from '../commands/lifecycle-commands.js'
import { startSettings } from '../investigation/settings.js'
import { latestEvidence, type ScriptStep, scriptedModel } from '../investigation/scripted-model.js'
import { DEMO_DATABASE, writeDemoWorld } from '../demo/world.js'

const DEMO_PROFILE = DEMO_DATABASE

const say = (line: string): void => {
  process.stdout.write(`${terminalText(line)}\n`)
}

const orQuit = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) {
    process.stderr.write(`${formatFailure(r.left)}\n`)
    process.exit(1)
  }
  return r.right
}

/** Steps 1 to 7: create the case, append commands (a retry and a stale one among them), verify and replay it. */
const caseSteps = async (target: string): Promise<void> => {
  say(`1. create a case package in ${target}`)
  const decl = await initCase({ dir: target, title: 'Demo: quest giver does not offer quest 11117' })
  say(`   case ${decl.case_id}, generation 0`)

  const log = Buffer.from('Players report that creature 23487 no longer offers quest 11117 after the last restart.\n')
  const first = await recordNote(target, {
    text: 'Bug report received from the support queue.',
    commandId: 'demo-report'
  })
  const attached = await addAttachment(target, {
    name: 'support-ticket.txt',
    bytes: log,
    mediaType: 'text/plain',
    commandId: 'demo-attachment'
  })
  say(
    `2. recorded a note and an attachment (typed commands), generation ${attached.generation}; receipt ${attached.receipt.seq}:${attached.receipt.hash.slice(0, 19)}…`
  )
  const retry = await recordNote(target, {
    text: 'Bug report received from the support queue.',
    commandId: 'demo-report'
  })
  say(`3. resubmitted the same command id: ${retry.status}, nothing appended (generation ${attached.generation})`)
  const stale = await attempt(
    recordNote(target, {
      text: 'based on an old view',
      author: 'controller',
      commandId: 'demo-stale',
      expectedGeneration: first.generation - 1
    })
  )
  say(
    `4. a command based on generation ${first.generation - 1}: ${E.isLeft(stale) ? formatFailure(stale.left) : 'unexpectedly accepted'}`
  )
  const note = await recordNote(target, {
    text: 'Triage: check the quest starter relation first.',
    author: 'controller',
    commandId: 'demo-triage',
    expectedGeneration: attached.generation
  })
  say(`5. appended a triage note, generation ${note.generation}`)

  say('6. verify (chain, HEAD, every object):')
  for (const line of renderVerifyReport(await verifyCase(target))) say(`   ${line}`)
  const replay = await replayCase(target, defaultProjections())
  say(`7. replay from the log alone: ${replay.generation} events, head ${replay.head_hash}`)
  say(`   summary: ${JSON.stringify(replay.views['summary']?.view)}`)
}

/** Step 8: research on the embedded world database; returns the folder it was written to. */
const researchSteps = async (): Promise<string> => {
  // Research on the embedded default world database: an SQLite snapshot, read-only.
  const world = mkdtempSync(path.join(os.tmpdir(), 'vba-demo-world-'))
  await writeWorldSqlite(path.join(world, 'world.sqlite'))
  const profileFile = path.join(world, 'project.toml')
  writeFileSync(profileFile, DEMO_PROFILE)
  const profile = await loadProfile(profileFile)
  const research = createProjectResearch(profile)
  say(`8. research on the embedded world database (${path.join(world, 'world.sqlite')}, read-only):`)
  const starters = orQuit(
    await research.query({
      kind: 'database.rows',
      table: 'creature_queststarter',
      columns: ['id', 'quest'],
      filters: [{ column: 'quest', operator: 'eq', value: 11117 }],
      offset: 0,
      limit: 10
    })()
  )
  say(
    `   quest 11117 is started by: ${JSON.stringify(starters.result['rows'])} (complete: ${String(starters.result['complete_filtered_rows'])})`
  )
  const creatures = orQuit(
    await research.query({
      kind: 'database.rows',
      table: 'creature_template',
      columns: ['entry', 'name', 'npcflag', 'DamageModifier'],
      filters: [{ column: 'name', operator: 'contains', value: 'Wolpertinger' }],
      offset: 0,
      limit: 3
    })()
  )
  say(`   creatures named like "Wolpertinger": ${JSON.stringify(creatures.result['rows'])}`)
  say(
    `   has_more ${String(creatures.result['has_more'])}, next_offset ${String(creatures.result['next_offset'])}; origin ${JSON.stringify(creatures.origin)}`
  )
  const refused = await research.query({
    kind: 'database.rows',
    table: 'account_secrets',
    columns: ['secret'],
    filters: [],
    offset: 0,
    limit: 1
  })()
  say(`   a table outside the allowlist: ${E.isLeft(refused) ? formatFailure(refused.left) : 'unexpectedly read'}`)
  await research.close()
  return world
}

/** The scripted model's answers for the demo investigation, in order. */
const investigationScript = (): ScriptStep[] => [
  JSON.stringify({
    interpretation: {
      summary:
        'Netting a wild wolpertinger should give the item Wild Wolpertinger (32906); the creature despawns instead.'
    }
  }),
  JSON.stringify({
    next: {
      kind: 'tool',
      operation: 'project.query',
      arguments: { kind: 'source.context', text: '23487', path_prefix: 'src/server/' }
    }
  }),
  (p) =>
    JSON.stringify({
      next: {
        kind: 'hypothesis',
        action: 'propose',
        statement:
          'The C++ SpellHit handler despawns the creature before the SmartAI action that adds the item can run.',
        evidence: [latestEvidence(p)]
      }
    }),
  JSON.stringify({
    next: {
      kind: 'tool',
      operation: 'project.query',
      arguments: {
        kind: 'database.rows',
        table: 'smart_scripts',
        columns: ['entryorguid', 'source_type', 'id', 'action_type', 'action_param1', 'comment'],
        filters: [
          { column: 'entryorguid', operator: 'eq', value: 23487 },
          { column: 'source_type', operator: 'eq', value: 0 }
        ],
        offset: 0,
        limit: 10
      }
    }
  }),
  (p) =>
    JSON.stringify({
      next: {
        kind: 'hypothesis',
        action: 'update',
        hypothesis_id: 'H1',
        status: 'supported',
        evidence: [latestEvidence(p)],
        note: 'SmartAI adds the item on the same spell hit that the script answers with a despawn.'
      }
    }),
  (p) =>
    JSON.stringify({
      next: {
        kind: 'conclusion',
        summary:
          'The creature script and the SmartAI rows both react to the net; the script despawns first. Verify on the test realm.',
        hypotheses: ['H1'],
        evidence: [latestEvidence(p)]
      }
    })
]

/** Steps 9 to 11: prepare the case, run the scripted investigation and verify the case again. */
const investigationSteps = async (target: string, world: string): Promise<void> => {
  // Case preparation and a scripted investigation (no model is called: the answers are scripted).
  const demo = await writeDemoWorld(path.join(world, 'demo'))
  const full = await loadProfile(demo.profile)
  const investigator = createProjectResearch(full, { openSource: cliOpenSource })
  const prepared = await prepareRevision(target, investigator, orQuit(enrichmentConfig(full)), {
    report:
      'Players report that quest 11117 can no longer be completed: wild wolpertingers vanish when netted, but nothing is added to the bags.',
    entities: [{ type: 'quest', id: 11117 }]
  })
  say(
    `9. prepared revision ${prepared.revision}: ${plural(prepared.facts, 'fact')} from ${plural(prepared.captures, 'query')}${prepared.complete ? '' : ' (partial: see coverage)'}`
  )
  await startInvestigation(target, { settings: orQuit(await startSettings(full, investigator)) })
  const script = scriptedModel(investigationScript())
  const outcome = await advance(target, { model: script.model, research: investigator })
  await investigator.close()
  say(
    `10. scripted investigation: ${outcome.turns} model turns, state ${outcome.state}; every prompt and answer is in the case`
  )
  const finalReport = await verifyCase(target)
  say(
    `11. verify: ${finalReport.valid ? 'VALID' : 'INVALID'}, generation ${finalReport.generation}, ${finalReport.objects} objects`
  )
}

/** The numbered walk-through, then where the case is. */
const main = async (): Promise<void> => {
  const target = process.argv[2] ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'vba-demo-')), 'case')
  await caseSteps(target)
  const world = await researchSteps()
  await investigationSteps(target, world)
  say('')
  say(`case directory: ${target}`)
  say(`try: node dist/vba/main.js status ${shellPath(target)}   (or show, replay, verify, export)`)
}

await main()
