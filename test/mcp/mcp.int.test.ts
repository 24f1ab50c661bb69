/**
 * `vba mcp` driven by the official SDK's Client over stdio (a real client, a real server process)
 * against the test repository and the private MariaDB: the tools and their schemas, every kind,
 * refusals as tool errors, the budget, a restart, the evidence as resources, start-up refusals.
 * After every test the case verifies and holds one capture per answered call, with the client's
 * name on its reservation.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { readFileSync } from 'node:fs'
import * as path from 'node:path'
import { initCase, verifyCase } from '../../src/fp.js'
import { Capture } from '../../src/events/capture.js'
import { mariaProfile } from '../helpers/world.js'
import { right, tempDir } from '../helpers/fs.js'
import { vba } from '../helpers/cli.js'
import {
  caseEvents as events,
  connectMcp,
  mcpWorld,
  rejection,
  textOf,
  WOLF,
  type EventLine as Line,
  type McpConnection
} from '../helpers/mcp.js'

// One prepared case (enrichment against MariaDB), copied for each test.
const { shared, repo, adapter, sourceSection, profileWith, profile, newCase } = await mcpWorld('case-mcp', 40)

const mcpCaptures = (dir: string): Line[] =>
  events(dir).filter((e) => e.type === 'CaptureRecorded' && e.command_id.startsWith('mcp-'))
const reservationOf = (dir: string, reservationId: unknown): Line | undefined =>
  events(dir).find((e) => e.type === 'BudgetReserved' && e.data['reservation_id'] === reservationId)

/** The case verifies, and holds exactly `answered` MCP captures, each reserved for `client`. */
const holds = async (
  dir: string,
  answered: number,
  client: Record<string, string> = { protocol: 'mcp', name: 'test-agent', version: '1.2.3' }
): Promise<void> => {
  const report = right(await verifyCase(dir)())
  assert.ok(report.valid, JSON.stringify(report.findings.slice(0, 3)))
  const captures = mcpCaptures(dir)
  assert.is(captures.length, answered, 'one capture per answered call')
  for (const c of captures) assert.equal(reservationOf(dir, c.data['reservation_id'])?.data['requester'], client)
}

const open = (dir: string, extra: { profile?: string; name?: string; version?: string } = {}): Promise<McpConnection> =>
  connectMcp(['--config', extra.profile ?? profile, '--case', dir], {
    ...(extra.name === undefined ? {} : { name: extra.name }),
    ...(extra.version === undefined ? {} : { version: extra.version })
  })

/** One valid call of every kind against the test repository and the fixture world. */
const CALLS: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ['source_files', { text: 'wolpertinger' }],
  ['source_search', { text: 'DespawnOrUnsummon', path_prefix: 'src/server/' }],
  ['source_symbol', { symbol: 'NPC_WILD_WOLPERTINGER' }],
  ['source_registration', { symbol: 'npc_wild_wolpertinger' }],
  ['source_schema', { text: 'creature_template' }],
  ['source_read', { path: WOLF, start_line: 1, end_line: 12 }],
  ['source_context', { text: 'SPELL_WOLPERTINGER_NET' }],
  ['database_tables', { text: 'creature' }],
  ['database_schema', { table: 'creature_template' }],
  [
    'database_rows',
    {
      table: 'creature_template',
      columns: ['entry', 'name'],
      filters: [{ column: 'entry', operator: 'in', value: [23486, 23487] }],
      offset: 0,
      limit: 10
    }
  ],
  ['database_count', { table: 'creature_queststarter', filters: [{ column: 'quest', operator: 'eq', value: 11117 }] }]
]

/**
 * What each tool's answer shows below its evidence id, written out here (not re-rendered by the
 * function that made it): the compact text the investigation prompt shows for the same capture.
 * Commits and blob ids are written C and B.
 */
