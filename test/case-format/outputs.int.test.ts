/**
 * Every text the library shows of a case stays what it was: the re-rendered and recorded prompts,
 * the capture and request texts, the reports and their capture bodies, the MCP tools and answers
 * of the example cases, the scripted investigation and a case with a query of every kind, compared
 * with the goldens in test/goldens (scripts/goldens.ts). A change that means to change an output
 * regenerates them (`node dist/scripts/goldens.js --write`) and shows the difference in the commit.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { GOLDEN_KINDS, goldenDifferences, goldenOutputs, type GoldenKind } from '../../scripts/goldens.js'
import { QUERY_KINDS } from '../../src/domain/query.js'

const outputs = suite('golden outputs')

outputs('every prompt, capture text, report and MCP answer is byte for byte its golden', async () => {
  const computed = await goldenOutputs()
  const counts = (Object.keys(GOLDEN_KINDS) as GoldenKind[]).map((k) => `${k} ${computed[k].size}`)
  process.stdout.write(`golden outputs: ${counts.join(', ')}\n`)
  // every kind of query is covered by at least one capture text
  const kinds = new Set([...computed['request-text'].values()].map((t) => t.split(' ')[0]))
  assert.equal([...kinds].sort(), [...QUERY_KINDS].sort(), 'scripts/goldens.ts asks a query of every kind')
  const diffs = goldenDifferences(computed)
  assert.equal(
    diffs,
    [],
    `outputs differ from test/goldens (node dist/scripts/goldens.js --dump DIR on both builds, then diff -r):\n${diffs.join('\n')}`
  )
})

outputs.run()
