/**
 * A generated repository with three bugs and the commits that fixed them, the suite that names
 * them (a Markdown report, an issue exported by gh, a text report; truths as fix commits and as a
 * listed range), a profile for it (the SQLite fixture world, the TrinityCore adapter), and the
 * models the evaluation tests drive: an oracle that reads what the fix changed, a model that cites
 * the wrong file, one whose answers are garbage (its bug ends blocked).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { git } from './git-repo.js'
import { repoRoot, tempDir } from './fs.js'
import { sqliteProfile } from './world.js'
import type { EvalBug, EvalModel } from '../../src/eval/run.js'
import type { ModelFn } from '../../src/investigation/model-fn.js'
import { latestEvidence } from '../../src/investigation/scripted-model.js'

const filler = (n: number, what: string): string =>
  Array.from({ length: n }, (_, i) => `    // ${what}: line ${i + 1} of the surrounding code`).join('\n')

/** The buggy files (each bug's line marked), and what each fix changes. */
const FILES: Record<string, string> = {
  'src/server/scripts/Northrend/boss_frost_warden.cpp': `#include "ScriptMgr.h"
enum Spells { SPELL_FROST_NOVA = 71320, SPELL_ICE_LANCE = 71321 };
struct boss_frost_warden : public BossAI
{
${filler(30, 'frost warden')}
    void JustEngagedWith(Unit* who) override
    {
        events.ScheduleEvent(EVENT_NOVA, 0ms); // BUG-A
    }
${filler(30, 'frost warden')}
};
void AddSC_boss_frost_warden() { RegisterCreatureAI(boss_frost_warden); }
`,
  'src/server/scripts/Spells/spell_paladin.cpp': `#include "ScriptMgr.h"
// 20375 - Seal of Command
class spell_pal_seal_of_command : public AuraScript
{
${filler(40, 'seal of command')}
    void HandleProc(AuraEffect const* aurEff, ProcEventInfo& eventInfo)
    {
        Unit* target = eventInfo.GetActionTarget();
        GetTarget()->CastSpell(target, 20424, true); // BUG-B
    }
${filler(20, 'seal of command')}
};
void AddSC_paladin_spell_scripts() { RegisterSpellScript(spell_pal_seal_of_command); }
`,
  'src/server/game/Entities/Pet/Pet.cpp': `#include "Pet.h"
${filler(60, 'pet')}
void Pet::Summon(Player* owner)
{
    owner->SetMinion(this, true); // BUG-C
}
${filler(20, 'pet')}
`,
  'src/server/game/Entities/Unit/Unit.cpp': `#include "Unit.h"
${filler(80, 'unit')}
`
}

const FIXES: Array<{ file: string; from: string; to: string }> = [
  { file: 'src/server/scripts/Northrend/boss_frost_warden.cpp', from: '0ms); // BUG-A', to: '5s); // fixed' },
  {
    file: 'src/server/scripts/Spells/spell_paladin.cpp',
    from: '        GetTarget()->CastSpell(target, 20424, true); // BUG-B',
    to: '        if (target && target->IsAlive())\n            GetTarget()->CastSpell(target, 20424, true);'
  },
  {
    file: 'src/server/game/Entities/Pet/Pet.cpp',
    from: '    owner->SetMinion(this, true); // BUG-C',
    to: '    if (!owner->IsBeingTeleported())\n        owner->SetMinion(this, true);'
  }
]

export interface EvalFixture {
  readonly repo: string
  /** The commit before each fix, and each fix, in order a, b, c. */
  readonly commits: readonly string[]
  readonly fixes: readonly string[]
  readonly suite: string
  readonly profile: string
  /** The same profile without [source]: the repository comes from --repository. */
  readonly sourceless: string
}

