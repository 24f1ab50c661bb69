/**
 * An optional member of the options and answers a controller hands the client takes `undefined`
 * as its absence (docs/usage.md, "The investigation loop"): under exactOptionalPropertyTypes a
 * controller forwards its own optional values as they are. Every optional property declared in
 * the client's option types, the model function's answer and the ready-made models' options,
 * nested type literals included, has `undefined` in its type.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import ts from 'typescript'
import { repoRoot } from '../helpers/fs.js'

const FILES = [
  'src/api/types.ts',
  'src/api/queue-types.ts',
  'src/investigation/model-fn.ts',
  'src/investigation/http-model.ts',
  'src/investigation/models.ts'
]

const hasUndefined = (t: ts.TypeNode | undefined): boolean =>
  t !== undefined &&
  (t.kind === ts.SyntaxKind.UndefinedKeyword ||
    (ts.isUnionTypeNode(t) && t.types.some(hasUndefined)) ||
    (ts.isParenthesizedTypeNode(t) && hasUndefined(t.type)))

/** `Name.member` of every optional property of the exported declarations without `undefined` in its type. */
export const optionalWithoutUndefined = (file: string, text: string): string[] => {
  const out: string[] = []
  const visit = (node: ts.Node, owner: string): void => {
    if (ts.isPropertySignature(node) && node.questionToken !== undefined && !hasUndefined(node.type))
      out.push(`${owner}.${node.name.getText()}`)
    ts.forEachChild(node, (c) => visit(c, owner))
  }
  for (const s of ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true).statements) {
    const exported = (ts.canHaveModifiers(s) ? (ts.getModifiers(s) ?? []) : []).some(
      (m) => m.kind === ts.SyntaxKind.ExportKeyword
    )
    if (exported && (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s))) visit(s, s.name.text)
  }
  return out
}

const optionals = suite('optional members take undefined')

optionals('every optional member of the public option and answer types takes undefined', () => {
  const found = FILES.flatMap((f) =>
    optionalWithoutUndefined(f, readFileSync(path.join(repoRoot(), f), 'utf8')).map((m) => `${f}: ${m}`)
  )
  assert.equal(found, [])
})

optionals('the scanner sees optional members without undefined, nested ones too', () => {
  assert.equal(
    optionalWithoutUndefined(
      'x.ts',
      'export interface A { a?: number; b?: number | undefined; c: number; d?: { e?: string } }\ninterface B { f?: number }\nexport type C = { g?: (x?: number) => void }\n'
    ),
    ['A.a', 'A.d', 'A.e', 'C.g']
  )
})

optionals.run()
