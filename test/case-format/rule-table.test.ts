import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { RULES } from '../../src/domain/rules.js'
import { repoRoot } from '../helpers/fs.js'

// case-format/SPEC.md's rule table: `| CODE | `rule`, `rule` | meaning |`, the code carried down from the row above.
const specRules = (): Map<string, string> => {
  const spec = readFileSync(path.join(repoRoot(), 'case-format', 'SPEC.md'), 'utf8')
  const start = spec.indexOf('| code | rule | what it means |')
  assert.ok(start >= 0, 'SPEC.md has the rule table')
  const rows = spec.slice(start).split('\n').slice(2)
  const out = new Map<string, string>()
  let code = ''
  for (const row of rows) {
    if (!row.startsWith('|')) break
    const [, family, rules] = row.split('|').map((c) => c.trim())
    if (family !== undefined && family !== '') code = family.replace(/`/g, '')
    for (const m of (rules ?? '').matchAll(/`([a-z]+\.[a-z-]+)`/g)) {
      assert.not.ok(out.has(m[1]!), `${m[1]!} is listed once`)
      out.set(m[1]!, code)
    }
  }
  return out
}

test('SPEC.md lists exactly the rules the code checks, each under its family', () => {
  const spec = specRules()
  assert.equal([...spec.keys()].sort(), Object.keys(RULES).sort())
  for (const [rule, code] of spec) assert.is(code, RULES[rule as keyof typeof RULES], rule)
})

test.run()
