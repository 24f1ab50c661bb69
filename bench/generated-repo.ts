/**
 * A generated game-server-like repository for the source benchmark and the snapshot-index tests:
 * C++-looking files of 14-28 KB under src/game/module_N/, four commits of history (every tenth file
 * changed per commit), written through `git fast-import` and packed by `git gc` (deltas).
 */
import { spawnSync, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'

/** Deterministic pseudo-random numbers (mulberry32). */
const rng = (seed: number) => () => {
  seed |= 0
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const WORDS = [
  'Creature',
  'Player',
  'Spell',
  'Aura',
  'Unit',
  'GameObject',
  'Quest',
  'Item',
  'Map',
  'Instance',
  'Script',
  'Event',
  'Timer',
  'Target',
  'Damage',
  'Heal',
  'Combat',
  'Movement',
  'Loot',
  'Group'
]

const fileText = (random: () => number, i: number, version: number): string => {
  const lines: string[] = [`// generated source file ${i}, version ${version}`, '#include "ScriptMgr.h"', '']
  const target = 14_000 + Math.floor(random() * 14_000)
  let size = 0
  let n = 0
  while (size < target) {
    const a = WORDS[Math.floor(random() * WORDS.length)] ?? 'Unit'
    const b = WORDS[Math.floor(random() * WORDS.length)] ?? 'Spell'
    const line =
      n % 40 === 0
        ? `void ${a}${b}Handler_${i}_${n}(${a}* ${a.toLowerCase()}, uint32 id)`
        : `    ${a.toLowerCase()}->Handle${b}(SPELL_${b.toUpperCase()}_${(i * 7 + n) % 50000}, ${Math.floor(random() * 100000)});`
    lines.push(line)
    size += line.length + 1
    n++
  }
  if (i % 500 === 7) lines.push(`void AddSC_generated_script_${i}() { new GeneratedScript_${i}(); }`)
  return `${lines.join('\n')}\n`
}

/** Creates a bare repository of `files` files in `dir` (plus `extra` files, by path, in the first commit); returns the commit of main. */
export const generateRepo = (dir: string, files: number, extra: Readonly<Record<string, string>> = {}): string => {
  mkdirSync(dir, { recursive: true })
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', dir])
  const random = rng(42)
  const texts = Array.from({ length: files }, (_, i) => fileText(random, i, 1))
  let stream = ''
  const chunks: string[] = []
  const commit = (message: string, changed: number[], version: number, n: number): void => {
    stream += `commit refs/heads/main\nmark :${n}\ncommitter bench <bench@example.org> ${1767225600 + n} +0000\ndata ${message.length}\n${message}\n`
    if (n > 1) stream += `from :${n - 1}\n`
    for (const i of changed) {
      if (version > 1)
        texts[i] = `${(texts[i] ?? '').replace(/version \d+/, `version ${version}`)}// changed in version ${version}\n`
      const body = texts[i] ?? ''
      stream += `M 100644 inline src/game/module_${Math.floor(i / 100)}/file_${i}.cpp\ndata ${Buffer.byteLength(body)}\n${body}\n`
      if (stream.length > 32 << 20) {
        chunks.push(stream)
        stream = ''
      }
    }
  }
  commit(
    'initial',
    texts.map((_, i) => i),
    1,
    1
  )
  for (const [p, body] of Object.entries(extra))
    stream += `M 100644 inline ${p}\ndata ${Buffer.byteLength(body)}\n${body}\n`
  for (let v = 2; v <= 4; v++)
    commit(
      `version ${v}`,
      texts.map((_, i) => i).filter((i) => i % 10 === v),
      v,
      v
    )
  chunks.push(stream)
  const r = spawnSync('git', ['fast-import', '--quiet'], { cwd: dir, input: chunks.join(''), maxBuffer: 1 << 30 })
  if (r.status !== 0) throw new Error(`fast-import failed: ${r.stderr.toString()}`)
  execFileSync('git', ['gc', '-q'], { cwd: dir })
  return execFileSync('git', ['rev-parse', 'main'], { cwd: dir, encoding: 'utf8' }).trim()
}

/**
 * The repository a source benchmark runs on: `repo` as given, else the generated repository of
 * `files` files under the temp dir (generated once, kept); with its commit (HEAD unless given).
 */
export const benchRepository = (
  repo: string | undefined,
  commit: string | undefined,
  files: number
): { readonly repo: string; readonly commit: string } => {
  let dir = repo
  if (dir === undefined) {
    dir = path.join(os.tmpdir(), `vba-bench-repo-${files}`)
    if (!existsSync(path.join(dir, 'HEAD'))) {
      process.stderr.write(`generating a repository of ${files} files in ${dir} (once) ...\n`)
      generateRepo(dir, files)
    }
  }
  dir = path.resolve(dir)
  return {
    repo: dir,
    commit: commit ?? execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()
  }
}
