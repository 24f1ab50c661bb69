/**
 * A small game-core repository for the demo, built with the system git (one commit): the net's
 * spell script, and script files laid out as on an AzerothCore-family core (core-scripts.ts).
 */
import { execFileSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { CORE_SCRIPT_FILES } from './core-scripts.js'
import { makeDirsSync } from '../adapters/make-dirs.js'

const FILES: Record<string, string> = {
  'src/server/scripts/World/npc_wolpertinger.cpp': `#include "ScriptMgr.h"

enum Creatures
{
    NPC_WILD_WOLPERTINGER = 23487
};

enum Spells
{
    SPELL_WOLPERTINGER_NET = 41621
};

struct npc_wild_wolpertingerAI : public ScriptedAI
{
    void SpellHit(Unit* /*caster*/, SpellInfo const* spell) override
    {
        if (spell->Id == SPELL_WOLPERTINGER_NET)
            me->DespawnOrUnsummon();   // the item reward is left to SmartAI
    }
};

void AddSC_npc_wolpertinger()
{
    RegisterCreatureAI(npc_wild_wolpertingerAI);
}
`,
  'src/server/scripts/Spells/spell_item.cpp': `// spell_wolpertinger_net: the net's dummy effect
class spell_wolpertinger_net : public SpellScript
{
};

void AddSC_item_spell_scripts()
{
    RegisterSpellScript(spell_wolpertinger_net);
}
`,
  'src/server/scripts/ScriptLoader.cpp': `void AddSC_npc_wolpertinger();
void AddSC_item_spell_scripts();

void AddScripts()
{
    AddSC_npc_wolpertinger();
    AddSC_item_spell_scripts();
}
`
}

/** Every file of the demo core, by path. */
export const DEMO_CORE_FILES: Readonly<Record<string, string>> = { ...FILES, ...CORE_SCRIPT_FILES }

/** Creates the repository under `dir` and returns its commit. */
export const writeCoreRepo = (dir: string): string => {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'demo',
    GIT_AUTHOR_EMAIL: 'demo@example.org',
    GIT_COMMITTER_NAME: 'demo',
    GIT_COMMITTER_EMAIL: 'demo@example.org',
    GIT_AUTHOR_DATE: '2026-11-01T00:00:00Z',
    GIT_COMMITTER_DATE: '2026-11-01T00:00:00Z'
  }
  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim()
  makeDirsSync(dir)
  git('init', '-q', '-b', 'main')
  for (const [p, text] of Object.entries(DEMO_CORE_FILES)) {
    makeDirsSync(path.dirname(path.join(dir, p)))
    writeFileSync(path.join(dir, p), text)
  }
  git('add', '-A')
  git('commit', '-q', '-m', 'demo core')
  git('gc', '-q')
  return git('rev-parse', 'HEAD')
}
