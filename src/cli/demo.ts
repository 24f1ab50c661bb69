#!/usr/bin/env node
/**
 * `npm run demo [-- DIR]`: the main job on embedded defaults, nothing to configure. Creates a case,
 * appends commands (including an idempotent retry and a stale-generation conflict), verifies and
 * replays it, and prints where the case is.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as E from 'fp-ts/lib/Either.js'
import { initCase } from '../adapters/case-store/init.js'
import { openCase } from '../adapters/case-store/open.js'
import { appendCommand } from '../adapters/case-store/append.js'
import { objectRefOf } from '../adapters/case-store/objects.js'
import { verifyCase } from '../adapters/case-store/verify.js'
import { replayCase } from '../adapters/case-store/replay.js'
import { defaultProjections } from '../projections/defaults.js'
import type { Failure } from '../domain/failure.js'
import { formatFailure } from './io.js'
import { renderVerifyReport } from './case-verbs.js'
import { writeWorldSqlite } from '../demo/world-sqlite.js'
import { ALLOWED_WORLD_TABLES } from '../demo/world-fixture.js'
import { loadProfile } from '../adapters/config/profile.js'
import { createProjectResearch } from '../research/project-research.js'

const DEMO_PROFILE = `[database]
client = "better-sqlite3"
filename = "world.sqlite"
databases = ["world"]
snapshot_id = "demo-world-fixture"

[database.allowed_tables]
world = [${ALLOWED_WORLD_TABLES.map((t) => JSON.stringify(t)).join(', ')}]
`

const say = (line: string): void => {
  process.stdout.write(line + '\n')
}

const must = <A>(r: E.Either<Failure, A>): A => {
  if (E.isLeft(r)) {
    process.stderr.write(formatFailure(r.left) + '\n')
    process.exit(1)
  }
  return r.right
}

const main = async (): Promise<void> => {
  const target = process.argv[2] ?? path.join(mkdtempSync(path.join(os.tmpdir(), 'vba-demo-')), 'case')
  say(`1. create a case package in ${target}`)
  const decl = must(await initCase({ dir: target, title: 'Demo: quest giver does not offer quest 11117' })())
  const h = must(await openCase(target)())
  say(`   case ${decl.case_id}, generation 0`)

  const report = Buffer.from('Players report that creature 23487 no longer offers quest 11117 after the last restart.\n')
  const reportCommand = {
    commandId: 'demo-report',
    expectedGeneration: 0,
    events: [
      { type: 'NoteRecorded', actor: 'operator' as const, data: { text: 'Bug report received from the support queue.', format: 'plain' } },
      { type: 'AttachmentAdded', actor: 'operator' as const, data: { name: 'report.txt', object: objectRefOf(report, 'text/plain') } }
    ],
    objects: [report]
  }
  const first = must(await appendCommand(h, reportCommand)())
  say(`2. appended command ${first.commandId}: ${first.events.length} events and 1 object, generation ${first.generation}`)
  const retry = must(await appendCommand(h, reportCommand)())
  say(`3. resubmitted the same command id: ${retry.status}, nothing appended (generation ${retry.generation})`)
  const stale = await appendCommand(h, { commandId: 'demo-stale', expectedGeneration: 0, events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: 'based on an old view', format: 'plain' } }] })()
  say(`4. a command based on generation 0: ${E.isLeft(stale) ? formatFailure(stale.left) : 'unexpectedly accepted'}`)
  const note = must(await appendCommand(h, { commandId: 'demo-triage', expectedGeneration: first.generation, events: [{ type: 'NoteRecorded', actor: 'controller', data: { text: 'Triage: check the quest starter relation first.', format: 'plain' } }] })())
  say(`5. appended a triage note, generation ${note.generation}`)

  say('6. verify (chain, HEAD, every object):')
  for (const line of renderVerifyReport(must(await verifyCase(target)()))) say(`   ${line}`)
  const replay = must(await replayCase(target, defaultProjections())())
  say(`7. replay from the log alone: ${replay.generation} events, head ${replay.head_hash}`)
  say(`   summary: ${JSON.stringify(replay.views['summary']?.view)}`)

  // Research on the embedded default world database: an SQLite snapshot, read-only.
  const world = mkdtempSync(path.join(os.tmpdir(), 'vba-demo-world-'))
  writeWorldSqlite(path.join(world, 'world.sqlite'))
  const profileFile = path.join(world, 'project.toml')
  writeFileSync(profileFile, DEMO_PROFILE)
  const profile = must(await loadProfile(profileFile)())
  const research = createProjectResearch(profile)
  say(`8. research on the embedded world database (${path.join(world, 'world.sqlite')}, read-only):`)
  const starters = must(await research.query({ kind: 'database.rows', table: 'creature_queststarter', columns: ['id', 'quest'], filters: [{ column: 'quest', operator: 'eq', value: 11117 }], offset: 0, limit: 10 })())
  say(`   quest 11117 is started by: ${JSON.stringify(starters.result['rows'])} (complete: ${String(starters.result['complete_filtered_rows'])})`)
  const creatures = must(await research.query({ kind: 'database.rows', table: 'creature_template', columns: ['entry', 'name', 'npcflag', 'DamageModifier'], filters: [{ column: 'name', operator: 'contains', value: 'Wolpertinger' }], offset: 0, limit: 3 })())
  say(`   creatures named like "Wolpertinger": ${JSON.stringify(creatures.result['rows'])}`)
  say(`   has_more ${String(creatures.result['has_more'])}, next_offset ${String(creatures.result['next_offset'])}; origin ${JSON.stringify(creatures.origin)}`)
  const refused = await research.query({ kind: 'database.rows', table: 'account_secrets', columns: ['secret'], filters: [], offset: 0, limit: 1 })()
  say(`   a table outside the allowlist: ${E.isLeft(refused) ? formatFailure(refused.left) : 'unexpectedly read'}`)
  await research.close()
  say('')
  say(`case directory: ${target}`)
  say(`try: node dist/src/cli/main.js show ${target}`)
}

await main()
