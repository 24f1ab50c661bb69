/** docs/usage.md shows real prompts of the scripted investigation: regenerated here, they must be the same bytes. */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import { examplePrompts, USAGE, withPrompts } from '../../scripts/prompt-examples.js'

const docs = suite('the prompts in docs/usage.md')

docs('are the prompts the library renders today (npm run prompt-examples rewrites them)', async () => {
  const usage = readFileSync(USAGE(), 'utf8')
  const turns = [...usage.matchAll(/<!-- prompt turn (\d+) -->/g)].map((m) => Number(m[1]))
  assert.equal(turns, [1, 3, 8], 'the interpretation phase, the turn after source.context, the conclusion turn')
  const fresh = withPrompts(usage, await examplePrompts())
  assert.ok(fresh === usage, 'docs/usage.md differs from the prompts rendered now: run npm run prompt-examples')
})

docs.run()
