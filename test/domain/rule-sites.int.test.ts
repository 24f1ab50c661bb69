/**
 * Every place a rule is checked, not only every rule: the table of sites is read from the rule
 * modules (each `bad('rule.id', message)` in src/domain/rules), and each site of a rule checked in
 * more than one place has its own forged case here, told apart by the message that site writes (its
 * template, read from the source). A new site, or a case that reaches another site of its rule
 * than the one it names, fails the test. The sites that read objects (captures and facts documents)
 * are forged on disk and checked through verifyCase; the others through the rule fold. The sites
 * without a case yet are listed in GAPS (none now), printed, and held to that list.
 */
import { suite } from 'uvu'
import * as assert from 'uvu/assert'
import { cpSync, readdirSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { checkLine, sealEvent, type RecordedEvent } from '../../src/events/chain.js'
import { canonicalJson, sha256Digest } from '../../src/events/canonical.js'
import { ruleFold, type RuleViolation } from '../../src/domain/rules.js'
import type { Actor, ObjectRef } from '../../src/events/codecs.js'
import { verifyCase } from '../../src/fp.js'
import { forger, type Forger } from '../helpers/forger.js'
import { writeInvestigation, SMART_QUERY } from '../helpers/investigation.js'
import { repoRoot, right, tempDir } from '../helpers/fs.js'

// ---------------------------------------------------------------------------------------------
// The sites, from the source.

interface Site {
  readonly rule: string
  readonly file: string
  /** The top-level function the check sits in. */
  readonly fn: string
  /** The message template as written (`${…}` parts kept). */
  readonly template: string
  /** Matches the messages this site writes. */
  readonly pattern: RegExp
}

/** The end of a string literal starting at `i` (a quote), template literals with nested `${…}` included. */
const literalEnd = (s: string, i: number): number => {
  const q = s[i]
  let j = i + 1
  while (j < s.length && s[j] !== q) {
    if (s[j] === '\\') j += 2
    else if (q === '`' && s[j] === '$' && s[j + 1] === '{') {
      let depth = 1
      j += 2
      while (depth > 0 && j < s.length) {
        if (s[j] === '`' || s[j] === "'" || s[j] === '"') j = literalEnd(s, j) + 1
        else {
          if (s[j] === '{') depth++
          else if (s[j] === '}') depth--
          j++
        }
      }
    } else j++
  }
  return j
}

/** The literal parts of a template, between its `${…}` parts. */
const literalParts = (template: string): string[] => {
  const parts: string[] = []
  let cur = ''
  for (let j = 0; j < template.length; ) {
    if (template[j] === '$' && template[j + 1] === '{') {
      parts.push(cur)
      cur = ''
      let depth = 1
      j += 2
      while (depth > 0 && j < template.length) {
        if (template[j] === '`' || template[j] === "'" || template[j] === '"') j = literalEnd(template, j) + 1
        else {
          if (template[j] === '{') depth++
          else if (template[j] === '}') depth--
          j++
        }
      }
    } else {
      cur += template[j] === '\\' ? (template[++j] ?? '') : template[j]
      j++
    }
  }
  parts.push(cur)
  return parts
}

const escapeRegExp = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

const sitesOf = (): Site[] => {
  const dir = path.join(repoRoot(), 'src', 'domain', 'rules')
  const out: Site[] = []
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.ts')) continue
    const s = readFileSync(path.join(dir, file), 'utf8')
    for (const m of s.matchAll(/\bbad\(\s*'([a-z]+\.[a-z-]+)',\s*/g)) {
      const start = (m.index ?? 0) + m[0].length
      const fns = [...s.slice(0, start).matchAll(/^(?:export )?const (\w+)/gm)]
      const fn = fns[fns.length - 1]?.[1] ?? '?'
      if (!['`', "'", '"'].includes(s[start] ?? '')) {
        // A message computed elsewhere (`c.bad(rule, problem)`): any text; the event tells the site.
        const name = /^\w+/.exec(s.slice(start))?.[0] ?? '?'
        out.push({ rule: m[1] as string, file, fn, template: `<${name}>`, pattern: /[\s\S]*/ })
        continue
      }
      const end = literalEnd(s, start)
      const template = s.slice(start + 1, end)
      const parts = s[start] === '`' ? literalParts(template) : [template.replace(/\\(.)/g, '$1')]
      out.push({
        rule: m[1] as string,
        file,
        fn,
        template,
        pattern: new RegExp(`^${parts.map(escapeRegExp).join('[\\s\\S]*?')}$`)
      })
    }
  }
  return out
}

const SITES = sitesOf()
const keyOf = (s: Site): string => `${s.rule} @ ${s.file}:${s.fn}: ${s.template}`
const byRule = new Map<string, Site[]>()
for (const s of SITES) byRule.set(s.rule, [...(byRule.get(s.rule) ?? []), s])
const MULTI = SITES.filter((s) => (byRule.get(s.rule)?.length ?? 0) > 1)

// ---------------------------------------------------------------------------------------------
// The base investigation and the forging (as in rules.int.test.ts).

const dir = path.join(tempDir('rule-sites'), 'case')
await writeInvestigation(dir, tempDir('rule-sites-world'))
const recorded: RecordedEvent[] = readFileSync(path.join(dir, 'events.jsonl'), 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l, i) => {
    const c = checkLine(l, { seq: i + 1, prev: null, lineNo: i + 1 })
    if (c.event === undefined) throw new Error(JSON.stringify(c.findings))
    return c.event
  })