const EXPECTED_TEXT: Record<string, readonly string[]> = {
  source_files: [
    'source.files "wolpertinger" @ commit C: 1 path matches',
    '  src/server/scripts/World/npc_wolpertinger.cpp',
    'missed: no path holds "wolpertinger" in another case either'
  ],
  source_search: [
    'source.search "DespawnOrUnsummon" (literal) under src/server/ @ commit C: 1 hit in 1 of 7 files scanned, hits_partial',
    'src/server/scripts/World/npc_wolpertinger.cpp (blob B):',
    '14|             me->DespawnOrUnsummon();',
    'skipped: too_large 1, missing_object 1, binary 1, symlink 1',
    'missed: no line holds "DespawnOrUnsummon" in another case or inside a longer word either (partial)'
  ],
  source_symbol: [
    'source.symbol "NPC_WILD_WOLPERTINGER" (word) @ commit C: 1 hit in 1 of 9 files scanned, hits_partial',
    'src/server/scripts/World/npc_wolpertinger.cpp (blob B):',
    '5|     NPC_WILD_WOLPERTINGER = 23487,',
    'skipped: too_large 1, missing_object 1, binary 1, symlink 1',
    'missed (not hits): "NPC_WILD_WOLPERTINGER" in 2 lines in another case, in 1 file: src/server/scripts/World/npc_wolpertinger.cpp; ignore_case: true finds them (partial)'
  ],
  source_registration: [
    'source.registration "npc_wild_wolpertinger" (word) @ commit C: 1 hit in 1 of 9 files scanned, hits_partial',
    'src/server/scripts/World/npc_wolpertinger.cpp (blob B):',
    '20|     new CreatureScript<npc_wild_wolpertingerAI>("npc_wild_wolpertinger");',
    'registration candidates (not proof): AddSC_npc_wolpertinger at src/server/scripts/World/npc_wolpertinger.cpp:18',
    'skipped: too_large 1, missing_object 1, binary 1, symlink 1',
    'missed (not hits): "npc_wild_wolpertinger" in 1 line in another case, 1 line inside longer words or numbers, in 1 file: src/server/scripts/World/npc_wolpertinger.cpp; ignore_case: true finds them (partial)'
  ],
  source_schema: [
    'source.schema "creature_template" (literal) @ commit C: 2 hits in 1 of 1 file scanned, hits_complete',
    'sql/base/world.sql (blob B):',
    '1| CREATE TABLE `creature_template` (',
    "5| INSERT INTO `creature_template` VALUES (23487, 'Wild Wolpertinger');",
    'missed: no line holds "creature_template" in another case or inside a longer word either'
  ],
  source_read: [
    'source.read src/server/scripts/World/npc_wolpertinger.cpp (blob B) @ commit C: lines 1-12 of 21',
    ' 1| #include "ScriptMgr.h"',
    ' 2| ',
    ' 3| enum Creatures',
    ' 4| {',
    ' 5|     NPC_WILD_WOLPERTINGER = 23487,',
    ' 6|     NPC_DRUNKEN_WOLPERTINGER = 24766',
    ' 7| };',
    ' 8| ',
    ' 9| struct npc_wild_wolpertingerAI : public ScriptedAI',
    '10| {',
    '11|     void SpellHit(Unit* caster, SpellInfo const* spell) override',
    '12|     {'
  ],
  source_context: [
    'source.context "SPELL_WOLPERTINGER_NET" (word) @ commit C: partial_configured_source_context',
    'searches: "SPELL_WOLPERTINGER_NET" 1 hit (partial); "AddSC_npc_wolpertinger" (registration, npc_wolpertinger.cpp:18) 3 hits (partial); 9 files scanned',
    'every search skipped: too_large 1, missing_object 1, binary 1, symlink 1',
    'src/server/scripts/World/npc_wolpertinger.cpp (blob B):',
    '  5|     NPC_WILD_WOLPERTINGER = 23487,',
    '  6|     NPC_DRUNKEN_WOLPERTINGER = 24766',
    '  7| };',
    '  8| ',
    '  9| struct npc_wild_wolpertingerAI : public ScriptedAI',
    ' 10| {',
    ' 11|     void SpellHit(Unit* caster, SpellInfo const* spell) override',
    ' 12|     {',
    '>13|         if (spell->Id == SPELL_WOLPERTINGER_NET)',
    ' 14|             me->DespawnOrUnsummon();',
    ' 15|     }',
    ' 16| };',
    ' 17| ',
    '+18| void AddSC_npc_wolpertinger()',
    ' 19| {',
    ' 20|     new CreatureScript<npc_wild_wolpertingerAI>("npc_wild_wolpertinger");',
    ' 21| }',
    'src/server/scripts/ScriptLoader.cpp (blob B):',
    '+ 1| void AddSC_npc_wolpertinger();',
    '   ⋮',
    '+ 7|     AddSC_npc_wolpertinger();',
    'limits reached: skipped_files (the answer is partial)',
    'missed: no line holds "SPELL_WOLPERTINGER_NET" in another case or inside a longer word either (partial)'
  ],
  database_tables: [
    'database.tables @ world snapshot world-test-fixture-1: present: world.creature_queststarter, world.creature_template',
    'allowed but missing: none'
  ],
  database_schema: [
    'database.schema creature_template @ world snapshot world-test-fixture-1:',
    '  entry int(10) unsigned NOT NULL PRI',
    '  name varchar(100) NOT NULL MUL',
    '  subname varchar(100) NULL',
    '  minlevel tinyint(3) unsigned NOT NULL',
    '  maxlevel tinyint(3) unsigned NOT NULL',
    '  faction smallint(5) unsigned NOT NULL',
    '  npcflag bigint(20) unsigned NOT NULL',
    '  speed_walk float NOT NULL',
    '  DamageModifier decimal(14,4) NOT NULL',
    '  AIName varchar(64) NOT NULL',
    '  ScriptName varchar(64) NOT NULL',
    '  VerifiedBuild int(11) NULL',
    'primary key: entry',
    'index idx_name: name'
  ],
  database_rows: [
    'database.rows creature_template where entry in (23486, 23487) @ world snapshot world-test-fixture-1: 2 rows from offset 0 (limit 10), ordered by entry asc (primary_key)',
    'entry (int(10) unsigned)|name (varchar(100))',
    '23486|Driz Tumblequick',
    '23487|Wild Wolpertinger',
    'complete: these are all rows matching the filters'
  ],
  database_count: [
    'database.count creature_queststarter where quest = 11117 @ world snapshot world-test-fixture-1: 1 row'
  ]
}
const withoutIds = (lines: readonly string[]): string[] =>
  lines.map((l) => l.replace(/@ commit [0-9a-f]{12}/, '@ commit C').replace(/\(blob [0-9a-f]{12}\)/, '(blob B)'))

