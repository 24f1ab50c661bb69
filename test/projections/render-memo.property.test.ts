/**
 * Property: verify's render, which carries what it made for one prompt over to the next (a memo
 * per case: payloads, citations, the latest results, older-evidence entries, the guard's sizings),
 * renders every prompt exactly as a render from scratch does (the writer's). The states are folded
 * by the case fold from generated histories (new captures of every size, repeats, answers from the
 * case, hypotheses proposed, updated and refuted, rejections, failures) and snapshotted as the rule
 * fold does before each prompt; the limit, the guard's option and the wording vary, so prompts are
 * trimmed, dropped and cut by the last resort. Also: a guard sizing made from the one before holds
 * what a sizing made from scratch holds, for working sets that share, reorder and drop payloads.
 */
import { test } from 'uvu'
import * as assert from 'uvu/assert'
import fc from 'fast-check'
import { isDeepStrictEqual } from 'node:util'
import { fcOptions } from '../helpers/seed.js'
import { initCaseState, snapshotCaseState, type CaseState } from '../../src/domain/case-state.js'
import { evolve } from '../../src/domain/case-evolve.js'
import type { Capture } from '../../src/events/capture.js'
import type { RecordedEvent } from '../../src/events/chain.js'
import type { InvestigationSettings } from '../../src/events/settings.js'
import { renderPrompt } from '../../src/projections/prompt.js'
import { renderMemoV2 } from '../../src/projections/prompt-v2/render.js'
import { sizingOf } from '../../src/projections/prompt-v2/payload-fit.js'
import type { Payload } from '../../src/projections/prompt-v2/working-set.js'

const settings = (max: number, newestWhole: boolean, exact: boolean): InvestigationSettings => ({
  prompt_version: 'investigation_project_v2',
  budget_total: 500,
  action_costs: { 'project.query': 1 },
  max_invalid_responses: 3,
  retry_delay_ms: 1000,
  prompt_max_chars: max,
  source_context: null,
  max_tokens: null,
  count_refusals: true,
  answer_repeats_from_case: true,
  binding: null,
  newest_result_whole: newestWhole,
  ...(exact ? { exact_wording: true } : {}),
  contract: {
    source: { code_path_prefixes: ['src/'] },
    databases: [{ name: 'world', allowed_tables: ['creature_template', 'smart_scripts'] }],
    limits: {
      max_lines: 80,
      max_rows: 200,
      max_result_bytes: 262144,
      max_matches: 200,
      max_files: 200,
      max_line_chars: 400,
      max_in_values: 100,
      max_filters: 16,
      max_columns: 64
    }
  }
})

const digest = (i: number): string => `sha256:${i.toString(16).padStart(64, '0')}`
const base = {
  format: 'vba-capture' as const,
  format_version: 1 as const,
  schema: 'project-query-v1' as const,
  settings: {},
  settings_hash: digest(1)
}

/** A source read of `lines` lines (each a little different), or a page of `lines` rows. */
const captureOf = (n: number, lines: number, rows: boolean): Capture =>
  rows
    ? {
        ...base,
        kind: 'database.rows',
        origin: { type: 'database', client: 'mysql2', database: 'world', snapshot_id: 'snap-1' },
        request: { kind: 'database.rows', table: 'smart_scripts', columns: ['id', 'comment'], offset: n, limit: lines },
        result: {
          table: 'smart_scripts',
          columns: [
            { name: 'id', type: 'INT' },
            { name: 'comment', type: 'TEXT' }
          ],
          offset: n,
          limit: lines,
          row_count: lines,
          order: [{ column: 'id', direction: 'asc' }],
          order_source: 'primary_key',
          rows: Array.from({ length: lines }, (_, i) => ({
            id: i,
            comment: `row ${i} of page ${n} → ${'x'.repeat(i % 40)}`
          })),
          has_more: n % 2 === 0,
          next_offset: n + lines,
          complete_filtered_rows: false
        }
      }
    : {
        ...base,
        kind: 'source.read',
        origin: {
          type: 'git',
          url: 'u',
          commit: 'c'.repeat(40),
          files: [{ path: `src/F${n}.cpp`, blob: 'b'.repeat(40), sha256: 'e'.repeat(64), size: 1 }]
        },
        request: { kind: 'source.read', path: `src/F${n}.cpp`, start_line: 1, end_line: lines + 20 },
        result: {
          path: `src/F${n}.cpp`,
          blob: 'b'.repeat(40),
          total_lines: 5000,
          start_line: 1,
          end_line: lines,
          lines: Array.from({ length: lines }, (_, i) => ({
            line: i + 1,
            text: `  Call(${n}, ${i}); ${'/'.repeat(i % 50)}`
          })),
          eof: false,
          truncated: true,
          next_start_line: lines + 1,
          requested_end_line: lines + 20,
          line_limit_exceeded: true,
          line_limit: lines,
          requested_line_count: lines + 20
        }
      }