const at = (seq: number): RecordedEvent => recorded[seq - 1] as RecordedEvent

type Draft = { type: string; actor: Actor; data: unknown }

const forge = (cut: number, ...commands: Draft[][]): RuleViolation[] => {
  const fold = ruleFold()
  assert.equal(
    recorded.slice(0, cut).flatMap((e) => fold.feed(e)),
    [],
    'the unforged prefix passes'
  )
  let prev = at(cut).hash
  let seq = cut
  const out: RuleViolation[] = []
  commands.forEach((cmd, i) => {
    for (const d of cmd) {
      seq++
      const s = right(
        sealEvent(d, { seq, prev, id: `forged-${seq}`, at: '2026-11-30T10:00:01.000Z', commandId: `forged-${i}` })
      )
      prev = s.envelope.hash
      out.push(...fold.feed(s.event))
    }
  })
  out.push(...fold.end())
  return out
}

const checkpoint = (generation: number, state: string, extra: Record<string, unknown> = {}): Draft => ({
  type: 'CheckpointRecorded',
  actor: 'system',
  data: { generation, state, reason: null, resume_state: null, retry_not_before: null, manual_retry: false, ...extra }
})
const request = (turn: number, phase = 'investigation'): Draft => ({
  type: 'ModelRequested',
  actor: 'controller',
  data: {
    turn,
    phase,
    prompt: { digest: sha256Digest('p'), size: 1 },
    prompt_version: 'investigation_project_v1',
    prompt_chars: 1
  }
})
const responded = (turn: number): Draft => ({
  type: 'ModelResponded',
  actor: 'model',
  data: { turn, raw: { digest: sha256Digest('r'), size: 1 }, provenance: null }
})
const reserve = (id: string, amount: number, plan: string | null, requestDigest: string | null): Draft => ({
  type: 'BudgetReserved',
  actor: 'controller',
  data: {
    reservation_id: id,
    action: 'project.query',
    amount,
    plan_id: plan,
    request_digest: requestDigest,
    requester: null,
    request: null
  }
})
const confirm = (turn: number, planId: string, args: unknown = SMART_QUERY): Draft => ({
  type: 'PlanConfirmed',
  actor: 'model',
  data: { plan_id: planId, turn, operation: 'project.query', arguments: args }
})
const capture = (reservation: string, evidence: string, requestDigest: string): Draft => ({
  type: 'CaptureRecorded',
  actor: 'system',
  data: {
    reservation_id: reservation,
    capture: { digest: `sha256:${'9'.repeat(64)}`, size: 100 },
    kind: 'database.rows',
    request_digest: requestDigest,
    evidence_id: evidence,
    repeat: false
  }
})
const consumed = (reservation: string, amount: number): Draft => ({
  type: 'BudgetConsumed',
  actor: 'system',
  data: { reservation_id: reservation, amount }
})
const released = (reservation: string, amount: number, reason: string, actor: Actor = 'system'): Draft => ({
  type: 'BudgetReleased',
  actor,
  data: { reservation_id: reservation, amount, reason }
})
const cancel = (reservation: string, plan: string, reason: string): Draft => ({
  type: 'PlanCancelled',
  actor: 'operator',
  data: { reservation_id: reservation, plan_id: plan, reason }
})
const proposed = (id: string): Draft => ({
  type: 'HypothesisProposed',
  actor: 'model',
  data: { hypothesis_id: id, statement: 's', evidence: ['E4'] }
})
const feedback = (id: string): Draft => ({
  type: 'LabFeedbackRecorded',
  actor: 'operator',
  data: { request_id: id, feedback: 'f' }
})
const PLAN_DIGEST = sha256Digest(right(canonicalJson(SMART_QUERY)))
const started = at(6).data as { settings: Record<string, unknown> }