const tools = suite('vba mcp: tools')

tools(
  'lists one tool per enabled kind with schemas generated from the query codecs; a database-only profile offers database tools only',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    try {
      const list = (await c.client.listTools()).tools
      assert.equal(
        list.map((t) => t.name),
        [...CALLS.map(([n]) => n), 'interpretation_record', 'case_status']
      )
      const read = list.find((t) => t.name === 'source_read')
      assert.equal(read?.inputSchema['required'], ['path', 'start_line', 'end_line'])
      assert.is(read?.inputSchema['additionalProperties'], false)
      assert.not.ok('kind' in (read?.inputSchema.properties ?? {}), 'the tool names the kind')
      assert.equal((read?.inputSchema.properties?.['start_line'] as Record<string, unknown>)['minimum'], 1)
      assert.match(read?.description ?? '', repo.commit.slice(0, 12))
      const rows = list.find((t) => t.name === 'database_rows')
      const table = JSON.stringify(rows?.inputSchema.properties?.['table'])
      assert.match(table, /creature_template[a-z_, ]* \(database world\)/)
      assert.not.match(table, 'world.creature_template', 'names only what the table member accepts')
      assert.not.match(table, 'account_secrets', 'only the allowlist is offered')
      assert.match(JSON.stringify(rows?.inputSchema.properties?.['limit']), 'at most 200')
      assert.equal((rows?.outputSchema?.['required'] as string[]).slice().sort(), [
        'answered_from_case',
        'budget_left',
        'capture',
        'evidence_id',
        'repeat'
      ])
      assert.match(
        c.stderr(),
        "NOT_STARTED (the first call that records something starts it with the profile's settings)"
      )
      assert.equal(
        events(dir)
          .map((e) => e.type)
          .filter((t) => t === 'InvestigationStarted'),
        [],
        'starting the server changes nothing in the case'
      )
    } finally {
      await c.close()
    }
    // without [source] and [source_analysis] (a database-only profile), and with source but no source.context
    const dbOnly = await open(newCase(), { profile: mariaProfile(shared) })
    try {
      assert.equal(
        (await dbOnly.client.listTools()).tools.map((t) => t.name),
        [
          'database_tables',
          'database_schema',
          'database_rows',
          'database_count',
          'interpretation_record',
          'case_status'
        ]
      )
    } finally {
      await dbOnly.close()
    }
    const noContext = await open(newCase(), {
      profile: mariaProfile(shared, `${sourceSection}\n${adapter.replace('enabled = true', 'enabled = false')}`)
    })
    try {
      const names = (await noContext.client.listTools()).tools.map((t) => t.name)
      assert.ok(names.includes('source_read') && !names.includes('source_context'), names.join(','))
    } finally {
      await noContext.close()
    }
  }
)

