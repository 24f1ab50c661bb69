/**
 * Text from a case reaches an agent with its invisible characters shown, as the CLI shows them: a
 * bidi override (U+202E) or isolate (U+2066…U+2069) in the report, a hypothesis, a note or a
 * capture is sent as `<U+202E>` in tool answers' text (their structured content is data, exact), resource texts and
 * listings and error messages, and as a JSON escape in the canonical capture (the same value).
 * The prompt investigate is the prompt the case records, sent byte for byte; the case keeps its
 * bytes and verifies.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { nextPrompt, verifyCase } from '../../src/fp.js'
import { right } from '../helpers/fs.js'
import { connectMcp, mcpWorld, rejection, textOf, WOLF, type McpConnection } from '../helpers/mcp.js'

const RLO = '\u202E'
const NOTE = 'the \u2066isolated\u2069 note'
/** Any bidi embedding, override or isolate control, unescaped. */
const BIDI = /[\u202A-\u202E\u2066-\u2069]/

const { profile, newCase } = await mcpWorld(
  'case-visible',
  40,
  `The wild wolpertinger ${RLO}vanishes when netted; quest 11117 cannot be completed.`
)
const open = (dir: string): Promise<McpConnection> => connectMcp(['--config', profile, '--case', dir])

/** `value` as the agent's client gets it holds no bidi control, and shows `shown`. */
const shows = (value: unknown, shown: string, what: string): void => {
  const text = JSON.stringify(value)
  assert.not.ok(BIDI.test(text), `${what} holds an unescaped bidi control: ${text.slice(0, 400)}`)
  assert.ok(text.includes(shown), `${what} shows ${shown}: ${text.slice(0, 400)}`)
}

const test = suite('vba mcp: invisible characters of the case are shown to the agent')

test('tool answers, resources and errors show bidi controls as <U+202E>; the prompt and the case keep their bytes', async () => {
  const dir = newCase()
  const c = await open(dir)
  try {
    const prompt = await c.client.getPrompt({ name: 'investigate' })
    const promptText = (prompt.messages[0]?.content as { text: string }).text
    assert.ok(promptText.endsWith(right(await nextPrompt(dir)()).text), 'the prompt is the recorded one, unchanged')
    assert.ok(promptText.includes(`wolpertinger ${RLO}vanishes`), 'the prompt is not rewritten')
    const call = (name: string, args: Record<string, unknown>) => c.client.callTool({ name, arguments: args })
    const interpreted = await call('interpretation_record', { summary: `netting ${RLO}despawns it` })
    assert.not.ok(interpreted.isError, textOf(interpreted))
    const read = await call('source_read', { path: WOLF, start_line: 1, end_line: 5 })
    const e = (read.structuredContent as { evidence_id: string }).evidence_id
    const files = await call('source_files', { text: `wolp${RLO}ertinger` })
    assert.not.ok(files.isError, textOf(files))
    shows(files.content, 'wolp<U+202E>ertinger', 'the answer of source_files')
    // The structured content is data an agent passes back (a path, the same query again): exact.
    assert.ok(JSON.stringify(files.structuredContent).includes(`wolp${RLO}ertinger`), 'structured content exact')
    const found = (files.structuredContent as { evidence_id: string }).evidence_id
    const proposed = await call('hypothesis_propose', { statement: `the net ${RLO}despawns it`, evidence: [e] })
    assert.not.ok(proposed.isError, textOf(proposed))
    const updated = await call('hypothesis_update', {
      hypothesis_id: 'H1',
      status: 'supported',
      evidence: [e],
      note: NOTE
    })
    assert.not.ok(updated.isError, textOf(updated))
    const status = await call('case_status', {})
    shows(status.content, 'the net <U+202E>despawns it', 'case_status')
    shows(status.content, 'netting <U+202E>despawns it', 'the interpretation in case_status')
    assert.match(textOf(status), 'H1 [supported] the net <U+202E>despawns it')
    assert.match(
      JSON.stringify((status.structuredContent as { hypotheses: unknown }).hypotheses),
      `the net ${RLO}despawns it`
    )
    shows(await c.client.listResources(), 'wolp<U+202E>ertinger', 'resources/list')
    const evidence = await c.client.readResource({ uri: `vba://evidence/${found}` })
    const [plain, json] = evidence.contents as Array<{ text: string }>
    shows(plain, 'wolp<U+202E>ertinger', 'the evidence text')
    assert.not.ok(BIDI.test(json?.text ?? ''), 'the canonical capture')
    assert.match(json?.text ?? '', 'wolp\\u202Eertinger')
    assert.match(JSON.stringify(JSON.parse(json?.text ?? 'null')), `wolp${RLO}ertinger`, 'the same value as recorded')
    const report = await c.client.readResource({ uri: 'vba://case/report' })
    // Markdown escapes the marker's angle brackets (a comment posted to a tracker renders them as text).
    shows(report.contents[0], 'the net \\\\<U+202E\\\\>despawns it', 'the report in Markdown (as JSON)')
    shows(report.contents[1], '&lt;U+2066&gt;</span>isolated', 'the HTML report')
    const unknown = await rejection(c.client.callTool({ name: `conclude${RLO}`, arguments: {} }))
    assert.not.ok(BIDI.test(unknown.message), unknown.message)
    assert.match(unknown.message, 'TOOL_UNKNOWN: unknown tool "conclude<U+202E>"')
  } finally {
    await c.close()
  }
  // The case keeps what was said, byte for byte, and verifies (its prompts included).
  const log = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
  for (const said of [`the net ${RLO}despawns it`, NOTE, `wolp${RLO}ertinger`])
    assert.ok(log.includes(said), `the case records ${JSON.stringify(said)} as it was said`)
  const v = right(await verifyCase(dir)())
  assert.ok(v.valid, JSON.stringify(v.findings.slice(0, 3)))
})

test.run()
