/**
 * The bundled binary (scripts/bundle.mjs): dist/vba/main.js runs the CLI script with the code cache
 * made at build time (src/cli/script-loader.ts). This Node accepts the cache; a stale, damaged or
 * missing cache is not used and changes no answer; an optional peer loads; the line worker runs;
 * running the bin never writes the cache; and the package ships the bin, the script, its cache and
 * the workers.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { spawnSync } from 'node:child_process'
import { copyFileSync, cpSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { Worker } from 'node:worker_threads'
import { LINE_LAYOUT } from '../../src/adapters/case-store/line-layout.js'
import { loadCliScript, readCodeCache } from '../../src/cli/script-loader.js'
import { repoRoot, tempDir } from '../helpers/fs.js'
import { VBA_BIN } from '../helpers/cli.js'

const dist = path.join(repoRoot(), 'dist', 'vba')
const SCRIPT = path.join(dist, 'cli-script.js')
const CACHE = path.join(dist, 'cli-script.cache')

const bundle = suite('bundle')

/** stdout, stderr and the exit code of `node BIN ARGS`. */
const run = (bin: string, args: readonly string[]): string => {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
  return `${r.status}\n${r.stdout}\n${r.stderr}`
}

/** A copy of dist/vba inside dist/ (so the script still finds node_modules and config/). */
const copyOfBundle = (): string => {
  const d = path.join(repoRoot(), 'dist', `vba-copy-${process.pid}`)
  rmSync(d, { recursive: true, force: true })
  cpSync(dist, d, { recursive: true })
  return d
}

bundle('this Node accepts the code cache the build made of the script', () => {
  const loaded = loadCliScript(SCRIPT, CACHE)
  assert.is(loaded.cache, 'accepted')
  assert.type(loaded.exports.start, 'function')
  assert.is(loadCliScript(SCRIPT, null).cache, 'absent')
})

bundle('the script is ASCII (it is read as Latin-1)', () => {
  const bytes = readFileSync(SCRIPT)
  assert.is(
    bytes.findIndex((b) => b > 0x7f),
    -1
  )
})

bundle('a cache made of another script or damaged is not offered to V8', () => {
  const d = tempDir('vba-bundle')
  const source = readFileSync(SCRIPT)
  assert.ok(Buffer.isBuffer(readCodeCache(CACHE, source)))
  assert.is(readCodeCache(path.join(d, 'none.cache'), source), 'absent')
  // the same length with one byte changed: V8 itself would take the cache (it checks the length only)
  const other = Buffer.from(source)
  other[other.length - 2] = other[other.length - 2] === 0x20 ? 0x0a : 0x20
  assert.is(readCodeCache(CACHE, other), 'stale')
  const damaged = readFileSync(CACHE)
  const at = damaged.length - 100
  damaged[at] = (damaged[at] ?? 0) ^ 0xff
  writeFileSync(path.join(d, 'damaged.cache'), damaged)
  assert.is(readCodeCache(path.join(d, 'damaged.cache'), source), 'stale')
  writeFileSync(path.join(d, 'header.cache'), Buffer.concat([Buffer.from('vba-code-cache 2 x y\n'), damaged]))
  assert.is(readCodeCache(path.join(d, 'header.cache'), source), 'stale')
})

bundle('without its cache, or with a damaged one, the bin answers the same', () => {
  const copy = copyOfBundle()
  try {
    const bin = path.join(copy, 'main.js')
    const args = ['case', 'init', '--help']
    const expected = run(VBA_BIN, args)
    assert.ok(expected.startsWith('0\nUsage: vba case init'), expected)
    const damaged = readFileSync(CACHE)
    for (let i = damaged.indexOf(10) + 1; i < damaged.length; i += 97) damaged[i] = (damaged[i] ?? 0) ^ 0x5a
    writeFileSync(path.join(copy, 'cli-script.cache'), damaged)
    assert.is(run(bin, args), expected)
    rmSync(path.join(copy, 'cli-script.cache'))
    assert.is(run(bin, args), expected)
    copyFileSync(CACHE, path.join(copy, 'cli-script.cache'))
    assert.is(run(bin, args), expected)
    assert.is(run(bin, ['--version']), run(VBA_BIN, ['--version']))
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
})

bundle('the bin runs through a link Node does not resolve (node --preserve-symlinks-main)', () => {
  // Found attacking 22ab9f9: the bin looked for the script beside the link (ENOENT, a stack trace).
  const d = tempDir('vba-bundle-link')
  const link = path.join(d, 'vba')
  symlinkSync(path.join(dist, 'main.js'), link)
  const expected = run(VBA_BIN, ['research', '--help'])
  assert.ok(expected.startsWith('0\nUsage: vba research'), expected)
  for (const flags of [[], ['--preserve-symlinks-main'], ['--preserve-symlinks', '--preserve-symlinks-main']]) {
    const r = spawnSync(process.execPath, [...flags, link, 'research', '--help'], { encoding: 'utf8' })
    assert.is(`${r.status}\n${r.stdout}\n${r.stderr}`, expected, flags.join(' '))
  }
})

bundle('an optional peer loads from code the cache holds (an ES module, through the bin)', () => {
  // `vba demo-world` writes its database with better-sqlite3, imported on first use
  const d = tempDir('vba-bundle')
  const out = run(VBA_BIN, ['demo-world', path.join(d, 'world')])
  assert.ok(out.startsWith('0\n'), out)
  assert.ok(
    readFileSync(path.join(d, 'world', 'world.sqlite'))
      .subarray(0, 15)
      .toString() === 'SQLite format 3',
    out
  )
  assert.not.match(out, /ExperimentalWarning|dynamic import/)
})

bundle('the line worker starts as the bundle ships it (CommonJS) and checks a piece', async () => {
  const worker = new Worker(path.join(dist, 'line-worker.js'), { workerData: { canonical: true } })
  try {
    const piece = Buffer.from('not json\n{"also": "not an event"}\n')
    const buffer = piece.buffer.slice(piece.byteOffset, piece.byteOffset + piece.length)
    const message = (): Promise<{ id: number; lines: number; ready?: string }> =>
      new Promise((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
      })
    // It says it has loaded, with the layout of its ints (the folding thread refuses another build's).
    assert.is((await message()).ready, LINE_LAYOUT)
    const next = message()
    worker.postMessage({ id: 7, buffer, length: piece.length }, [buffer])
    const answer = await next
    assert.is(answer.id, 7)
    assert.is(answer.lines, 2)
  } finally {
    await worker.terminate()
  }
})

bundle('running the bin does not write the code cache', () => {
  const before = readFileSync(CACHE)
  assert.ok(run(VBA_BIN, ['--help']).startsWith('0\n'))
  assert.ok(run(VBA_BIN, ['research', '--help']).startsWith('0\n'))
  assert.ok(readFileSync(CACHE).equals(before))
})

bundle('the package ships the bin, the CLI script, its code cache and the workers', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: repoRoot(),
    encoding: 'utf8'
  })
  assert.is(r.status, 0, r.stderr)
  const files = new Set(
    (JSON.parse(r.stdout) as { files: { path: string }[] }[]).flatMap((p) => p.files.map((f) => f.path))
  )
  const built = readdirSync(dist)
  for (const f of [
    'main.js',
    'package.json',
    'cli-script.js',
    'cli-script.cache',
    'line-worker.js',
    'index-writer-worker.js'
  ])
    assert.ok(built.includes(f), `dist/vba/${f} is built`)
  for (const f of built) assert.ok(files.has(`dist/vba/${f}`), `dist/vba/${f} is in the package`)
})

bundle.run()