tools(
  "answers every kind against the repository and MariaDB: the evidence id heads the prompt's compact text, the capture is the structured content; an identical call is answered from the case",
  async () => {
    const dir = newCase()
    const c = await open(dir)
    const seen: string[] = []
    try {
      for (const [name, args] of CALLS) {
        const r = await c.client.callTool({ name, arguments: args })
        assert.not.ok(r.isError, `${name}: ${textOf(r)}`)
        const s = r.structuredContent as {
          evidence_id: string
          repeat: boolean
          answered_from_case: boolean
          capture: unknown
        }
        const capture = right(Capture.decode(s.capture))
        assert.is(capture.kind, name.replace('_', '.'))
        assert.is(s.answered_from_case, false)
        const [head, ...rest] = textOf(r).split('\n')
        assert.ok(head?.startsWith(`${s.evidence_id}: `), head)
        assert.equal(withoutIds(rest), EXPECTED_TEXT[name], `${name}: the compact text`)
        seen.push(s.evidence_id)
      }
      assert.is(new Set(seen).size, CALLS.length, 'every answer is new evidence')
      const generation = events(dir).length
      const [name, args] = CALLS[9] ?? ['', {}]
      const again = await c.client.callTool({ name, arguments: args })
      const s = again.structuredContent as { evidence_id: string; answered_from_case: boolean; budget_left: number }
      assert.is(s.answered_from_case, true)
      assert.is(s.evidence_id, seen[9])
      assert.match(textOf(again), 'answered from the case')
      assert.is(events(dir).length, generation, 'nothing appended, no budget spent')
      assert.is(s.budget_left, 40 - CALLS.length)
    } finally {
      await c.close()
    }
    await holds(dir, CALLS.length)
  }
)

