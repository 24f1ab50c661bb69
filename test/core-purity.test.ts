import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { repoRoot } from './helpers/fs.js'

/**
 * The pure core (src/domain, src/events, src/projections) imports no IO. Allowed: relative
 * imports inside the core, fp-ts, io-ts, canonicalize, and node:crypto's hashing (pure
 * computation, no file, clock or network access).
 */
const ALLOWED = [/^\.\.?\//, /^fp-ts(\/|$)/, /^io-ts(\/|$)/, /^canonicalize$/, /^node:crypto$/]
const CORE = ['src/domain', 'src/events', 'src/projections']

const purity = suite('pure core')

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : []
  })

const importsOf = (text: string): string[] =>
  [...text.matchAll(/(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|require\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\s+['"]([^'"]+)['"]/gm)]
    .map((m) => m[1] ?? m[2] ?? m[3] ?? m[4] ?? '')

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
        if (!CORE.some((c) => target.startsWith(c + path.sep))) offenders.push(`${path.relative(root, file)} reaches outside the core: ${spec}`)
      }
    }
  }
  assert.equal(offenders, [])
})

purity('the import scanner sees every import form', () => {
  const sample = `import * as fs from 'node:fs'\nimport { x } from "knex"\nexport { y } from './y.js'\nconst z = await import('mysql2')\nimport 'side-effect'\n`
  assert.equal(importsOf(sample), ['node:fs', 'knex', './y.js', 'mysql2', 'side-effect'])
})

purity.run()