/** A forged case: the violations of its forgery, and the seq the site must fire at. */
interface Case {
  readonly violations: () => readonly RuleViolation[] | Promise<readonly RuleViolation[]>
  readonly seq: number
}

/**
 * A forged case written on disk (a copy of the base investigation, then `build` as a forger would)
 * and checked through verifyCase: the violations are its rule findings, objects read back included.
 */
const onDisk = (build: (f: Forger) => void) => async (): Promise<RuleViolation[]> => {
  const copy = path.join(tempDir('rule-sites-disk'), 'case')
  cpSync(dir, copy, { recursive: true })
  build(forger(copy))
  const report = right(await verifyCase(copy)())
  return report.findings.flatMap((f) => {
    const rule = f.data?.['rule']
    if (typeof rule !== 'string' || f.seq === undefined) return []
    const prefix = `${rule}: `
    return [
      {
        code: f.code,
        rule,
        seq: f.seq,
        message: f.message.startsWith(prefix) ? f.message.slice(prefix.length) : f.message
      } as RuleViolation
    ]
  })
}

const E4_CAPTURE = (at(16).data as { capture: ObjectRef }).capture
const E1_CAPTURE = (at(2).data as { capture: ObjectRef }).capture
const OTHER_DIGEST = sha256Digest('a request that was never asked')
const json = (v: unknown): Buffer => Buffer.from(right(canonicalJson(v)))

/** After the note (seq 21): an operator query reserved under `requestDigest` and a capture of `ref` recorded for it (seq 23). */
const operatorCapture =
  (ref: (f: Forger) => ObjectRef, kind: string, requestDigest: string) =>
  (f: Forger): void => {
    f.cut(21)
    f.append('op-reserve', [reserve('res-x', 1, null, requestDigest)])
    f.append('op-record', [
      {
        type: 'CaptureRecorded',
        actor: 'system',
        data: {
          reservation_id: 'res-x',
          capture: ref(f),
          kind,
          request_digest: requestDigest,
          evidence_id: 'E5',
          repeat: false
        }
      },
      consumed('res-x', 1)
    ])
  }

/** After the conclusion: revision 2's inputs (seq 26) and its completion over a facts object of `facts` bytes (seq 27). */
const revisionTwo =
  (facts: Buffer, completed: { fact_count: number; complete: boolean }) =>
  (f: Forger): void => {
    const index = { report: f.object(Buffer.from('two'), 'text/plain'), entities: [], attachments: [] }
    f.append('in-2', [
      {
        type: 'InputsRecorded',
        actor: 'operator',
        data: {
          revision: 2,
          inputs_version: 1,
          inputs_digest: sha256Digest(right(canonicalJson(index))),
          ...index,
          origin: null
        }
      }
    ])
    f.append('done-2', [
      {
        type: 'RevisionCompleted',
        actor: 'system',
        data: {
          revision: 2,
          facts: f.object(facts),
          queries: 0,
          binding: null,
          enrichment: null,
          ...completed
        }
      }
    ])
  }
const factsOf = (...facts: Array<Record<string, unknown>>): Buffer =>
  json({ format: 'vba-facts', version: 1, revision: 2, facts })
const COVERAGE = { fact_id: 'F9', type: 'project_context_coverage', complete: true, left_out: [] }