tools(
  'a refusal is a tool error that starts with the failure code and says what to change; the case records refused research as research',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    try {
      const notAllowed = await c.client.callTool({
        name: 'database_rows',
        arguments: { table: 'account_secrets', columns: ['secret'], filters: [], offset: 0, limit: 1 }
      })
      assert.ok(notAllowed.isError)
      assert.ok(textOf(notAllowed).startsWith('TABLE_NOT_ALLOWED: '), textOf(notAllowed))
      assert.match(textOf(notAllowed), 'What you can change: ask about an allowed table')
      assert.match(textOf(notAllowed), 'budget was released')
      const before = events(dir).length
      const invalid = await rejection(
        c.client.callTool({ name: 'source_read', arguments: { path: WOLF, start_line: 1, end_line: 2, ref: 'main' } })
      )
      assert.is(invalid.code, -32602)
      assert.ok(invalid.message.startsWith('MCP error -32602: QUERY_INVALID: '), invalid.message)
      const kind = await rejection(
        c.client.callTool({
          name: 'source_read',
          arguments: { kind: 'database.rows', path: WOLF, start_line: 1, end_line: 2 }
        })
      )
      assert.ok(kind.message.startsWith('MCP error -32602: QUERY_INVALID: '), kind.message)
      const huge = await rejection(
        c.client.callTool({ name: 'source_search', arguments: { text: 'x'.repeat(2 << 20) } })
      )
      assert.ok(huge.message.startsWith('MCP error -32602: QUERY_INVALID: '), huge.message.slice(0, 200))
      assert.ok(huge.message.length < 2000, 'the refusal does not echo the input')
      assert.is(events(dir).length, before, 'an invalid request records nothing')
      const traversal = await c.client.callTool({
        name: 'source_read',
        arguments: { path: '../../etc/passwd', start_line: 1, end_line: 2 }
      })
      assert.ok(textOf(traversal).startsWith('PATH_INVALID: '), textOf(traversal))
      const unknown = await rejection(c.client.callTool({ name: 'shell_exec', arguments: {} }))
      assert.is(unknown.code, -32602)
      assert.match(unknown.message, 'unknown tool "shell_exec"')
      const failed = events(dir)
        .filter((e) => e.type === 'ResearchFailed')
        .map((e) => e.data['code'])
      assert.equal(failed, ['TABLE_NOT_ALLOWED', 'PATH_INVALID'])
    } finally {
      await c.close()
    }
    await holds(dir, 0)
  }
)

tools(
  'exhausts the budget: every new question is BUDGET_EXHAUSTED, recorded evidence stays readable; case_status shows the budget and the evidence',
  async () => {
    const dir = newCase()
    const c = await open(dir, { profile: profileWith(3) })
    try {
      // before the first recorded call starts the case: the budget the start will record, not "no limit"
      const fresh = await c.client.callTool({ name: 'case_status', arguments: {} })
      const f = fresh.structuredContent as { state: string; budget: { left: number; total: number } | null }
      assert.is(f.state, 'NOT_STARTED')
      assert.equal([f.budget?.total, f.budget?.left], [3, 3])
      assert.match(
        textOf(fresh),
        "3 left (a query costs 1); the profile's, which the first call that records something"
      )
      for (const [name, args] of CALLS.slice(7, 10))
        assert.not.ok((await c.client.callTool({ name, arguments: args })).isError)
      const before = events(dir).length
      for (const [name, args] of [CALLS[10], CALLS[0]].filter((x) => x !== undefined)) {
        const r = await c.client.callTool({ name, arguments: args })
        assert.ok(r.isError)
        assert.ok(textOf(r).startsWith('BUDGET_EXHAUSTED: '), textOf(r))
        assert.match(textOf(r), 'Nothing was recorded')
      }
      assert.is(events(dir).length, before)
      const [name, args] = CALLS[8] ?? ['', {}]
      assert.is(
        (await c.client.callTool({ name, arguments: args })).isError,
        undefined,
        'an identical call is still answered from the case'
      )
      const status = await c.client.callTool({ name: 'case_status', arguments: {} })
      const s = status.structuredContent as {
        state: string
        budget: { left: number; consumed: number; total: number }
        evidence: Array<{ id: string; uri: string }>
      }
      assert.equal([s.budget.total, s.budget.consumed, s.budget.left], [3, 3, 0])
      assert.is(s.state, 'INTERPRETING')
      assert.ok(s.evidence.length >= 3 && s.evidence.every((e) => e.uri === `vba://evidence/${e.id}`))
      assert.is(events(dir).length, before, 'case_status costs nothing')
    } finally {
      await c.close()
    }
    await holds(dir, 3)
  }
)

tools.run()

const session = suite('vba mcp: restarts, resources, start-up, the report')

