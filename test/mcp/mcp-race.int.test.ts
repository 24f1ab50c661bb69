/**
 * Two `vba mcp` processes on one case (two servers, one directory), each with an SDK client,
 * racing the investigation's decisions: both record the interpretation at once, both propose
 * hypotheses at once (round after round), both conclude at once. Each conflicting decision has
 * exactly one winner and the other is told the case moved on (CASE_NOT_ADVANCEABLE); decisions
 * that do not conflict are all recorded; no call answers GENERATION_CONFLICT; every recorded
 * decision is attributed to the client that made it; the case verifies VALID.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { verifyCase } from '../../src/fp.js'
import { right } from '../helpers/fs.js'
import { caseEvents, connectMcp, mcpWorld, textOf, WOLF, type McpConnection } from '../helpers/mcp.js'

const { profile, newCase } = await mcpWorld('case-race', 100)

type Answer = { readonly client: string; readonly text: string; readonly error: boolean; readonly turn?: number }

const race = suite('two vba mcp servers on one case')

race(
  'racing decisions: one winner per conflict, no GENERATION_CONFLICT surfaced, every decision attributed',
  async () => {
    const dir = newCase()
    const servers: Array<readonly [string, McpConnection]> = []
    for (const name of ['agent-a', 'agent-b'])
      servers.push([name, await connectMcp(['--config', profile, '--case', dir], { name, version: '1' })])
    const answers: Answer[] = []
    const both = async (args: (client: string) => [string, Record<string, unknown>]): Promise<Answer[]> => {
      const got = await Promise.all(
        servers.map(async ([client, c]) => {
          const [name, a] = args(client)
          const r = await c.client.callTool({ name, arguments: a })
          const turn = (r.structuredContent as { turn?: number } | undefined)?.turn
          return { client, text: textOf(r), error: r.isError === true, ...(turn === undefined ? {} : { turn }) }
        })
      )
      answers.push(...got)
      return got
    }
    try {
      const interpreted = await both((client) => [
        'interpretation_record',
        { summary: `${client}: the net despawns it` }
      ])
      assert.is(interpreted.filter((a) => !a.error).length, 1, JSON.stringify(interpreted))
      const lost = interpreted.find((a) => a.error)
      assert.ok(lost?.text.startsWith('CASE_NOT_ADVANCEABLE: '), lost?.text)

      const reads = await both((client) => [
        'source_read',
        { path: WOLF, start_line: client === 'agent-a' ? 1 : 10, end_line: client === 'agent-a' ? 12 : 20 }
      ])
      for (const r of reads) assert.not.ok(r.error, r.text)
      const evidence = reads.map((r) => /^(E\d+):/.exec(r.text)?.[1] ?? '?')

      for (let round = 0; round < 4; round++) {
        const proposed = await both((client) => [
          'hypothesis_propose',
          { statement: `${client} round ${round}: the net spell despawns it`, evidence }
        ])
        for (const p of proposed) assert.not.ok(p.error, `proposals do not conflict: ${p.text}`)
      }

      const concluded = await both((client) => [
        'conclude',
        { summary: `${client}: despawned by the net spell (${evidence.join(', ')})`, hypotheses: ['H1'], evidence }
      ])
      assert.is(concluded.filter((a) => !a.error).length, 1, JSON.stringify(concluded))
      assert.ok(concluded.find((a) => a.error)?.text.startsWith('CASE_NOT_ADVANCEABLE: '), JSON.stringify(concluded))
    } finally {
      for (const [, c] of servers) await c.close()
    }
    for (const a of answers) assert.not.match(a.text, 'GENERATION_CONFLICT', `${a.client}: ${a.text}`)

    const v = right(await verifyCase(dir)())
    assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
    // Each accepted decision's turn was answered by the client it was told to.
    const responded = new Map(
      caseEvents(dir)
        .filter((e) => e.type === 'ModelResponded')
        .map((e) => [e.data['turn'], (e.data['provenance'] as { requester: { name: string } }).requester.name])
    )
    const accepted = answers.filter((a) => !a.error && a.turn !== undefined)
    assert.is(accepted.length, 1 + 8 + 1)
    for (const a of accepted) assert.is(responded.get(a.turn), a.client, `turn ${a.turn}`)
    assert.is(new Set(accepted.map((a) => a.turn)).size, accepted.length, 'one turn per accepted decision')
    const hypotheses = caseEvents(dir).filter((e) => e.type === 'HypothesisProposed')
    assert.is(hypotheses.length, 8)
    assert.is(caseEvents(dir).filter((e) => e.type === 'ConclusionRecorded').length, 1)
  }
)

race.run()
