/**
 * The MCP tools' input schemas are the query contract: on thousands of generated arguments, an
 * independent JSON Schema validator (ajv) and the io-ts decoder give the same verdict for every
 * kind. Plus the kinds a profile enables, and what an answer and a refusal look like.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import * as fc from 'fast-check'
import { fcOptions } from '../helpers/seed.js'
import * as E from 'fp-ts/lib/Either.js'
import { Ajv } from 'ajv'
import { decodeQuery } from '../../src/domain/query.js'
import { failure } from '../../src/failures/failure.js'
import { profileFromObject } from '../../src/adapters/config/profile.js'
import { analysisOf } from '../../src/research/source/open.js'
import { toolSpecs, type ToolQueryKind } from '../../src/mcp/tools.js'
import { refusalAnswer, queryAnswer } from '../../src/mcp/answers.js'
import { requesterOf } from '../../src/mcp/server.js'
import { right } from '../helpers/fs.js'

const profileOf = (doc: Record<string, unknown>) => right(profileFromObject(doc, '/tmp'))
const database = {
  client: 'better-sqlite3',
  filename: 'w.sqlite',
  databases: ['world'],
  snapshot_id: 's1',
  allowed_tables: { world: ['creature_template', 'quest_template'] }
}
const source = { repository: 'core', url: 'https://example.org/core.git', commit: 'a'.repeat(40) }
const full = profileOf({ database, source, source_analysis: { enabled: true } })
const specs = toolSpecs({ profile: full, analysis: analysisOf(full), context: true, caseId: 'case-1', queryCost: 1 })

const tools = suite('MCP tools')

tools("every kind's input schema agrees with the query decoder on generated arguments", () => {
  const ajv = new Ajv({ strict: false })
  const mostly = <A, B>(valid: fc.Arbitrary<A>, invalid: fc.Arbitrary<B>) =>
    fc.oneof({ arbitrary: valid, weight: 30 }, { arbitrary: invalid, weight: 1 })
  const text = (max: number) =>
    mostly(fc.string({ minLength: 1, maxLength: max }), fc.constantFrom('', 'x'.repeat(max + 1), 7, null))
  const line = mostly(fc.integer({ min: 1, max: 1e6 }), fc.constantFrom(0, -1, 1.5, '3'))
  const name = text(128)
  const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null))
  const filter = fc.record(
    {
      column: name,
      operator: mostly(fc.constantFrom('eq', 'ne', 'lt', 'le', 'gt', 'ge', 'contains', 'in'), fc.constant('like')),
      value: fc.oneof(scalar, fc.array(fc.oneof(fc.string({ maxLength: 5 }), fc.integer()), { maxLength: 3 })),
      sql: mostly(fc.constant(undefined), fc.constant('1=1'))
    },
    { requiredKeys: ['column', 'operator', 'value'] }
  )
  const order = fc.record({ column: name, direction: mostly(fc.constantFrom('asc', 'desc'), fc.constant('up')) })
  const extra = { ref: mostly(fc.constant(undefined), fc.constant('main')) }
  const args: Record<ToolQueryKind, fc.Arbitrary<Record<string, unknown>>> = {
    'source.files': fc.record({ text: text(200), path_prefix: text(1024), ...extra }, { requiredKeys: ['text'] }),
    'source.search': fc.record({ text: text(200), path_prefix: text(1024), ...extra }, { requiredKeys: ['text'] }),
    'source.symbol': fc.record({ symbol: text(200), path_prefix: text(1024), ...extra }, { requiredKeys: ['symbol'] }),
    'source.registration': fc.record(
      { symbol: text(200), path_prefix: text(1024), ...extra },
      { requiredKeys: ['symbol'] }
    ),
    'source.schema': fc.record({ text: text(200), ...extra }, { requiredKeys: ['text'] }),
    'source.read': fc.record(
      { path: text(1024), start_line: line, end_line: line, ...extra },
      { requiredKeys: ['path', 'start_line', 'end_line'] }
    ),
    'source.context': fc.record({ text: text(200), path_prefix: text(1024), ...extra }, { requiredKeys: ['text'] }),
    'database.tables': fc.record({ text: text(200), database: name, ...extra }, { requiredKeys: [] }),
    'database.schema': fc.record({ table: name, database: name, ...extra }, { requiredKeys: ['table'] }),
    'database.rows': fc.record(
      {
        table: name,
        columns: fc.array(name, { maxLength: 3 }),
        filters: fc.array(filter, { maxLength: 3 }),
        offset: mostly(fc.nat(), fc.constant(-1)),
        limit: mostly(fc.integer({ min: 1, max: 500 }), fc.constant(0)),
        order_by: fc.array(order, { maxLength: 2 }),
        database: name,
        ...extra
      },
      { requiredKeys: ['table', 'columns', 'filters', 'offset', 'limit'] }
    ),
    'database.count': fc.record(
      { table: name, filters: fc.array(filter, { maxLength: 3 }), database: name, ...extra },
      { requiredKeys: ['table', 'filters'] }
    )
  }
  for (const spec of specs.filter((s) => s.kind !== null)) {
    const kind = spec.kind as ToolQueryKind
    const validate = ajv.compile(spec.inputSchema)
    let accepted = 0
    let refused = 0
    fc.assert(
      fc.property(args[kind], (a) => {
        const clean = JSON.parse(JSON.stringify(a)) as Record<string, unknown>
        const bySchema = validate(clean)
        const byCodec = E.isRight(decodeQuery({ ...clean, kind }))
        if (byCodec) accepted++
        else refused++
        return bySchema === byCodec
      }),
      fcOptions(600)
    )
    assert.ok(
      accepted > 50 && refused > 20,
      `${spec.name}: both verdicts exercised (${accepted} accepted, ${refused} refused)`
    )
  }
})

tools(
  "a profile enables the kinds of its sections; source.context needs [source_analysis] and the case's contract",
  () => {
    const names = (p: ReturnType<typeof profileOf>, context: boolean) =>
      toolSpecs({ profile: p, analysis: analysisOf(p), context, caseId: 'c', queryCost: 1 }).map((s) => s.name)
    assert.equal(names(full, true).length, 12)
    assert.not.ok(names(full, false).includes('source_context'))
    assert.equal(names(profileOf({ database }), false), [
      'database_tables',
      'database_schema',
      'database_rows',
      'database_count',
      'case_status'
    ])
    assert.equal(names(profileOf({ source }), false), [
      'source_files',
      'source_search',
      'source_symbol',
      'source_registration',
      'source_schema',
      'source_read',
      'case_status'
    ])
  }
)

tools('a refusal starts with its code and says what to change; a requester is made safe to record', () => {
  const r = refusalAnswer(failure('BUDGET_EXHAUSTED', 'the budget is spent'))
  assert.is(r.isError, true)
  assert.ok(
    r.content[0]?.text.startsWith(
      'BUDGET_EXHAUSTED: the budget is spent\nNothing was recorded in the case.\nWhat you can change: '
    )
  )
  const outage = queryAnswer({
    outcome: 'failed',
    commandId: 'c',
    failure: failure('DATABASE_UNAVAILABLE', 'down'),
    generation: 3,
    receipt: { seq: 3, hash: 'h' },
    answeredFromCase: false,
    origin: 'own',
    reservation: { seq: 2, requester: null },
    budgetLeft: 2
  })
  assert.match(outage.content[0]?.text ?? '', 'the reservation is kept')
  assert.equal(requesterOf({ name: 'a\u0000b\ud800', version: 7 }), { protocol: 'mcp', name: 'a?b?', version: '' })
  assert.equal(requesterOf(undefined), { protocol: 'mcp', name: 'unnamed client', version: '' })
  assert.is(
    requesterOf({ name: `${'x'.repeat(127)}\u{1F600}`, version: '1' }).name,
    'x'.repeat(127),
    'a surrogate pair is not split'
  )
})

tools('a lock left by a stopped writer tells the agent who must act and how, not that the case is corrupt', () => {
  const text = (
    refusalAnswer(failure('CASE_LOCK_STALE', 'case is locked by a writer that is gone')).content[0] as { text: string }
  ).text
  assert.match(text, 'an operator must check the case (vba verify) and lift the lock (vba case unlock)')
  assert.not.match(text, 'does not verify')
})

tools.run()
