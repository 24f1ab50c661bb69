/**
 * Property: the report's timeline (src/projections/report/timeline.ts) shows every event as the
 * timeline before its move out of render.ts did (the frozen copy in test/reference), on 5,000
 * random events made from every event of the example cases (seeded: VBA_TEST_SEED replays a run).
 * Each is an example event with its strings, numbers and flags drawn again (markup, ids that are
 * and are not known, empty text), its seq, time and actor too. The changes meant since (the
 * entities found in the report, a turn decided by an MCP agent, a revision of one fact or one query
 * in the singular) are left out of the random events: the goldens hold them
 * (test/goldens/report-timeline.txt).
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import * as path from 'node:path'
import { checkLine, type RecordedEvent } from '../../src/events/chain.js'
import { timelineItem } from '../../src/projections/report/timeline.js'
import { referenceTimelineItem } from '../reference/timeline-c8a4eab.js'
import { repoRoot } from '../helpers/fs.js'
import { SEED, seededRandom, withSeed } from '../helpers/seed.js'

const EVENTS = 5000

/** Every event of the example cases that decodes (upcast to its current version). */
const exampleEvents = (): RecordedEvent[] => {
  const root = path.join(repoRoot(), 'case-format', 'examples')
  const out: RecordedEvent[] = []
  for (const group of readdirSync(root)) {
    if (!statSync(path.join(root, group)).isDirectory()) continue
    for (const name of readdirSync(path.join(root, group))) {
      const file = path.join(root, group, name, 'events.jsonl')
      let text: string
      try {
        text = readFileSync(file, 'utf8')
      } catch {
        continue
      }
      text
        .split('\n')
        .filter(Boolean)
        .forEach((line, i) => {
          const c = checkLine(line, { seq: i + 1, prev: null, lineNo: i + 1 })
          if (c.event !== undefined) out.push(c.event)
        })
    }
  }
  return out
}

/** The event types no example holds, as templates. */
const TEMPLATES: ReadonlyArray<{ type: string; data: unknown }> = [
  { type: 'ModelFailed', data: { turn: 2, code: 'MODEL_HTTP_ERROR', message: 'answered HTTP 503' } },
  {
    type: 'ModelResponseRejected',
    data: { turn: 2, code: 'INVALID_LLM_RESPONSE', message: 'not JSON', consecutive: 1 }
  },
  {
    type: 'QueryAnsweredFromCase',
    data: {
      plan_id: 'P3',
      request_digest: `sha256:${'1'.repeat(64)}`,
      evidence_id: 'E4',
      capture: { digest: `sha256:${'2'.repeat(64)}`, size: 10 }
    }
  },
  {
    type: 'ResearchFailed',
    data: { reservation_id: 'res-P2', code: 'TABLE_NOT_FOUND', message: 'no table', unavailable: false }
  },
  { type: 'BudgetReleased', data: { reservation_id: 'res-P2', amount: 1, reason: 'refused' } },
  { type: 'BudgetToppedUp', data: { amount: 5, reason: 'a deeper look' } },
  { type: 'PlanCancelled', data: { reservation_id: 'res-P2', plan_id: 'P2', reason: 'not needed' } },
  {
    type: 'HypothesisUpdated',
    data: { hypothesis_id: 'H1', status: 'supported', evidence: ['E4', 'E9'], note: 'see E4' }
  },
  { type: 'LabTestRequested', data: { request_id: 'L1', description: 'Net a wolpertinger (E4)' } },
  { type: 'LabFeedbackRecorded', data: { request_id: 'L1', feedback: 'it despawned, H1 holds' } }
]

const STRINGS = [
  '',
  'plain text',
  '<script>alert(1)</script>',
  'a & b < c > d "q" \'s\'',
  'E1',
  'H1',
  'E4 and H2 and E99',
  'see E12, H9.',
  'BLOCKED',
  'INVESTIGATING',
  'database.rows',
  'source.read',
  'markdown',
  'plain',
  'ünïcödé ✓ 𝄞',
  'line one\nline two',
  'P3',
  'res-P2',
  `sha256:${'a'.repeat(64)}`
]

const pick = <A>(r: () => number, list: readonly A[]): A => list[Math.floor(r() * list.length)] as A

