/**
 * A real git repository for the source tests, built with the system git: packed with deltas
 * (several versions of large files, `git gc --aggressive`), with a symlink, a submodule entry, a
 * binary file, an oversized file, and a blob missing from the object store. Read only through
 * the library (isomorphic-git).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync, rmSync, symlinkSync, readdirSync, renameSync } from 'node:fs'
import * as path from 'node:path'
import { tempDir } from './fs.js'

export const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.org',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.org',
      GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z'
    },
    maxBuffer: 1 << 28
  }).trim()

/** A C++ source long enough for read windows (430 lines). */
export const LONG_FILE_LINES = 430
const longFile = (version: number): string =>
  `${Array.from({ length: LONG_FILE_LINES }, (_, i) => `    // line ${i + 1} of the long file, version ${i === 200 ? version : 1}: filler text so delta compression has something to do`).join('\n')}\n`

export const FILES: Record<string, string> = {
  'src/server/scripts/World/npc_wolpertinger.cpp': `#include "ScriptMgr.h"

enum Creatures
{
    NPC_WILD_WOLPERTINGER = 23487,
    NPC_DRUNKEN_WOLPERTINGER = 24766
};

struct npc_wild_wolpertingerAI : public ScriptedAI
{
    void SpellHit(Unit* caster, SpellInfo const* spell) override
    {
        if (spell->Id == SPELL_WOLPERTINGER_NET)
            me->DespawnOrUnsummon();
    }
};

void AddSC_npc_wolpertinger()
{
    new CreatureScript<npc_wild_wolpertingerAI>("npc_wild_wolpertinger");
}
`,
  'src/server/scripts/World/spell_brewfest.cpp': `#include "SpellScript.h"

// 23487 here is a spell id, not a creature: Pony Keg summon.
constexpr uint32 SPELL_PONY_KEG = 23487;

class spell_brewfest_pony_keg : public SpellScript
{
};

void AddSC_spell_brewfest()
{
    RegisterSpellScript(spell_brewfest_pony_keg);
}
`,
  'src/server/scripts/ScriptLoader.cpp': `void AddSC_npc_wolpertinger();
void AddSC_spell_brewfest();
void AddSC_unrelated_boss();

void AddScripts()
{
    AddSC_npc_wolpertinger();
    AddSC_spell_brewfest();
    AddSC_unrelated_boss();
}
`,
  'src/server/game/Long.cpp': longFile(1),
  'src/server/game/LongLines.cpp': `int a = 1;\n${'x'.repeat(2000)}\nint b = 2;\n`,
  'src/server/game/Wordy.h':
    'int Wolpertinger_count; // not the word Wolpertinger alone\nint Wolpertinger; int xWolpertinger;\n',
  'sql/base/world.sql':
    "CREATE TABLE `creature_template` (\n  `entry` INT UNSIGNED NOT NULL,\n  `name` VARCHAR(100)\n);\nINSERT INTO `creature_template` VALUES (23487, 'Wild Wolpertinger');\n",
  'tools/extract.py':
    'def wolpertinger_count(rows):\n    """Count Wolpertinger rows."""\n    return sum(1 for r in rows if r.name == "Wild Wolpertinger")\n',
  'docs/readme.md': 'Wolpertinger (not a text extension: never searched)\n',
  'src/server/game/crlf.cpp': 'int c = 1;\r\nint d = 2; // Wolpertinger\r\n'
}

export interface TestRepo {
  /** A working clone (with .git). */
  readonly dir: string
  /** A bare clone of the same history. */
  readonly bare: string
  /** The bound commit (has every fixture file, the symlink, the submodule and a missing blob). */
  readonly commit: string
  /** A later commit the branch moved to (changes Long.cpp and the wolpertinger script). */
  readonly later: string
  readonly missingPath: string
  readonly bigPath: string
}

export const buildTestRepo = (): TestRepo => {
  const root = tempDir('repo')
  const dir = path.join(root, 'core')
  mkdirSync(dir)
  git(dir, 'init', '-q', '-b', 'main')
  for (let v = 1; v <= 6; v++) {
    for (const [p, text] of Object.entries(FILES)) {
      mkdirSync(path.dirname(path.join(dir, p)), { recursive: true })
      writeFileSync(path.join(dir, p), p.endsWith('Long.cpp') ? longFile(v) : text)
    }
    git(dir, 'add', '-A')
    git(dir, 'commit', '-q', '-m', `version ${v}`)
  }
  // binary, oversized, symlink, submodule entry
  writeFileSync(
    path.join(dir, 'src/server/game/icon.cpp'),
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02, 0x57, 0x6f, 0x6c])
  )
  writeFileSync(
    path.join(dir, 'src/server/game/Huge.cpp'),
    `// Wolpertinger in a huge file\n${'int filler;\n'.repeat(300_000)}`
  )
  symlinkSync('npc_wolpertinger.cpp', path.join(dir, 'src/server/scripts/World/link_to_script.cpp'))
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'binary, huge, symlink')
  git(dir, 'gc', '-q', '--aggressive', '--prune=now')
  // A blob that exists only as a loose object, then deleted: the commit references a missing object.
  writeFileSync(path.join(dir, 'src/server/game/Lost.cpp'), 'int lost = 23487; // Wolpertinger\n')
  git(dir, 'add', '-A')
  // A submodule entry (gitlink) without a checkout: staged after `add -A`, which would drop it.
  git(dir, 'update-index', '--add', '--cacheinfo', `160000,${'a'.repeat(40)},dep/submodule`)
  git(dir, 'commit', '-q', '-m', 'lost blob, submodule')
  const commit = git(dir, 'rev-parse', 'HEAD')
  const lostBlob = git(dir, 'rev-parse', 'HEAD:src/server/game/Lost.cpp')
  const bare = path.join(root, 'core.git')
  git(root, 'clone', '-q', '--bare', '--no-local', dir, bare)
  // the bare clone packed it: rebuild its pack without the lost blob
  {
    const keep = git(bare, 'rev-list', '--objects', '--all')
      .split('\n')
      .map((l) => l.split(' ')[0] ?? '')
      .filter((o) => o !== lostBlob && o !== '')
    const packDir = path.join(bare, 'objects', 'pack')
    const staging = path.join(root, 'repack')
    mkdirSync(staging)
    execFileSync('git', ['pack-objects', '-q', path.join(staging, 'pack')], {
      cwd: bare,
      input: `${keep.join('\n')}\n`
    })
    for (const f of readdirSync(packDir)) rmSync(path.join(packDir, f))
    for (const f of readdirSync(staging)) renameSync(path.join(staging, f), path.join(packDir, f))
  }
  // The branch moves on; the working tree is edited afterwards. Neither may change the bound commit.
  writeFileSync(path.join(dir, 'src/server/game/Long.cpp'), longFile(99))
  writeFileSync(
    path.join(dir, 'src/server/scripts/World/npc_wolpertinger.cpp'),
    '// rewritten after the bound commit\n'
  )
  git(dir, 'add', '-A')
  git(dir, 'commit', '-q', '-m', 'later', '--allow-empty')
  const later = git(dir, 'rev-parse', 'HEAD')
  writeFileSync(
    path.join(dir, 'src/server/scripts/World/spell_brewfest.cpp'),
    '// edited in the working tree, never committed\n'
  )
  rmSync(path.join(dir, '.git', 'objects', lostBlob.slice(0, 2), lostBlob.slice(2)))
  return { dir, bare, commit, later, missingPath: 'src/server/game/Lost.cpp', bigPath: 'src/server/game/Huge.cpp' }
}
