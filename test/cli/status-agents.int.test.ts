/**
 * `vba status` names every MCP agent that worked on a case: two clients (other names, other
 * versions) answer turns and ask queries through the real `vba mcp`; status named only the latest
 * as "the model". Now each is named, in order of first appearance, with what it did.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { vba } from '../helpers/cli.js'
import { connectMcp, textOf, type McpConnection } from '../helpers/mcp.js'
import { preparedDemoCase } from '../helpers/prepared-case.js'

const call = async (c: McpConnection, name: string, args: Record<string, unknown>) => {
  const r = await c.client.callTool({ name, arguments: args })
  assert.not.ok(r.isError, textOf(r))
  return r.structuredContent as Record<string, unknown> | undefined
}

const status = suite('vba status: the MCP agents of a case')

status('two MCP clients answered and asked: status names both, in order of first appearance', async () => {
  const { dir, profile } = await preparedDemoCase('', 'status-agents')
  const args = ['--config', profile, '--case', dir]
  // A third client only asks, before anyone answers.
  const c = await connectMcp(args, { name: 'asker-c', version: '' })
  try {
    await call(c, 'source_search', { text: 'npc_wolpertinger' })
  } finally {
    await c.close()
  }
  const a = await connectMcp(args, { name: 'agent-a', version: '1.0' })
  let evidence = ''
  try {
    await a.client.getPrompt({ name: 'investigate' })
    await call(a, 'interpretation_record', { summary: 'netting the wolpertinger despawns it' })
    evidence = String((await call(a, 'source_search', { text: 'wolpertinger' }))?.['evidence_id'])
  } finally {
    await a.close()
  }
  const b = await connectMcp(args, { name: 'agent-b', version: '2.0' })
  try {
    await call(b, 'hypothesis_propose', { statement: 'the net despawns it', evidence: [evidence] })
  } finally {
    await b.close()
  }
  const s = vba(['status', dir])
  assert.is(s.code, 0, s.stderr)
  const line = s.stdout.split('\n').find((l) => l.startsWith('model')) ?? ''
  assert.is(
    line,
    'models: asker-c (mcp, asked only), agent-a 1.0 (mcp), agent-b 2.0 (mcp); 0 tokens spent (0 prompt, 0 completion)'
  )
  const json = JSON.parse(vba(['status', dir, '--json']).stdout) as { models: unknown }
  assert.equal(json.models, [
    { kind: 'mcp', name: 'asker-c', version: '', endpoint: null, answered: false, asked: true },
    { kind: 'mcp', name: 'agent-a', version: '1.0', endpoint: null, answered: true, asked: true },
    { kind: 'mcp', name: 'agent-b', version: '2.0', endpoint: null, answered: true, asked: false }
  ])
})

status.run()