/** A value of the same shape as `v`, its leaves drawn again (about half of them). */
const redraw = (r: () => number, v: unknown, key = ''): unknown => {
  if (Array.isArray(v)) {
    const base = r() < 0.2 ? v.slice(0, Math.floor(r() * (v.length + 1))) : v
    return base.map((x) => redraw(r, x))
  }
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      // the changes meant since the reference: entities found in the report, an MCP agent's turn
      if (k === 'extracted' || k === 'requester') continue
      out[k] = redraw(r, x, k)
    }
    return out
  }
  if (r() < 0.5) return v
  if (v === null) return r() < 0.5 ? null : pick(r, STRINGS)
  if (typeof v === 'string') return key === 'kind' && r() < 0.5 ? v : pick(r, STRINGS)
  // a revision of one fact or one query is said in the singular since the reference (the goldens hold it)
  if (typeof v === 'number' && (key === 'fact_count' || key === 'queries'))
    return pick(r, [0, 2, 7, 1000, 2 + Math.floor(r() * 1e6)])
  if (typeof v === 'number') return pick(r, [0, 1, 2, 7, 1000, Math.floor(r() * 1e6)])
  if (typeof v === 'boolean') return r() < 0.5
  return v
}

const attempt = (f: () => string | null): string => {
  try {
    return JSON.stringify(f())
  } catch (e) {
    return `throws ${(e as Error).message}`
  }
}

/**
 * Event types the reference (c8a4eab) did not know: their entries are today's only, held by their
 * own tests (CommandSigned: test/adapters/signed-commands.int, the timeline names the signer).
 */
const NEWER_THAN_REFERENCE: ReadonlySet<string> = new Set(['CommandSigned'])

test(`${EVENTS} random events: the timeline entry is the reference's, byte for byte (seed ${SEED})`, () =>
  withSeed(async () => {
    const examples = exampleEvents()
    const first = examples[0] as RecordedEvent
    const pool = [...examples, ...TEMPLATES.map((t) => ({ ...first, ...t }) as RecordedEvent)]
    const { registry } = await import('../../src/events/catalog.js')
    assert.equal(
      [...registry.definitions.keys()].filter((t) => !NEWER_THAN_REFERENCE.has(t) && !pool.some((e) => e.type === t)),
      [],
      'every event type the reference knows is drawn'
    )
    const r = seededRandom()
    let shown = 0
    for (let i = 0; i < EVENTS; i++) {
      const base = pick(r, pool)
      const e = {
        ...base,
        seq: 1 + Math.floor(r() * 500),
        at: r() < 0.5 ? base.at : pick(r, ['2026-11-30T10:00:00.000Z', '<at>']),
        actor: r() < 0.7 ? base.actor : pick(r, ['model', 'operator', 'system', 'controller']),
        data: redraw(r, base.data)
      } as RecordedEvent
      const raw = (e.data as { raw?: { digest?: unknown } }).raw?.digest
      const objects = new Map<string, Uint8Array>(
        typeof raw === 'string' && r() < 0.7 ? [[raw, Buffer.from(pick(r, STRINGS))]] : []
      )
      const ids = (prefix: string): Set<string> =>
        new Set(Array.from({ length: 12 }, (_, n) => `${prefix}${n + 1}`).filter(() => r() < 0.5))
      const known = { evidence: ids('E'), hypotheses: ids('H') }
      const now = attempt(() => timelineItem(e, objects, known))
      const then = attempt(() => referenceTimelineItem(e, objects, known))
      if (now !== then)
        assert.unreachable(
          `event ${i} (${e.type}) differs:\n  today:     ${now}\n  reference: ${then}\n  event: ${JSON.stringify(e)}`
        )
      if (now !== 'null' && !now.startsWith('throws')) shown++
    }
    assert.ok(shown > EVENTS / 2, `${shown} of ${EVENTS} events have an entry`)
  }))

test('a CommandSigned entry names the signer and the events it covers, escaped', () => {
  const first = exampleEvents()[0] as RecordedEvent
  const e = {
    ...first,
    type: 'CommandSigned',
    actor: 'system',
    data: { first_seq: 3, last_seq: 5, principal: '<b>mallory</b>', fingerprint: 'SHA256:abc&def' }
  } as unknown as RecordedEvent
  const item = timelineItem(e, new Map(), { evidence: new Set(), hypotheses: new Set() }) ?? ''
  assert.match(item, 'events 3–5 signed by <b>&lt;b&gt;mallory&lt;/b&gt;</b>')
  assert.match(item, 'SHA256:abc&amp;def')
})

test.run()
