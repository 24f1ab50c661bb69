/**
 * No runtime import cycle in src: the compiled modules (type-only imports are gone from them) are
 * scanned for static imports and re-exports, and every strongly connected component of more than
 * one module (or a module importing itself) is a finding. Dynamic `import()` is left out: it runs
 * after loading, so it cannot take part in a load-order cycle.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { repoRoot } from './helpers/fs.js'

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.js') ? [p] : []
  })

/** Static imports and re-exports of compiled JavaScript (relative ones only). */
export const staticImports = (text: string): string[] =>
  [...text.matchAll(/^\s*(?:import|export)\s+(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/gm)].map((m) => m[1] ?? '')

/** The cycles of a graph: its strongly connected components of two or more nodes, and self-loops (Tarjan). */
export const cyclesOf = (graph: ReadonlyMap<string, readonly string[]>): string[][] => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const out: string[][] = []
  const visit = (v: string): void => {
    index.set(v, next)
    low.set(v, next++)
    stack.push(v)
    onStack.add(v)
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, index.get(w) ?? 0))
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = []
      let w: string | undefined
      do {
        w = stack.pop()
        if (w === undefined) break
        onStack.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(scc.sort())
    }
  }
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v)
  return out
}

const cycles = suite('import cycles')

cycles('no runtime import cycle among the compiled modules of src', () => {
  const src = path.join(repoRoot(), 'dist', 'src')
  assert.ok(existsSync(src), 'compiled sources (npm test compiles first)')
  const graph = new Map<string, string[]>()
  for (const file of walk(src)) {
    const rel = path.relative(src, file)
    graph.set(
      rel,
      staticImports(readFileSync(file, 'utf8')).map((spec) =>
        path.relative(src, path.resolve(path.dirname(file), spec))
      )
    )
  }
  assert.ok(graph.size > 100, 'modules found')
  assert.equal(
    cyclesOf(graph).map((c) => c.join(' <-> ')),
    []
  )
})

cycles('the scanner and the cycle finder see what they must', () => {
  const js = `import { a } from './a.js';\nexport { b } from "../b.js";\nimport './side.js';\nexport * from './star.js';\nconst x = await import('./dyn.js');\nimport fs from 'node:fs';\n`
  assert.equal(staticImports(js), ['./a.js', '../b.js', './side.js', './star.js'])
  const g = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
    ['d', ['d']],
    ['e', ['a']]
  ])
  assert.equal(cyclesOf(g), [['a', 'b', 'c'], ['d']])
  assert.equal(
    cyclesOf(
      new Map([
        ['a', ['b']],
        ['b', []]
      ])
    ),
    []
  )
})

cycles.run()