/** What happens between two prompts. */
type Step =
  | { readonly kind: 'capture'; readonly lines: number; readonly rows: boolean }
  | { readonly kind: 'repeat' | 'fromCase'; readonly pick: number }
  | { readonly kind: 'propose'; readonly picks: readonly number[] }
  | { readonly kind: 'update'; readonly pick: number; readonly picks: readonly number[]; readonly refute: boolean }
  | { readonly kind: 'reject' | 'fail' }

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      lines: fc.integer({ min: 0, max: 120 }),
      rows: fc.boolean()
    })
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom('repeat' as const, 'fromCase' as const), pick: fc.nat() })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('propose' as const), picks: fc.array(fc.nat(), { maxLength: 4 }) })
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('update' as const),
      pick: fc.nat(),
      picks: fc.array(fc.nat(), { maxLength: 3 }),
      refute: fc.boolean()
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('reject' as const, 'fail' as const) }) }
)

/** Folds a history step by step, snapshotting the state before each prompt as the rule fold does. */
const prompts = (steps: readonly Step[], s0: CaseState): { states: CaseState[]; captures: Map<string, Capture> } => {
  let seq = 0
  const ev = (type: string, data: Record<string, unknown>): RecordedEvent =>
    ({
      seq: ++seq,
      id: `e${seq}`,
      at: new Date(Date.UTC(2026, 11, 1, 0, 0, seq)).toISOString(),
      actor: 'controller',
      type,
      data,
      command_id: `c${seq}`,
      prev: 'x',
      hash: 'y',
      version: 1
    }) as unknown as RecordedEvent
  const s = s0
  const captures = new Map<string, Capture>()
  const ids: string[] = []
  const states: CaseState[] = []
  // the preparation's evidence, then the start
  for (let k = 0; k < 2; k++) {
    const d = digest(1000 + k)
    captures.set(d, captureOf(1000 + k, 5 + 20 * k, k === 1))
    ids.push(`E${ids.length + 1}`)
    evolve(
      s,
      ev('EnrichmentCaptured', {
        revision: 1,
        evidence_id: ids[ids.length - 1],
        capture: { digest: d, size: 1 },
        kind: 'x',
        request_digest: d,
        repeat: false
      })
    )
  }
  let hypotheses = 0
  for (const [turn, st] of steps.entries()) {
    states.push(snapshotCaseState(s))
    evolve(
      s,
      ev('ModelRequested', {
        turn: turn + 1,
        phase: 'investigation',
        prompt: { digest: digest(1), size: 1 },
        prompt_version: 'v'
      })
    )
    evolve(s, ev('ModelResponded', { turn: turn + 1, raw: { digest: digest(2), size: 1 }, provenance: null }))
    const plan = `P${turn + 1}`
    const reservation = `res-${plan}`
    const pick = (n: number): string => ids[n % ids.length] ?? 'E1'
    switch (st.kind) {
      case 'capture':
      case 'repeat': {
        evolve(
          s,
          ev('PlanConfirmed', { plan_id: plan, turn: turn + 1, operation: 'project.query', arguments: { kind: 'x' } })
        )
        evolve(
          s,
          ev('BudgetReserved', {
            reservation_id: reservation,
            amount: 1,
            plan_id: plan,
            request_digest: null,
            requester: null,
            request: null
          })
        )
        let id: string
        let d: string
        if (st.kind === 'capture') {
          d = digest(2000 + turn)
          captures.set(d, captureOf(turn, st.lines, st.rows))
          id = `E${ids.length + 1}`
          ids.push(id)
        } else {
          id = pick(st.pick)
          d = s.research.evidence.get(id)?.digest ?? digest(1000)
        }
        evolve(
          s,
          ev('CaptureRecorded', {
            reservation_id: reservation,
            evidence_id: id,
            capture: { digest: d, size: 1 },
            kind: 'x',
            request_digest: d,
            repeat: st.kind === 'repeat'
          })
        )
        evolve(s, ev('BudgetConsumed', { reservation_id: reservation, amount: 1 }))
        break
      }
      case 'fromCase': {
        const id = pick(st.pick)
        const d = s.research.evidence.get(id)?.digest ?? digest(1000)
        evolve(
          s,
          ev('PlanConfirmed', { plan_id: plan, turn: turn + 1, operation: 'project.query', arguments: { kind: 'x' } })
        )
        evolve(
          s,
          ev('QueryAnsweredFromCase', {
            plan_id: plan,
            evidence_id: id,
            capture: { digest: d, size: 1 },
            request_digest: d
          })
        )
        break
      }
      case 'propose':
        hypotheses++
        evolve(
          s,
          ev('HypothesisProposed', {
            hypothesis_id: `H${hypotheses}`,
            statement: `idea ${hypotheses}`,
            evidence: st.picks.map(pick)
          })
        )
        break
      case 'update':
        if (hypotheses === 0) break
        evolve(
          s,
          ev('HypothesisUpdated', {
            hypothesis_id: `H${(st.pick % hypotheses) + 1}`,
            status: st.refute ? 'refuted' : 'supported',
            evidence: st.picks.map(pick),
            note: 'n'
          })
        )
        break
      case 'reject':
        evolve(
          s,
          ev('ModelResponseRejected', {
            turn: turn + 1,
            code: 'MODEL_ANSWER_INVALID',
            message: 'not the contract',
            consecutive: 1
          })
        )
        break
      case 'fail':
        evolve(
          s,
          ev('PlanConfirmed', {
            plan_id: plan,
            turn: turn + 1,
            operation: 'project.query',
            arguments: { kind: 'source.read' }
          })
        )
        evolve(
          s,
          ev('BudgetReserved', {
            reservation_id: reservation,
            amount: 1,
            plan_id: plan,
            request_digest: null,
            requester: null,
            request: null
          })
        )
        evolve(
          s,
          ev('ResearchFailed', {
            reservation_id: reservation,
            code: 'SOURCE_FILE_NOT_FOUND',
            message: 'no such file',
            unavailable: false
          })
        )
        evolve(s, ev('BudgetReleased', { reservation_id: reservation, amount: 1 }))
    }
  }
  states.push(snapshotCaseState(s))
  return { states, captures }
}