/** Writes the repository, the suite and the profile into fresh temporary folders. */
export const writeEvalFixture = (): EvalFixture => {
  const root = tempDir('eval')
  const repo = path.join(root, 'core')
  mkdirSync(repo)
  git(repo, 'init', '-q', '-b', 'main')
  for (const [p, text] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(repo, p)), { recursive: true })
    writeFileSync(path.join(repo, p), text)
  }
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'the core with three bugs')
  const commits: string[] = []
  const fixes: string[] = []
  for (const [i, f] of FIXES.entries()) {
    commits.push(git(repo, 'rev-parse', 'HEAD'))
    const file = path.join(repo, f.file)
    writeFileSync(file, readFileSync(file, 'utf8').replace(f.from, f.to))
    git(repo, 'commit', '-q', '-am', `fix bug ${'abc'[i]}`)
    fixes.push(git(repo, 'rev-parse', 'HEAD'))
  }
  const suite = path.join(root, 'suite')
  const bug = (id: string, report: [string, string], truth: Record<string, unknown>): void => {
    mkdirSync(path.join(suite, id), { recursive: true })
    writeFileSync(path.join(suite, id, report[0]), report[1])
    writeFileSync(path.join(suite, id, 'truth.json'), `${JSON.stringify(truth, null, 2)}\n`)
  }
  bug(
    'bug-a',
    [
      'report.md',
      '# Frost Warden casts Frost Nova at once\n\nThe Frost Warden casts Frost Nova the moment it is pulled.\n'
    ],
    { commit: commits[0], fix_commit: fixes[0], title: 'Frost Warden novas at once' }
  )
  bug(
    'bug-b',
    [
      'report.json',
      JSON.stringify({
        number: 5517,
        title: 'Seal of Command gives an Invalid Target error on kills',
        body: 'Killing a creature with Seal of Command active shows Invalid Target.',
        url: 'https://github.com/example/core/issues/5517',
        labels: [{ name: 'Spell' }],
        comments: []
      })
    ],
    { commit: commits[1], fix_commit: fixes[1] }
  )
  bug('bug-c', ['report.txt', 'My pet is summoned while I am being teleported and then it is lost.\n'], {
    commit: commits[2],
    changed: [{ path: 'src/server/game/Entities/Pet/Pet.cpp', lines: [64, 64] }],
    title: 'Pet summoned during a teleport'
  })
  const adapter = readFileSync(path.join(repoRoot(), 'config', 'trinitycore.toml'), 'utf8')
  const profile = sqliteProfile(
    `\n[source]\nrepository = ${JSON.stringify(repo)}\nurl = "https://example.org/core.git"\ncommit = "${commits[0]}"\ncache = false\n\n[budget]\ntotal = 8\n\n[loop]\nmax_invalid_responses = 2\nretry_delay_ms = 600000\n\n${adapter}`
  )
  const sourceless = sqliteProfile(
    `\n[budget]\ntotal = 8\n\n[loop]\nmax_invalid_responses = 2\nretry_delay_ms = 600000\n\n${adapter}`
  )
  return { repo, commits, fixes, suite, profile, sourceless }
}

const turnOf = (prompt: string): 'interpretation' | 'investigation' =>
  /Phase: interpretation/.test(prompt) ? 'interpretation' : 'investigation'

/** A model that reads `place` once, proposes H1 on it and concludes: prompt-driven, no state. */
export const readerBrain =
  (place: (prompt: string) => { path: string; start: number; end: number }) =>
  (prompt: string): string => {
    if (turnOf(prompt) === 'interpretation') return JSON.stringify({ interpretation: { summary: 'The report.' } })
    const evidence = latestEvidence(prompt)
    if (evidence === null)
      return JSON.stringify({
        next: {
          kind: 'tool',
          operation: 'project.query',
          arguments: {
            kind: 'source.read',
            path: place(prompt).path,
            start_line: place(prompt).start,
            end_line: place(prompt).end
          }
        }
      })
    if (!/^ {2}H1 \[/m.test(prompt))
      return JSON.stringify({
        next: {
          kind: 'hypothesis',
          action: 'propose',
          statement: 'The cause is in the code read.',
          evidence: [evidence]
        }
      })
    return JSON.stringify({ next: { kind: 'conclusion', summary: 'Found.', hypotheses: ['H1'], evidence: [evidence] } })
  }

const fnOf =
  (brain: (prompt: string) => string): ModelFn =>
  async ({ prompt }) =>
    brain(prompt)

/** The oracle: reads the first changed range (a few lines around it) of its bug. */
export const oracleModel: EvalModel = (bug: EvalBug) => {
  const c = bug.changed[0]
  if (c === undefined) throw new Error(`${bug.id} has no changed range`)
  return fnOf(readerBrain(() => ({ path: c.path, start: Math.max(1, c.lines[0] - 3), end: c.lines[1] + 3 })))
}

/** A model that always cites a file no fix changed. */
export const wrongFileModel: EvalModel = () =>
  fnOf(readerBrain(() => ({ path: 'src/server/game/Entities/Unit/Unit.cpp', start: 1, end: 20 })))

/** Answers that are never valid JSON: the investigation blocks (INVALID_LLM_RESPONSES). */
export const garbageModel: EvalModel = () => async () => 'I think it is the pet code, but I will not answer in JSON.'
