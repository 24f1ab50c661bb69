import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { repoRoot } from './helpers/fs.js'

/**
 * The pure core (src/failures, src/events, src/domain, src/projections) imports no IO. Allowed:
 * relative imports inside the core, fp-ts, io-ts, canonicalize, and node:crypto's hashing (pure
 * computation, no file, clock or network access).
 */
const ALLOWED = [/^\.\.?\//, /^fp-ts(\/|$)/, /^io-ts(\/|$)/, /^canonicalize$/, /^node:crypto$/]
const CORE = ['src/failures', 'src/events', 'src/domain', 'src/projections']

/**
 * The floors of src, bottom up (docs/architecture.md): a module imports only from its own floor
 * or floors below it. Folders on one floor do not import each other (mcp and api are beside each
 * other); version.ts and optional.ts (a helper for optional members) are below everything.
 */
export const FLOORS: ReadonlyArray<readonly string[]> = [
  ['version.ts', 'optional.ts'],
  ['failures'],
  ['events'],
  ['domain'],
  ['projections'],
  ['adapters'],
  ['research'],
  ['commands'],
  ['investigation'],
  ['report'],
  ['mcp', 'api', 'demo', 'testing', 'eval'],
  ['fp.ts'],
  ['index.ts', 'testing.ts'],
  ['cli']
]

const purity = suite('pure core')

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : []
  })

const importsOf = (text: string): string[] =>
  [
    ...text.matchAll(
      /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm
    )
  ].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? '')

purity('imports only pure modules, and relative imports stay inside the core', () => {
  const root = repoRoot()
  const files = CORE.flatMap((d) => walk(path.join(root, d)))
  assert.ok(files.length >= 10, 'core files found')
  const offenders: string[] = []
  for (const file of files) {
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!ALLOWED.some((re) => re.test(spec))) offenders.push(`${path.relative(root, file)} imports ${spec}`)
      if (spec.startsWith('.')) {
        const target = path.relative(root, path.resolve(path.dirname(file), spec))
        if (!CORE.some((c) => target.startsWith(c + path.sep)))
          offenders.push(`${path.relative(root, file)} reaches outside the core: ${spec}`)
      }
    }
  }
  assert.equal(offenders, [])
})

/** The floor of a file under src (its top folder or root file), or undefined outside src. */
const floorOf = (srcRel: string): { floor: number; top: string } | undefined => {
  const top = srcRel.split(path.sep)[0] ?? ''
  const floor = FLOORS.findIndex((f) => f.includes(top))
  return floor < 0 ? undefined : { floor, top }
}

purity('floors run one way: no import reaches a floor above its own, or a neighbour on its floor', () => {
  const root = repoRoot()
  const src = path.join(root, 'src')
  const files = walk(src)
  const unplaced = files.map((f) => path.relative(src, f)).filter((f) => floorOf(f) === undefined)
  assert.equal(unplaced, [], 'every file of src is on a floor')
  const offenders: string[] = []
  for (const file of files) {
    const from = floorOf(path.relative(src, file))
    if (from === undefined) continue
    for (const spec of importsOf(readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue
      const target = path.relative(src, path.resolve(path.dirname(file), spec)).replace(/\.js$/, '.ts')
      const to = floorOf(target)
      if (to === undefined) {
        offenders.push(`${path.relative(root, file)} imports outside src: ${spec}`)
        continue
      }
      if (to.floor > from.floor || (to.floor === from.floor && to.top !== from.top))
        offenders.push(`src/${path.relative(src, file)} (${from.top}) imports ${spec} (${to.top})`)
    }
  }
  assert.equal(offenders, [])
})

purity('the floor check would see an arrow up: research importing the loop, events importing the domain', () => {
  assert.ok(
    (floorOf(path.join('research', 'x.ts'))?.floor ?? 0) < (floorOf(path.join('investigation', 'loop.ts'))?.floor ?? 0)
  )
  assert.ok((floorOf(path.join('events', 'x.ts'))?.floor ?? 0) < (floorOf(path.join('domain', 'x.ts'))?.floor ?? 0))
  assert.ok(
    (floorOf(path.join('research', 'x.ts'))?.floor ?? 0) < (floorOf(path.join('commands', 'run.ts'))?.floor ?? 0),
    'research never writes a case'
  )
})

purity('the import scanner sees every import form', () => {
  const sample = `import * as fs from 'node:fs'\nimport { x } from "knex"\nexport { y } from './y.js'\nconst z = await import('mysql2')\nimport 'side-effect'\n`
  assert.equal(importsOf(sample), ['node:fs', 'knex', './y.js', 'mysql2', 'side-effect'])
})

purity.run()
