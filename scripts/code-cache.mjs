#!/usr/bin/env node
// Writes V8's code cache of the CLI script, dist/vba/cli-script.cache (scripts/bundle.mjs runs this
// after writing dist/vba; never at run time: src/cli/script-loader.ts). The cache holds the code V8
// has compiled when it is made, so the script first runs what a later `vba research` runs: searches
// of a small git repository whose snapshot index another process built (the build's own code is not
// on that path, so it is left out of the cache), `--help` and `--version`.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { codeCacheHeader, loadCliScript } from '../dist/src/cli/script-loader.js'

const root = new URL('..', import.meta.url).pathname
const file = join(root, 'dist', 'vba', 'cli-script.js')
const out = join(root, 'dist', 'vba', 'cli-script.cache')
rmSync(out, { force: true })

const work = mkdtempSync(join(tmpdir(), 'vba-code-cache-'))
const git = (...args) => {
  const r = spawnSync('git', args, {
    cwd: join(work, 'repo'),
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'vba',
      GIT_AUTHOR_EMAIL: 'vba@localhost',
      GIT_COMMITTER_NAME: 'vba',
      GIT_COMMITTER_EMAIL: 'vba@localhost',
      GIT_CONFIG_NOSYSTEM: '1',
      HOME: work
    }
  })
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`)
  return r.stdout.trim()
}
try {
  // A repository in the shape of a game server's: scripts registering themselves, spells, a header.
  const scripts = join(work, 'repo', 'src', 'server', 'scripts', 'Zone')
  mkdirSync(scripts, { recursive: true })
  mkdirSync(join(work, 'repo', 'src', 'server', 'game'), { recursive: true })
  for (let i = 0; i < 40; i++)
    writeFileSync(
      join(scripts, `zone_${i}.cpp`),
      `// zone ${i}\n#include "ScriptMgr.h"\n\nenum Spells\n{\n    SPELL_FROST_${i} = ${10000 + i},\n};\n\n` +
        `class npc_guard_${i} : public CreatureScript\n{\npublic:\n    npc_guard_${i}() : CreatureScript("npc_guard_${i}") { }\n` +
        `    void HandleLoot(Player* player) { player->CastSpell(player, SPELL_FROST_${i}, true); }\n};\n\n` +
        `void AddSC_zone_${i}()\n{\n    new npc_guard_${i}();\n}\n`
    )
  writeFileSync(
    join(work, 'repo', 'src', 'server', 'game', 'SpellAuraDefines.h'),
    'enum AuraType\n{\n    SPELL_AURA_NONE = 0,\n    SPELL_AURA_MOD_STUN = 12,\n};\n'
  )
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('commit', '-q', '-m', 'warm-up')
  const commit = git('rev-parse', 'HEAD')
  const profile = join(work, 'project.toml')
  writeFileSync(
    profile,
    `[source]\nrepository = ${JSON.stringify(join(work, 'repo'))}\nurl = "warm-up"\ncommit = "${commit}"\ncache_dir = ${JSON.stringify(join(work, 'index'))}\n`
  )
  const query = (q) => {
    const f = join(work, `query-${Math.random().toString(36).slice(2)}.json`)
    writeFileSync(f, JSON.stringify(q))
    return ['research', '--config', profile, '--query', f]
  }
  // The first-ever search in a process of its own: it builds the snapshot index.
  const first = spawnSync(
    process.execPath,
    [join(root, 'dist', 'vba', 'main.js'), ...query({ kind: 'source.search', text: 'AddSC_' })],
    {
      encoding: 'utf8'
    }
  )
  if (first.status !== 0) throw new Error(`the first-ever search failed: ${first.stderr}`)

  const { script, exports } = loadCliScript(file, null)
  const runs = [
    query({ kind: 'source.search', text: 'AddSC_' }),
    query({ kind: 'source.search', text: 'HandleLoot(' }),
    query({ kind: 'source.search', text: 'SPELL_AURA_MOD_STUN' }),
    query({ kind: 'source.search', text: 'zz-no-such-text-zz' }),
    ['--help'],
    ['--version']
  ]
  for (const argv of runs) {
    await exports.start(argv)
    if (process.exitCode !== 0) throw new Error(`vba ${argv.join(' ')} exited with ${process.exitCode}`)
  }
  const data = script.createCachedData()
  writeFileSync(out, Buffer.concat([codeCacheHeader(readFileSync(file), data), data]))
} finally {
  rmSync(work, { recursive: true, force: true })
}