session(
  "resumes after a restart: an outage keeps its reservation and the same call retries it; another client's calls are attributed to it",
  async () => {
    const dir = newCase()
    const down = mariaProfile({ ...shared, port: 1 }, `${sourceSection}\n[budget]\ntotal = 40\n\n${adapter}`)
    const first = await open(dir, { profile: down })
    const [name, args] = CALLS[10] ?? ['', {}]
    try {
      const outage = await first.client.callTool({ name, arguments: args })
      assert.ok(outage.isError)
      assert.ok(textOf(outage).startsWith('DATABASE_UNAVAILABLE: '), textOf(outage))
      assert.match(textOf(outage), 'the reservation is kept')
      assert.not.match(textOf(outage), shared.readerPassword, 'no credential in an answer')
      assert.not.ok(
        (await first.client.callTool({ name: 'source_read', arguments: { path: WOLF, start_line: 1, end_line: 3 } }))
          .isError
      )
    } finally {
      await first.close()
    }
    const held = events(dir).filter((e) => e.type === 'BudgetReserved' && String(e.command_id).startsWith('mcp-'))
    assert.is(held.length, 2)
    const second = await open(dir, { name: 'another-agent', version: '9.0' })
    try {
      const r = await second.client.callTool({ name, arguments: args })
      assert.not.ok(r.isError, textOf(r))
      assert.match(textOf(r), 'new evidence')
      const same = await second.client.callTool({
        name: 'source_read',
        arguments: { path: WOLF, start_line: 1, end_line: 3 }
      })
      assert.is(
        (same.structuredContent as { answered_from_case: boolean }).answered_from_case,
        true,
        'answered from the case across restarts'
      )
      const other = await second.client.callTool({ name: 'database_schema', arguments: { table: 'quest_template' } })
      assert.not.ok(other.isError, textOf(other))
    } finally {
      await second.close()
    }
    assert.is(
      events(dir).filter((e) => e.type === 'BudgetReserved' && String(e.command_id).startsWith('mcp-')).length,
      3,
      "the outage's reservation was retried, not made again"
    )
    assert.is(right(await verifyCase(dir)()).valid, true)
    const byClient = mcpCaptures(dir).map(
      (c) => (reservationOf(dir, c.data['reservation_id'])?.data['requester'] as { name: string }).name
    )
    assert.equal(
      byClient,
      ['test-agent', 'test-agent', 'another-agent'],
      'the retried reservation keeps the client that asked first'
    )
  }
)

session(
  'calls in flight at once, and two servers on one case: identical calls run one after the other (the second from the case), every answer is recorded once and the case verifies',
  async () => {
    const dir = newCase()
    const a = await open(dir)
    const b = await open(dir, { name: 'second-agent', version: '2' })
    try {
      const same = { name: 'database_schema', arguments: { table: 'smart_scripts' } }
      const answers = await Promise.all([
        a.client.callTool(same),
        a.client.callTool(same),
        a.client.callTool({ name: 'database_count', arguments: { table: 'creature_template', filters: [] } }),
        b.client.callTool({ name: 'database_count', arguments: { table: 'quest_template', filters: [] } }),
        b.client.callTool({ name: 'source_symbol', arguments: { symbol: 'SPELL_PONY_KEG' } })
      ])
      for (const r of answers) assert.not.ok(r.isError, textOf(r))
      const fromCase = answers
        .slice(0, 2)
        .map((r) => (r.structuredContent as { answered_from_case: boolean }).answered_from_case)
        .sort()
      assert.equal(fromCase, [false, true])
    } finally {
      await a.close()
      await b.close()
    }
    assert.ok(right(await verifyCase(dir)()).valid)
    assert.is(mcpCaptures(dir).length, 4)
    const names = mcpCaptures(dir)
      .map((c) => (reservationOf(dir, c.data['reservation_id'])?.data['requester'] as { name: string }).name)
      .sort()
    assert.equal(names, ['second-agent', 'second-agent', 'test-agent', 'test-agent'])
  }
)