// Keyed by `rule @ file:function: template` (the site's key above).
const CASES: Record<string, Case> = {
  'budget.overdrawn @ budget.ts:checkReserved: reserving ${d.amount} leaves ${remainingBudget(s) - d.amount} of the budget (${r.consumed} consumed, ${heldBudget(r)} held, total ${budgetTotal(s)})':
    { violations: () => forge(17, [reserve('res-big', 10, null, PLAN_DIGEST)]), seq: 18 },
  'budget.overdrawn @ lifecycle.ts:checkStart: ${committed} units are committed already, more than the budget of ${e.data.settings.budget_total}':
    {
      // Three units held by an operator's query before the start; a start with a budget of 1 overdraws it.
      violations: () =>
        forge(
          5,
          [reserve('res-op', 3, null, PLAN_DIGEST)],
          [
            {
              type: 'InvestigationStarted',
              actor: 'controller',
              data: { ...started, settings: { ...started.settings, budget_total: 1 } }
            },
            checkpoint(1, 'INTERPRETING')
          ]
        ),
      seq: 7
    },
  "budget.reservation-plan @ budget.ts:checkReserved: a plan's reservation is made in the command that confirms plan ${d.plan_id}":
    { violations: () => forge(11, [reserve('res-P9', 1, 'P9', null)]), seq: 12 },
  'budget.reservation-plan @ budget.ts:checkReserved: project.query costs ${queryCost(s)} in this investigation, not ${d.amount}':
    {
      violations: () => forge(12, [responded(2), confirm(2, 'P2'), reserve('res-P2', 2, 'P2', null)]),
      seq: 15
    },
  'budget.settle-open @ budget.ts:checkSettled: reservation ${d.reservation_id} is not open': {
    violations: () => forge(17, [consumed('res-P2', 1)]),
    seq: 18
  },
  'budget.settle-open @ budget.ts:checkSettled: reservation ${d.reservation_id} holds ${open.amount}, not ${d.amount}':
    { violations: () => forge(15, [capture('res-P2', 'E4', PLAN_DIGEST), consumed('res-P2', 3)]), seq: 17 },
  'budget.settle-open @ budget.ts:checkSettled: budget is consumed by the capture of ${d.reservation_id}, in its command':
    { violations: () => forge(15, [consumed('res-P2', 1)]), seq: 16 },
  'budget.release-reason @ budget.ts:checkSettled: a release as refused follows the failed query of ${d.reservation_id} (written by system)':
    { violations: () => forge(15, [released('res-P2', 1, 'refused')]), seq: 16 },
  "budget.release-reason @ budget.ts:checkSettled: a release as cancelled follows an operator's PlanCancelled of ${d.reservation_id}":
    {
      violations: () =>
        forge(15, [
          { type: 'PlanCancelled', actor: 'operator', data: { reservation_id: 'res-P2', plan_id: 'P2', reason: 'r' } },
          released('res-P2', 1, 'cancelled')
        ]),
      seq: 17
    },
  'budget.top-up @ budget.ts:checkToppedUp: a top-up needs a running investigation; the case is ${c.s.state}': {
    violations: () => forge(25, [{ type: 'BudgetToppedUp', actor: 'operator', data: { amount: 5, reason: 'more' } }]),
    seq: 26
  },
  'budget.top-up @ budget.ts:checkToppedUp: a top-up gives its reason': {
    violations: () => forge(21, [{ type: 'BudgetToppedUp', actor: 'operator', data: { amount: 5, reason: '  ' } }]),
    seq: 22
  },
  'lifecycle.phase @ lifecycle.ts:investigating: ${c.e.type} is an investigation action; the case is ${c.s.state}': {
    violations: () =>
      forge(
        7,
        [request(1, 'interpretation')],
        [
          responded(1),
          { type: 'HypothesisProposed', actor: 'model', data: { hypothesis_id: 'H1', statement: 's', evidence: [] } }
        ]
      ),
    seq: 10
  },
  'lifecycle.phase @ turn.ts:checkInterpretation: an interpretation while the case is ${c.s.state}': {
    violations: () =>
      forge(
        11,
        [request(2)],
        [responded(2), { type: 'InterpretationRecorded', actor: 'model', data: { turn: 2, summary: 'again' } }]
      ),
    seq: 14
  },
  'lifecycle.start-revision @ lifecycle.ts:checkStart: an investigation starts from a completed revision; there is none':
    {
      violations: () => {
        const fold = ruleFold()
        const s = right(
          sealEvent(
            { type: 'InvestigationStarted', actor: 'controller', data: at(6).data },
            { seq: 1, prev: at(1).prev, id: 'x', at: '2026-11-30T10:00:00.000Z', commandId: 'c' }
          )
        )
        return fold.feed(s.event)
      },
      seq: 1
    },
  'lifecycle.start-revision @ lifecycle.ts:checkStart: the investigation starts from revision ${e.data.revision}, but the latest completed revision is ${latest.revision}':
    {
      violations: () =>
        forge(5, [
          { type: 'InvestigationStarted', actor: 'controller', data: { ...started, revision: 2 } },
          checkpoint(1, 'INTERPRETING')
        ]),
      seq: 6
    },
  "research.request @ budget.ts:checkReserved: an operator query's reservation names the digest of its request": {
    violations: () => forge(17, [reserve('res-op', 1, null, null)]),
    seq: 18
  },
  'research.request @ budget.ts:checkReserved: the request reservation ${d.reservation_id} records is not the one its request_digest names: a refusal would show another query than was asked':
    {
      violations: () => {
        const r = reserve('res-op', 1, null, PLAN_DIGEST)
        return forge(17, [{ ...r, data: { ...(r.data as object), request: { kind: 'source.files', text: 'x' } } }])
      },
      seq: 18
    },
  "research.request @ budget.ts:checkReserved: plan ${d.plan_id}'s request is the one its PlanConfirmed holds; its reservation records none":
    {
      violations: () => {
        const r = reserve('res-P9', 1, 'P9', null)
        return forge(17, [{ ...r, data: { ...(r.data as object), request: SMART_QUERY } }])
      },
      seq: 18
    },
  'research.request @ research.ts:checkCapture: <problem>': {
    violations: () => forge(15, [capture('res-P2', 'E5', sha256Digest('another request')), consumed('res-P2', 1)]),
    seq: 16
  },
  'research.reservation @ research.ts:checkCapture: a capture belongs to an open reservation; ${d.reservation_id} is not open':
    { violations: () => forge(17, [capture('res-none', 'E5', PLAN_DIGEST), consumed('res-none', 1)]), seq: 18 },
  'research.reservation @ research.ts:checkFailed: a failed query belongs to an open reservation; ${d.reservation_id} is not open':
    {
      violations: () =>
        forge(17, [
          {
            type: 'ResearchFailed',
            actor: 'system',
            data: { reservation_id: 'res-none', code: 'X', message: 'm', unavailable: false }
          },
          released('res-none', 1, 'refused')
        ]),
      seq: 18
    },
  'research.cancel @ research.ts:checkCancelled: reservation ${d.reservation_id} is not open': {
    violations: () => forge(17, [cancel('res-P2', 'P2', 'r'), released('res-P2', 1, 'cancelled', 'operator')]),
    seq: 18
  },
  "research.cancel @ research.ts:checkCancelled: reservation ${d.reservation_id} belongs to ${open.plan_id ?? 'an operator query'}, not ${d.plan_id ?? 'an operator query'}":
    {
      violations: () => forge(15, [cancel('res-P2', 'P9', 'r'), released('res-P2', 1, 'cancelled', 'operator')]),
      seq: 16
    },
  'research.cancel @ research.ts:checkCancelled: a cancellation gives its reason': {
    violations: () => forge(15, [cancel('res-P2', 'P2', '  '), released('res-P2', 1, 'cancelled', 'operator')]),
    seq: 16
  },
  'research.from-case @ budget.ts:checkReserved: plan ${d.plan_id} asks what ${known} answers: an identical query is answered from the case, not reserved and run again':
    { violations: () => forge(18, [responded(3), confirm(3, 'P3'), reserve('res-P3', 1, 'P3', null)]), seq: 21 },
  'turn.request @ turn.ts:checkRequest: turn ${d.turn} follows turn ${s.turn}; it must be ${s.turn + 1}': {
    violations: () => forge(11, [request(5)]),
    seq: 12
  },
  'turn.request @ turn.ts:checkRequest: plan ${s.pendingPlan.plan_id} waits to be carried out before the model is asked again':
    { violations: () => forge(15, [request(3)]), seq: 16 },
  "turn.request @ turn.ts:checkRequest: no model turn while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}":
    { violations: () => forge(25, [request(5)]), seq: 26 },
  'turn.request @ turn.ts:checkRequest: a ${d.phase} prompt while the case is ${s.state}': {
    violations: () => forge(11, [request(2, 'interpretation')]),
    seq: 12
  },
  'turn.ids @ turn.ts:checkPlan: the plan of turn ${d.turn} is P${d.turn}, not ${d.plan_id}': {
    violations: () => forge(12, [responded(2), confirm(2, 'P9'), reserve('res-P9', 1, 'P9', null)]),
    seq: 14
  },
  'turn.ids @ turn.ts:checkProposed: the next hypothesis is ${want}, not ${c.e.data.hypothesis_id}': {
    violations: () => forge(18, [responded(3), proposed('H2')]),
    seq: 20
  },
  'turn.ids @ turn.ts:checkLabTest: the next lab test request is ${want}, not ${c.e.data.request_id}': {
    violations: () =>
      forge(
        11,
        [request(2)],
        [
          responded(2),
          { type: 'LabTestRequested', actor: 'model', data: { request_id: 'L2', description: 'd' } },
          checkpoint(3, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume_state: 'INVESTIGATING' })
        ]
      ),
    seq: 14
  },
  'turn.plan @ turn.ts:checkPlan: the plan is not a valid project.query: ${q.left.message}': {
    violations: () =>
      forge(12, [responded(2), confirm(2, 'P2', { kind: 'no.such' }), reserve('res-P2', 1, 'P2', null)]),
    seq: 14
  },
  "turn.plan @ turn.ts:checkPlan: source.context is not part of this investigation's contract": {
    violations: () =>
      forge(12, [
        responded(2),
        confirm(2, 'P2', { kind: 'source.context', text: 'SPELL_WOLPERTINGER_NET' }),
        reserve('res-P2', 1, 'P2', null)
      ]),
    seq: 14
  },
  "turn.decision @ turn.ts:decision: ${c.e.type} is a model decision: it is recorded with the model's answer of the current turn (${c.s.turn})":
    { violations: () => forge(21, [proposed('H2')]), seq: 22 },
  'turn.decision @ turn.ts:decision: one answer makes one decision; ${c.e.type} is a second one': {
    violations: () => forge(18, [responded(3), proposed('H1'), proposed('H2')]),
    seq: 21
  },
  'turn.decision @ turn.ts:decision: ${c.e.type} names turn ${answerTurn}, but answers turn ${first.data.turn}': {
    violations: () => forge(12, [responded(2), confirm(3, 'P3'), reserve('res-P3', 1, 'P3', null)]),
    seq: 14
  },
  "turn.answer @ turn.ts:checkAnswer: ${e.type} of turn ${d.turn} answers no open request (${s.openTurn === null ? 'none is open' : `turn ${s.openTurn.turn} is open`})":
    { violations: () => forge(17, [responded(3)]), seq: 18 },
  'turn.answer @ turn.ts:checkAnswer: ${e.type} begins the command that records the answer': {
    violations: () =>
      forge(12, [{ type: 'NoteRecorded', actor: 'operator', data: { text: 'n', format: 'plain' } }, responded(2)]),
    seq: 14
  },
  "turn.answer @ turn.ts:checkAnswer: ${e.type} while the case is ${s.state}${s.reason === null ? '' : ` / ${s.reason}`}: no model is asked then":
    {
      violations: () =>
        forge(
          11,
          [request(2)],
          [checkpoint(3, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume_state: 'INVESTIGATING' })],
          [responded(2)]
        ),
      seq: 14
    },
  'turn.plan @ turn.ts:checkPlan: plan ${s.pendingPlan.plan_id} is still pending': {
    violations: () => forge(12, [responded(2), confirm(2, 'P2'), reserve('res-P2', 1, 'P2', null), confirm(2, 'P3')]),
    seq: 16
  },
  'reference.hypothesis @ turn.ts:checkUpdated: hypothesis ${c.e.data.hypothesis_id} does not exist': {
    violations: () =>
      forge(22, [
        responded(4),
        {
          type: 'HypothesisUpdated',
          actor: 'model',
          data: { hypothesis_id: 'H7', status: 'supported', evidence: ['E4'], note: 'n' }
        }
      ]),
    seq: 24
  },
  "reference.hypothesis @ turn.ts:checkConclusion: the conclusion cites hypotheses that do not exist: ${unknown.slice(0, 5).join(', ')}":
    {
      violations: () =>
        forge(22, [
          responded(4),
          { type: 'ConclusionRecorded', actor: 'model', data: { summary: 's', hypotheses: ['H7'], evidence: ['E4'] } },
          checkpoint(3, 'CONCLUDED')
        ]),
      seq: 24
    },
  'reference.lab @ reference.ts:checkFeedback: lab test request ${c.e.data.request_id} does not exist': {
    violations: () => forge(21, [feedback('L9')]),
    seq: 22
  },
  'reference.lab @ reference.ts:checkFeedback: feedback for ${c.e.data.request_id} is recorded already': {
    violations: () =>
      forge(
        11,
        [request(2)],
        [
          responded(2),
          { type: 'LabTestRequested', actor: 'model', data: { request_id: 'L1', description: 'd' } },
          checkpoint(3, 'BLOCKED', { reason: 'AWAITING_TEST_FEEDBACK', resume_state: 'INVESTIGATING' })
        ],
        [feedback('L1'), checkpoint(4, 'INVESTIGATING')],
        [feedback('L1')]
      ),
    seq: 18
  },
  'revision.inputs-digest @ revision.ts:checkInputs: inputs_digest is not the digest of the recorded inputs index': {
    violations: () =>
      forge(25, [
        {
          type: 'InputsRecorded',
          actor: 'operator',
          data: { ...(at(1).data as object), revision: 2, inputs_digest: sha256Digest('x') }
        }
      ]),
    seq: 26
  },
  'revision.inputs-digest @ revision.ts:checkInputs: revision ${same.revision} holds these inputs already and is not completed; the same inputs make a new revision only once it is (prepared again)':
    {
      violations: () =>
        forge(1, [{ type: 'InputsRecorded', actor: 'operator', data: { ...(at(1).data as object), revision: 2 } }]),
      seq: 2
    },
  "revision.open @ revision.ts:checkEnrichment: revision ${d.revision} is ${r === undefined ? 'unknown' : r.completed ? 'completed already' : 'not the latest'}; enrichment belongs to the latest open revision":
    { violations: () => forge(25, [{ type: 'EnrichmentCaptured', actor: 'system', data: at(2).data }]), seq: 26 },
  "revision.open @ revision.ts:checkCompleted: revision ${d.revision} is ${r === undefined ? 'unknown' : 'completed already'}":
    { violations: () => forge(25, [{ type: 'RevisionCompleted', actor: 'system', data: at(5).data }]), seq: 26 },
  'research.from-case @ research.ts:checkFromCase: <problem>': {
    // Turn 3 asks again what E4 answers, and the answer from the case names E2.
    violations: () =>
      forge(18, [
        responded(3),
        confirm(3, 'P3'),
        {
          type: 'QueryAnsweredFromCase',
          actor: 'system',
          data: { plan_id: 'P3', request_digest: PLAN_DIGEST, evidence_id: 'E2', capture: E4_CAPTURE }
        }
      ]),
    seq: 21
  },
  // The object checks: forged on disk, read back by verifyCase.
  'research.capture-object @ objects.ts:checkObligations: object ${ob.ref.digest} is not a capture': {
    violations: onDisk(
      operatorCapture(
        (f) => f.object(json({ not: 'a capture' }), 'application/vnd.vba.capture+json'),
        'database.rows',
        OTHER_DIGEST
      )
    ),
    seq: 23
  },
  'research.capture-object @ objects.ts:checkObligations: the capture is a ${c.kind}, recorded as ${ob.queryKind}': {
    violations: onDisk(operatorCapture(() => E4_CAPTURE, 'database.count', PLAN_DIGEST)),
    seq: 23
  },
  "research.capture-object @ objects.ts:checkObligations: the capture's request does not have the recorded request digest":
    { violations: onDisk(operatorCapture(() => E4_CAPTURE, 'database.rows', OTHER_DIGEST)), seq: 23 },
  'revision.facts @ objects.ts:checkFacts: object ${ob.ref.digest} is not the facts document of revision ${ob.revision}':
    { violations: onDisk(revisionTwo(Buffer.from('not json'), { fact_count: 0, complete: true })), seq: 27 },
  'revision.facts @ objects.ts:checkFacts: the facts hold exactly one project_context_coverage fact': {
    violations: onDisk(revisionTwo(factsOf({ fact_id: 'F1', type: 'entity' }), { fact_count: 1, complete: true })),
    seq: 27
  },
  'revision.facts @ objects.ts:checkFacts: the revision says ${ob.factCount} facts, its document has ${facts.length}': {
    violations: onDisk(revisionTwo(factsOf(COVERAGE), { fact_count: 2, complete: true })),
    seq: 27
  },
  'revision.facts @ objects.ts:checkFacts: the revision says complete=${ob.complete}, its coverage fact says ${claimed}':
    {
      violations: onDisk(revisionTwo(factsOf({ ...COVERAGE, complete: false }), { fact_count: 1, complete: true })),
      seq: 27
    },
  'revision.provenance @ objects.ts:checkFacts: a fact points into ${p.capture.slice(0, 20)}…, which is not a capture of this case':
    {
      violations: onDisk(
        revisionTwo(
          factsOf(
            { fact_id: 'F1', type: 'entity', provenance: { capture: OTHER_DIGEST, pointer: '/result' } },
            COVERAGE
          ),
          { fact_count: 2, complete: true }
        )
      ),
      seq: 27
    },
  'revision.provenance @ objects.ts:checkFacts: pointer ${p.pointer} does not resolve in capture ${p.capture.slice(0, 20)}…':
    {
      violations: onDisk(
        revisionTwo(
          factsOf(
            { fact_id: 'F1', type: 'entity', provenance: { capture: E1_CAPTURE.digest, pointer: '/result/rows/99' } },
            COVERAGE
          ),
          { fact_count: 2, complete: true }
        )
      ),
      seq: 27
    }
}