test('a render that carries its memo from prompt to prompt renders what a render from scratch does', () => {
  let trimmed = 0
  let dropped = 0
  let resorted = 0
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 1, maxLength: 40 }),
      fc.oneof(fc.integer({ min: 2500, max: 9000 }), fc.integer({ min: 9000, max: 40_000 })),
      fc.boolean(),
      fc.boolean(),
      fc.boolean(),
      (steps, max, newestWhole, exact, shareMaps) => {
        const s0 = initCaseState()
        s0.settings = settings(max, newestWhole, exact)
        s0.state = 'INVESTIGATING'
        s0.interpretation = 'The wolpertinger vanishes.'
        const { states, captures } = prompts(steps, s0)
        const memo = renderMemoV2()
        // verify's inputs share the captures of one set of evidence references (prompt-derivation.ts); or not
        const byRefs = new WeakMap<object, Map<string, Capture>>()
        for (const s of states) {
          const refs = s.research.evidenceRefs
          let caps = shareMaps ? byRefs.get(refs) : undefined
          if (caps === undefined) {
            caps = new Map([...refs.keys()].flatMap((d) => (captures.has(d) ? [[d, captures.get(d) as Capture]] : [])))
            byRefs.set(refs, caps)
          }
          const inputs = { report: 'The wolpertinger vanishes when netted.', facts: [], captures: caps }
          const carried = renderPrompt(s, inputs, memo)
          const fresh = renderPrompt(s, inputs)
          assert.is(carried.text, fresh.text)
          assert.is((carried.pieces ?? []).join('\n'), fresh.text)
          assert.equal(carried.cut, fresh.cut)
          if (fresh.cut.some((c) => c.includes('not shown'))) trimmed++
          if (fresh.cut.some((c) => c.endsWith('summary'))) dropped++
          if (fresh.cut.some((c) => c.startsWith('the limit is too small'))) resorted++
        }
      }
    ),
    fcOptions(200)
  )
  // the histories reach the guard's trims, drops and last resort (the comparison above can fail)
  assert.ok(trimmed > 120, `${trimmed} prompts trimmed`)
  assert.ok(dropped > 100, `${dropped} prompts with a payload dropped`)
  assert.ok(resorted > 50, `${resorted} prompts cut by the last resort`)
})

test('a guard sizing made from the one before holds what a sizing from scratch holds', () => {
  const view = (items: number) => ({
    head: ['h'],
    items: Array.from({ length: items }, (_, i) => ({ lines: [`item ${i}`] })),
    tail: (shown: number) =>
      shown < items ? [`… ${items - shown} more (a marker longer than an item: ${'.'.repeat(30)})`] : [],
    unit: 'rows',
    summary: `${items} rows`
  })
  const payload = fc
    .record({ items: fc.nat(12), cited: fc.boolean(), latest: fc.boolean(), age: fc.nat(20), pad: fc.nat(40) })
    .map(
      (p): Payload => ({
        id: `E${p.age}`,
        header: `E${p.age}:${' '.repeat(p.pad)}`,
        view: view(p.items),
        summary: `E${p.age} summary`,
        cited: p.cited,
        latest: p.latest,
        age: p.age
      })
    )
  fc.assert(
    fc.property(
      fc.array(payload, { minLength: 1, maxLength: 12 }),
      // each working set from the pool: kept, shuffled, dropped or added payloads (objects shared)
      fc.array(fc.tuple(fc.array(fc.nat(), { maxLength: 14 }), fc.boolean()), { minLength: 1, maxLength: 6 }),
      (pool, sets) => {
        let before: ReturnType<typeof sizingOf> | undefined
        for (const [picks, keep] of sets) {
          const payloads = picks.map((k) => pool[k % pool.length] as Payload)
          const carried = sizingOf(payloads, keep, before)
          const fresh = sizingOf(payloads, keep)
          assert.ok(isDeepStrictEqual({ ...carried }, { ...fresh }), 'the same sizing')
          before = carried
        }
      }
    ),
    fcOptions(400)
  )
})

test.run()