session(
  'the evidence as resources: listed, read as compact text and canonical capture at no cost; an unknown id is a resource error',
  async () => {
    const dir = newCase()
    const c = await open(dir)
    try {
      const asked = await c.client.callTool({
        name: 'source_read',
        arguments: { path: WOLF, start_line: 5, end_line: 9 }
      })
      const id = (asked.structuredContent as { evidence_id: string }).evidence_id
      const before = events(dir).length
      const listed = (await c.client.listResources()).resources
      assert.ok(
        listed.some((r) => r.uri === `vba://evidence/${id}` && r.name === id && (r.title ?? '').includes(WOLF)),
        JSON.stringify(listed)
      )
      assert.ok(
        listed.some((r) => r.uri === 'vba://evidence/E1'),
        "the preparation's captures are evidence too"
      )
      assert.equal(
        (await c.client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate),
        ['vba://evidence/{id}']
      )
      const read = await c.client.readResource({ uri: `vba://evidence/${id}` })
      const [text, json] = read.contents as Array<{ text: string; mimeType: string }>
      assert.ok(text?.text.startsWith(`${id}: recorded evidence`), text?.text)
      assert.match(text?.text ?? '', '    NPC_WILD_WOLPERTINGER = 23487,')
      assert.is(json?.mimeType, 'application/vnd.vba.capture+json')
      assert.equal(
        right(Capture.decode(JSON.parse(json?.text ?? 'null'))),
        (asked.structuredContent as { capture: unknown }).capture
      )
      assert.is(events(dir).length, before, 'reading evidence costs nothing')
      const missing = await rejection(c.client.readResource({ uri: 'vba://evidence/E99' }))
      assert.is(missing.code, -32002)
      assert.match(missing.message, 'EVIDENCE_UNKNOWN')
      assert.is((await rejection(c.client.readResource({ uri: 'vba://evidence/../../HEAD' }))).code, -32002)
    } finally {
      await c.close()
    }
    await holds(dir, 1)
  }
)

session(
  'refuses at start-up, with a coded line on stderr and the exit code of its kind: a case that is not prepared, a missing case, a bad profile',
  async () => {
    const unprepared = path.join(tempDir('mcp-unprepared'), 'case')
    right(await initCase({ dir: unprepared })())
    const r = vba(['mcp', '--config', profile, '--case', unprepared])
    assert.is(r.code, 2, r.stderr)
    assert.match(r.stderr, /^vba: CASE_NOT_PREPARED: /m)
    assert.is(r.stdout, '', 'stdout carries the protocol only')
    assert.is(events(unprepared).length, 0, 'nothing was started or recorded')
    const missing = vba(['mcp', '--config', profile, '--case', path.join(tempDir('mcp-missing'), 'nope')])
    assert.is(missing.code, 2, missing.stderr)
    assert.match(missing.stderr, /^vba: CASE_NOT_FOUND: /m)
    const badProfile = vba(['mcp', '--config', path.join(tempDir('mcp-noprofile'), 'none.toml'), '--case', newCase()])
    assert.is(badProfile.code, 2)
    assert.match(badProfile.stderr, /^vba: CONFIG_NOT_FOUND: /m)
  }
)

session(
  'the client names itself: a hostile name is recorded made safe, and vba report shows who asked like any other evidence',
  async () => {
    const dir = newCase()
    const hostile = `evil\u001b[2J<script>alert(1)</script>${'x'.repeat(300)}`
    const c = await open(dir, { name: hostile, version: '1.0\n2.0' })
    try {
      assert.not.ok(
        (await c.client.callTool({ name: 'database_count', arguments: { table: 'quest_template', filters: [] } }))
          .isError
      )
    } finally {
      await c.close()
    }
    const requester = reservationOf(dir, mcpCaptures(dir)[0]?.data['reservation_id'])?.data['requester'] as {
      name: string
      version: string
    }
    assert.is(requester.name.length, 128)
    assert.ok(requester.name.startsWith('evil?[2J<script>'), requester.name)
    assert.is(requester.version, '1.0?2.0')
    assert.ok(right(await verifyCase(dir)()).valid)
    const out = path.join(tempDir('mcp-report'), 'report.html')
    const rep = vba(['report', dir, '--out', out])
    assert.is(rep.code, 0, rep.stderr)
    const html = readFileSync(out, 'utf8')
    assert.match(html, 'asked by MCP client <span class="mono requester">evil')
    assert.match(html, '&lt;script&gt;alert(1)&lt;/script&gt;')
    assert.not.match(html, '<script>')
  }
)

session.run()
