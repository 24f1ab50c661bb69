/**
 * An agent runs a whole investigation through `vba mcp` with the official SDK's Client over stdio:
 * the prompt investigate, research, the interpretation, hypotheses, the conclusion; each decision
 * decided by the loop's answer decider, refused with its codes, recorded as a turn with the
 * agent's name; the case verifies and its report names the agent. And the defects of issue 32:
 * paths, a read past the end, argument-shape errors, oversize messages, the start, hints, wording.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { nextPrompt, verifyCase } from '../../src/fp.js'
import { right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import {
  caseEvents as events,
  connectMcp,
  mcpWorld,
  rejection,
  textOf,
  WOLF,
  type McpConnection
} from '../helpers/mcp.js'

const { profile, newCase } = await mcpWorld('case-agent', 40)
const open = (dir: string): Promise<McpConnection> => connectMcp(['--config', profile, '--case', dir])
const call = async (c: McpConnection, name: string, args: Record<string, unknown>) => {
  const r = await c.client.callTool({ name, arguments: args })
  return { r, text: textOf(r), s: r.structuredContent as Record<string, unknown> | undefined }
}

const agent = suite('vba mcp: an agent investigates')

agent(
  'research, interpretation, hypotheses and the conclusion through the tools: decided by the loop rules, recorded as turns with the agent, the case verifies and the report names the agent',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    let changed = 0
    c.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++
    })
    try {
      const names = async () => (await c.client.listTools()).tools.map((t) => t.name)
      assert.ok((await names()).includes('interpretation_record'))
      assert.not.ok((await names()).includes('conclude'), 'no conclusion before the interpretation')
      // The prompt is the loop's prompt for the next turn (and starts the case).
      const prompt = await c.client.getPrompt({ name: 'investigate' })
      const text = (prompt.messages[0]?.content as { text: string }).text
      const loop = right(await nextPrompt(dir)())
      assert.ok(text.endsWith(loop.text), 'the same text a model in the loop sees')
      assert.match(text, 'interpretation_record')
      const contract = await c.client.readResource({ uri: 'vba://case/contract' })
      assert.ok(
        loop.text.startsWith((contract.contents[0] as { text: string }).text),
        'the contract is the stable part'
      )

      const early = await call(c, 'conclude', { summary: 'x', hypotheses: [], evidence: [] })
      assert.ok(early.r.isError)
      assert.ok(early.text.startsWith('CASE_NOT_ADVANCEABLE: '), early.text)
      const interpreted = await call(c, 'interpretation_record', { summary: 'netting the wolpertinger despawns it' })
      assert.not.ok(interpreted.r.isError, interpreted.text)
      assert.equal(interpreted.s, {
        turn: 1,
        decided: 'interpretation recorded; the case is INVESTIGATING',
        state: 'INVESTIGATING'
      })
      assert.ok((await names()).includes('conclude'))
      assert.not.ok((await names()).includes('interpretation_record'))

      const read = await call(c, 'source_read', { path: WOLF, start_line: 1, end_line: 20 })
      const e = String(read.s?.['evidence_id'])
      const bad = await call(c, 'hypothesis_propose', { statement: 'the net despawns it', evidence: ['E99'] })
      assert.ok(bad.r.isError)
      assert.ok(bad.text.startsWith('EVIDENCE_UNKNOWN: '), bad.text)
      assert.match(bad.text, 'Recorded in the case as a rejected decision of turn 2 (1 of at most')
      const shape = await rejection(c.client.callTool({ name: 'hypothesis_propose', arguments: { statement: 1 } }))
      assert.is(shape.code, -32602)
      assert.ok(shape.message.startsWith('MCP error -32602: INVALID_ARGUMENT: '), shape.message)
      // an answer too large for the decider is refused before it is recorded (it was kept whole)
      const beforeHuge = events(dir).length
      const huge = await rejection(
        c.client.callTool({ name: 'hypothesis_propose', arguments: { statement: 'x'.repeat(250_000), evidence: [e] } })
      )
      assert.is(huge.code, -32602)
      assert.match(huge.message, 'over 200000: nothing was recorded')
      assert.is(events(dir).length, beforeHuge, 'no turn, no answer object')
      const proposed = await call(c, 'hypothesis_propose', { statement: 'the net despawns it', evidence: [e] })
      assert.is(proposed.s?.['decided'], 'hypothesis H1 proposed', proposed.text)
      const unknownH = await call(c, 'hypothesis_update', {
        hypothesis_id: 'H9',
        status: 'supported',
        evidence: [e],
        note: 'x'
      })
      assert.ok(unknownH.text.startsWith('HYPOTHESIS_UNKNOWN: '), unknownH.text)
      const updated = await call(c, 'hypothesis_update', {
        hypothesis_id: 'H1',
        status: 'supported',
        evidence: [e],
        note: 'DespawnOrUnsummon on the net spell'
      })
      assert.is(updated.s?.['decided'], 'hypothesis H1 supported', updated.text)
      // case_status says what was decided: an agent whose call got no answer sees whether it ran.
      const status = await call(c, 'case_status', {})
      assert.equal(status.s?.['hypotheses'], [
        { id: 'H1', status: 'supported', statement: 'the net despawns it', evidence: [e] }
      ])
      assert.ok(typeof status.s?.['interpretation'] === 'string' && status.s['turn'] === 5, status.text)
      assert.match(status.text, `\nhypotheses (1):\n  H1 [supported] the net despawns it (evidence ${e})\n`)
      const concluded = await call(c, 'conclude', {
        summary: `the net spell despawns the wolpertinger (${e})`,
        hypotheses: ['H1'],
        evidence: [e]
      })
      assert.equal(concluded.s, {
        turn: 6,
        decided: 'conclusion recorded; the case is CONCLUDED',
        state: 'CONCLUDED'
      })
      assert.equal(await names(), ['case_status'], 'a concluded case offers the read tools only')
      assert.ok(changed >= 2, `tools/list_changed was sent (${changed})`)
      const report = await c.client.readResource({ uri: 'vba://case/report' })
      assert.match(
        (report.contents[0] as { text: string }).text,
        'Decided by**: the agent test-agent 1.2.3 over MCP (turns 1, 2, 3, 4, 5, 6)'
      )
    } finally {
      await c.close()
    }
    const v = right(await verifyCase(dir)())
    assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
    const answers = events(dir).filter((x) => x.type === 'ModelResponded')
    assert.is(answers.length, 6, 'each decision is one turn, refusals included')
    for (const a of answers)
      assert.equal((a.data['provenance'] as Record<string, unknown>)['requester'], {
        protocol: 'mcp',
        name: 'test-agent',
        version: '1.2.3'
      })
    assert.equal(
      events(dir)
        .filter((x) => x.type === 'ModelResponseRejected')
        .map((x) => x.data['code']),
      ['EVIDENCE_UNKNOWN', 'HYPOTHESIS_UNKNOWN']
    )
    const out = path.join(tempDir('mcp-agent-report'), 'report.html')
    const r = vba(['report', dir, '--out', out])
    assert.is(r.code, 0, r.stderr)
    const html = readFileSync(out, 'utf8')
    assert.is(html.split('decided by the agent <span class="mono">test-agent 1.2.3</span> over MCP').length - 1, 6)
  }
)

agent.run()

const defects = suite('vba mcp: the defects of issue 32')

defects(
  'paths are checked by every tool, a read past the end is refused unbilled, argument-shape errors are -32602 once prefixed, one recording policy',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    try {
      const left = async () =>
        (
          (
            (await c.client.callTool({ name: 'case_status', arguments: {} })).structuredContent as Record<
              string,
              unknown
            >
          )?.['budget'] as { left: number } | null
        )?.left
      await call(c, 'source_files', { text: 'wolpertinger' })
      const budget = await left()
      for (const prefix of ['../', '/etc', '.git', 'src//server']) {
        const r = await call(c, 'source_files', { text: 'x', path_prefix: prefix })
        assert.ok(r.text.startsWith('PATH_INVALID: '), `${prefix}: ${r.text}`)
        assert.match(r.text, 'budget was released')
      }
      const past = await call(c, 'source_read', { path: WOLF, start_line: 1000, end_line: 1010 })
      assert.ok(past.text.startsWith('SOURCE_LINES_PAST_END: '), past.text)
      assert.is(await left(), budget, 'refusals cost nothing')
      const before = events(dir).length
      for (const args of [[1, 2], null, 'x']) {
        const e = await rejection(
          c.client.request(
            { method: 'tools/call', params: { name: 'source_files', arguments: args } } as never,
            CallToolResultSchema
          )
        )
        assert.is(e.code, -32602, String(args))
        assert.ok(e.message.length < 300, e.message)
        assert.not.match(e.message, /MCP error -32602: MCP error/)
      }
      const text = await rejection(
        c.client.callTool({ name: 'source_read', arguments: { path: WOLF, start_line: '1', end_line: 2 } })
      )
      assert.is(text.code, -32602)
      assert.is(events(dir).length, before, 'what the schema refuses is not recorded')
      const reversed = await call(c, 'source_read', { path: WOLF, start_line: 10, end_line: 5 })
      assert.ok(reversed.text.startsWith('QUERY_INVALID: '), reversed.text)
      assert.match(reversed.text, 'Recorded in the case as a refused query')
      const unknown = await rejection(c.client.callTool({ name: 'shell_exec', arguments: {} }))
      assert.ok(
        unknown.message.startsWith('MCP error -32602: TOOL_UNKNOWN: unknown tool "shell_exec"'),
        unknown.message
      )
      const oversize = await rejection(
        c.client.callTool({ name: 'source_files', arguments: { text: 'y'.repeat(11 * 1024 * 1024) } })
      )
      assert.is(oversize.code, -32600)
      assert.match(oversize.message, 'MESSAGE_TOO_LARGE: a message of ')
      assert.match(c.stderr(), 'vba mcp: MESSAGE_TOO_LARGE')
      assert.not.ok((await call(c, 'source_files', { text: 'npc_' })).r.isError, 'the server stays up')
    } finally {
      await c.close()
    }
    assert.ok(right(await verifyCase(dir)()).valid)
    // the report shows each refused request with its refusal
    const out = path.join(tempDir('mcp-refusals-report'), 'report.html')
    assert.is(vba(['report', dir, '--out', out]).code, 0)
    const html = readFileSync(out, 'utf8')
    assert.match(html, `research refused: SOURCE_LINES_PAST_END</span>: `)
    assert.match(html, `<br>request: <span class="mono">source.read ${WOLF} lines 1000-1010</span>`)
    assert.match(html, '<br>request: <span class="mono">source.read ' + WOLF + ' lines 10-5</span>')
    for (const prefix of ['../', '/etc', '.git', 'src//server'])
      assert.match(html, `<br>request: <span class="mono">source.files &quot;x&quot; under ${prefix}</span>`)
  }
)

defects(
  'research tools are read-only and idempotent hints, said with their audit trail; decisions are not',
  async () => {
    const c = await open(newCase())
    try {
      const tools = (await c.client.listTools()).tools
      for (const t of tools.filter((x) => x.name.startsWith('source_') || x.name.startsWith('database_'))) {
        assert.is(t.annotations?.readOnlyHint, true, t.name)
        assert.is(t.annotations?.idempotentHint, true, t.name)
        assert.match(t.description ?? '', 'The case keeps the audit trail', t.name)
        assert.not.match(JSON.stringify(t.inputSchema), /world\.[a-z_]+/, `${t.name} names only what it accepts`)
      }
      const interp = tools.find((t) => t.name === 'interpretation_record')
      assert.is(interp?.annotations?.readOnlyHint, false)
      assert.match(tools.find((t) => t.name === 'source_context')?.description ?? '', /\d+ searches/)
    } finally {
      await c.close()
    }
  }
)

defects(
  'the investigate prompt names the agent that asked a query and counts exactly (1 path matches, 1 hit); the case verifies',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    try {
      await c.client.getPrompt({ name: 'investigate' })
      await call(c, 'interpretation_record', { summary: 'netting the wolpertinger despawns it' })
      const files = await call(c, 'source_files', { text: 'ScriptLoader' })
      assert.match(files.text, ': 1 path matches')
      const search = await call(c, 'source_search', { text: 'int b = 2' })
      assert.match(search.text, ': 1 hit in 1 of ')
      const prompt = await c.client.getPrompt({ name: 'investigate' })
      const text = (prompt.messages[0]?.content as { text: string }).text
      assert.match(
        text,
        `Latest result ${String(search.s?.['evidence_id'])} (answers a query of the MCP client "test-agent 1.2.3"):`
      )
      assert.match(text, '(answers a query of the MCP client "test-agent 1.2.3"):')
      assert.match(text, ': 1 path matches\n')
      assert.match(text, ': 1 hit in 1 of ')
      assert.not.match(text, "an operator's query")
      assert.not.match(text, /\b1 (paths|hits|rows) /)
    } finally {
      await c.close()
    }
    assert.ok(right(await verifyCase(dir)()).valid)
  }
)

defects.run()