/** Sites with no forged case yet (printed by the test; a case added for one takes it off). */
const GAPS: readonly string[] = []

// ---------------------------------------------------------------------------------------------
const table = suite('the table of rule sites')

table('the sites are read from the rule modules: every rule of ids.ts has at least one', async () => {
  const { RULES } = await import('../../src/domain/rules.js')
  assert.equal(
    [...byRule.keys()].filter((r) => !(r in RULES)),
    [],
    'every site checks a known rule'
  )
  assert.ok(MULTI.length >= 40, `${MULTI.length} sites of rules checked in more than one place`)
  const keys = SITES.map(keyOf)
  assert.is(new Set(keys).size, keys.length, 'each site has its own key')
})

table('each site of a rule checked in several places has a forged case, or is a listed gap', () => {
  const keys = new Set(MULTI.map(keyOf))
  assert.equal(
    Object.keys(CASES).filter((k) => !SITES.some((s) => keyOf(s) === k)),
    [],
    'every case names a site that exists'
  )
  const missing = [...keys].filter((k) => !(k in CASES))
  assert.equal(missing.sort(), [...GAPS].sort(), 'the gaps are exactly the sites without a case')
  if (GAPS.length > 0) console.log(`rule sites without a forged case (${GAPS.length}):\n  ${GAPS.join('\n  ')}`)
})

table.run()

const sites = suite('every listed site fires on its own forgery')
for (const [key, c] of Object.entries(CASES)) {
  sites(key, async () => {
    const site = SITES.find((s) => keyOf(s) === key)
    if (site === undefined) throw new Error(`no site ${key}`)
    const v = await c.violations()
    const here = v.filter((x) => x.rule === site.rule && x.seq === c.seq)
    assert.ok(here.length > 0, `expected ${site.rule} at seq ${c.seq}, got ${JSON.stringify(v)}`)
    assert.ok(
      here.some((x) => site.pattern.test(x.message)),
      `${site.rule} fired at seq ${c.seq}, but not at this site: ${JSON.stringify(here.map((x) => x.message))}`
    )
    const others = (byRule.get(site.rule) ?? []).filter((s) => s !== site && s.pattern.source !== site.pattern.source)
    for (const x of here.filter((y) => site.pattern.test(y.message)))
      assert.not.ok(
        others.some((o) => o.pattern.test(x.message) && !site.pattern.test(x.message)),
        `${x.message} could be another site's`
      )
  })
}
sites.run()
