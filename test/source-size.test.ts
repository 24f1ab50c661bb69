/**
 * The house size limits, kept: no file in src over 400 lines and no function (declaration, arrow,
 * method, accessor) over 100 lines, counted from its first to its last line. The TypeScript
 * compiler's parser reads each src file; `PENDING` names the functions not yet split, and each of
 * them must still be over the limit (so the list can only shrink).
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import ts from 'typescript'
import { repoRoot } from './helpers/fs.js'

const MAX_FILE_LINES = 400
const MAX_FUNCTION_LINES = 100

/** Functions still over the limit, as `path:name` (name: the declared or assigned name); to be split. */
const PENDING = new Set<string>([])

const walk = (dir: string): string[] =>
  readdirSync(dir).flatMap((n) => {
    const p = path.join(dir, n)
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : []
  })

/**
 * The name a function is known by: its own, or the variable or property it is assigned to; an
 * anonymous one (a callback) goes by the nearest named node around it.
 */
const nameOf = (node: ts.Node): string => {
  for (let n: ts.Node | undefined = node; n !== undefined; n = n.parent) {
    const own = (n as ts.FunctionLikeDeclaration).name
    if (own !== undefined && ts.isIdentifier(own)) return own.text
    const parent = n.parent
    if (
      parent !== undefined &&
      (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
      ts.isIdentifier(parent.name)
    )
      return parent.name.text
  }
  return '(anonymous)'
}

/** A function over the limit: where it is, its name and its length in lines. */
interface LongFunction {
  readonly where: string
  readonly key: string
  readonly lines: number
}

/** Every function over `MAX_FUNCTION_LINES` in one source file, outermost first. */
export const longFunctions = (file: string, text: string): LongFunction[] => {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const out: LongFunction[] = []
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line
      const last = sf.getLineAndCharacterOfPosition(node.end).line
      const lines = last - first + 1
      if (lines > MAX_FUNCTION_LINES) out.push({ where: `${file}:${first + 1}`, key: `${file}:${nameOf(node)}`, lines })
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return out
}

const test = suite('source size')
const root = repoRoot()
const sources = walk(path.join(root, 'src')).map((p) => {
  const file = path.relative(root, p).split(path.sep).join('/')
  return { file, text: readFileSync(p, 'utf8') }
})

test('no file in src is over 400 lines', () => {
  const long = sources
    .filter((s) => s.text.split('\n').length > MAX_FILE_LINES)
    .map((s) => `${s.file}: ${s.text.split('\n').length}`)
  assert.equal(long, [])
})

test('no function in src is over 100 lines (but the pending ones, which still are)', () => {
  const long = sources.flatMap((s) => longFunctions(s.file, s.text))
  const outside = long.filter((f) => !PENDING.has(f.key)).map((f) => `${f.where} (${f.key}): ${f.lines} lines`)
  assert.equal(outside, [], 'split these functions (named helpers) to 100 lines or fewer')
  const keys = new Set(long.map((f) => f.key))
  const done = [...PENDING].filter((k) => !keys.has(k))
  assert.equal(done, [], 'these are within the limit now: take them off PENDING')
})

test('the checker finds a long arrow function and measures it by its lines', () => {
  const body = Array.from({ length: 101 }, (_, i) => `  const v${i} = ${i}`).join('\n')
  const found = longFunctions(
    'x.ts',
    `export const big = (): void => {\n${body}\n}\nexport function small(): void {}\n`
  )
  assert.equal(found, [{ where: 'x.ts:1', key: 'x.ts:big', lines: 103 }])
  assert.equal(longFunctions('x.ts', 'const f = () => {\n}\n'), [])
})

test.run()
