/**
 * No two exported types of src share a name: a reader (and an editor's auto-import) can tell
 * `AdvanceOptions` of the client from the loop's `LoopOptions` by name alone.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import ts from 'typescript'
import { repoRoot } from './helpers/fs.js'

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : []
  })

/** The exported interfaces and type aliases declared in a source text. */
export const exportedTypes = (file: string, text: string): string[] =>
  ts
    .createSourceFile(file, text, ts.ScriptTarget.Latest)
    .statements.filter(
      (s): s is ts.InterfaceDeclaration | ts.TypeAliasDeclaration =>
        (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) &&
        (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    )
    .map((s) => s.name.text)

const names = suite('exported type names')

names('no two exported types in src share a name', () => {
  const src = path.join(repoRoot(), 'src')
  const by = new Map<string, string[]>()
  for (const file of walk(src)) {
    for (const name of exportedTypes(file, readFileSync(file, 'utf8')))
      by.set(name, [...(by.get(name) ?? []), path.relative(src, file)])
  }
  assert.ok(by.size > 100, 'exported types found')
  assert.equal(
    [...by].filter(([, files]) => files.length > 1).map(([name, files]) => `${name}: ${files.join(', ')}`),
    []
  )
})

names('the scanner sees exported interfaces and aliases, not local ones', () => {
  assert.equal(
    exportedTypes(
      'x.ts',
      'export interface A {}\ninterface B {}\nexport type C = string\ntype D = number\nexport const e = 1\n'
    ),
    ['A', 'C']
  )
})

names.run()
